"""The `arena` command line: the one entry point for contributors, CI, the bot and operators."""
