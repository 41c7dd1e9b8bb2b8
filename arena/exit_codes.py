"""Exit codes of the `arena` command, documented in README.md and in `arena --help`."""

from enum import IntEnum


class ExitCode(IntEnum):
    """What the process's exit status means."""

    OK = 0  # everything checked passed (warnings allowed)
    CHECK_FAILED = 1  # at least one package has an error
    USAGE = 2  # bad arguments or options (click's own convention)
    ENVIRONMENT = 3  # something the arena needs is missing or failed (e.g. a Docker engine), or only the arena erred
    INTERRUPTED = 130  # stopped by Ctrl-C or SIGTERM; everything started was cleaned up


EPILOG = (
    "Exit codes: 0 passed; 1 a package has errors; 2 bad usage; 3 a required tool (e.g. Docker) is missing or failed, "
    "or only the arena's own checks failed; 130 interrupted."
)
