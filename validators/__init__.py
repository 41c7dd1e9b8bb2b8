"""Validation of task packages: static checks (no Docker) and, with the sandbox, dynamic checks."""
