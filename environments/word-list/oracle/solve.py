"""Reference solution: read the checklist note in the workspace and write its words, one a line, to answer.txt.

Runs in the workspace and works only from its files, as an agent would (the oracle never sees the prompt).
"""

from __future__ import annotations

from pathlib import Path


def main() -> None:
    """Split the note's comma-separated words and write them in order."""
    note = Path("checklist.txt").read_text(encoding="utf-8")
    words = [word.strip() for word in note.split(":", 1)[1].split(",")]
    Path("answer.txt").write_text("\n".join(words) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
