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
TRAIN_EPILOG = (
    "Exit codes: 0 trained (an adapter was written); 1 the package is at fault, training stopped (the pre-flight found "
    "no signal, verifier or setup errors on most of eight consecutive rollouts) or it ended no_effective_update (no "
    "group's rewards differed, no gradient, no LoRA tensor moved: no adapter, never scored); 2 bad usage or a recipe "
    "that does not validate; 3 a prerequisite is missing (a GPU, the train extra, the model, an engine); 130 "
    "interrupted."
)
