"""One instance: three or four checklist words chosen from ARENA_INSTANCE alone.

Run as ``python3 -I generate.py`` with ARENA_INSTANCE set: writes the checklist note (checklist.txt, the words on one
line, comma-separated) into ARENA_WORKSPACE and prints the prompt values as one JSON object (the words one a line,
as the answer wants them). ``words_for(index)`` is the pure function the verifier imports to regenerate the answer.
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

COUNT = 1000
# Short, common office words, each a single token-friendly lowercase word with letters only.
VOCABULARY = (
    "agenda",
    "archive",
    "badge",
    "binder",
    "budget",
    "calendar",
    "chair",
    "clipboard",
    "copier",
    "desk",
    "diary",
    "drawer",
    "envelope",
    "eraser",
    "folder",
    "form",
    "invoice",
    "journal",
    "keyboard",
    "label",
    "lamp",
    "ledger",
    "letter",
    "marker",
    "memo",
    "minutes",
    "monitor",
    "notebook",
    "notice",
    "paper",
    "pencil",
    "pen",
    "phone",
    "planner",
    "poster",
    "printer",
    "receipt",
    "report",
    "ruler",
    "scanner",
    "schedule",
    "scissors",
    "shelf",
    "stamp",
    "stapler",
    "sticker",
    "tape",
    "ticket",
    "timesheet",
    "tray",
    "voucher",
    "whiteboard",
)


def words_for(index: int) -> list[str]:
    """The instance's checklist: three or four distinct words, in order."""
    if not 0 <= index < COUNT:
        raise ValueError(f"instance index {index} out of range 0..{COUNT - 1}")
    rng = random.Random(f"word-list/{index}")
    return rng.sample(VOCABULARY, rng.randint(3, 4))


def main() -> None:
    """Write the checklist note for ARENA_INSTANCE into the workspace and print the prompt values."""
    words = words_for(int(os.environ["ARENA_INSTANCE"]))
    workspace = Path(os.environ.get("ARENA_WORKSPACE", "/workspace"))
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "checklist.txt").write_text("Checklist: " + ", ".join(words) + "\n", encoding="utf-8")
    sys.stdout.write(json.dumps({"words": "\n".join(words)}, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
