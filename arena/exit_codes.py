"""Exit codes of the `arena` command, documented in README.md and in `arena --help`."""

from enum import IntEnum


class ExitCode(IntEnum):
    """What the process's exit status means."""

    OK = 0  # everything checked passed (warnings allowed)
    CHECK_FAILED = 1  # at least one package has an error
    USAGE = 2  # bad arguments or options (click's own convention)
    ENVIRONMENT = 3  # something the arena needs is missing (e.g. a Docker engine for dynamic checks)
    INTERRUPTED = 130  # stopped by Ctrl-C or SIGTERM; everything started was cleaned up


EPILOG = (
    "Exit codes: 0 passed; 1 a package has errors; 2 bad usage; 3 a required tool (e.g. Docker) is missing; "
    "130 interrupted."
)
