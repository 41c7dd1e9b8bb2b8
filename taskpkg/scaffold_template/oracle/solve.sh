#!/bin/sh
# The reference solution, run as the agent would be (in /workspace). TODO(arena): replace the example.
exec python3 "$(dirname "$0")/solve.py"
