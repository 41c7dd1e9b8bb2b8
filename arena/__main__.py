"""`python -m arena` runs the CLI."""

from arena.cli import main

main()
