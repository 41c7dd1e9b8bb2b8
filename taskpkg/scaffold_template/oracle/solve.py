"""Solve the example task from the workspace's files, as an agent would."""

from pathlib import Path

total = sum(int(line) for line in Path("numbers.txt").read_text().split())
Path("answer.txt").write_text(f"{total}\n")
