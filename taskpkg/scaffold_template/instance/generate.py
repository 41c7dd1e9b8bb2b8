"""Make one instance of the task from ARENA_INSTANCE (runs as root before the agent starts, then is deleted).

TODO(arena): replace the example with your generator. Keep it deterministic in ARENA_INSTANCE.
"""

import json
import os
import random
from pathlib import Path


def build_instance(index: int) -> list[int]:
    """The instance's data, from its index alone (the verifier calls this too)."""
    rng = random.Random(f"__ARENA_NAME__/{index}")
    return [rng.randint(-1000, 1000) for _ in range(rng.randint(20, 60))]


def main() -> None:
    """Write the instance's files into the workspace and print the prompt's values."""
    numbers = build_instance(int(os.environ["ARENA_INSTANCE"]))
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    (workspace / "numbers.txt").write_text("".join(f"{n}\n" for n in numbers))
    print(json.dumps({"count": len(numbers)}))


if __name__ == "__main__":
    main()
