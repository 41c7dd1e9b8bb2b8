"""ARENA3xx: the instance generator, and what must be as deterministic as it (the verifier regenerates from it)."""

from __future__ import annotations

from taskpkg.diagnostics import Severity
from taskpkg.rules.examples import Keep, Replace, example
from taskpkg.rules.rule import Category, Message, Rule

STATIC, W = Category.STATIC, Severity.WARNING
GENERATOR = "instance/generate.py"
_SEEDED = "    rng = random.Random(f\""
_FIX = ("Draw every random choice from `rng = random.Random(seed)` with the seed derived from ARENA_INSTANCE, and "
        "take dates and ids from rng too, so the same instance is made byte for byte every time.")

ARENA301 = Rule(
    "ARENA301", STATIC, W, "unseeded randomness, clock or uuid in the generator or verifier",
    doc="An instance must be the same files and prompt values every time it is made from `ARENA_INSTANCE`, and the "
        "verifier must judge it the same way each time. Python's shared `random` generator (`random.shuffle`, "
        "`random.choice`, ... with no `random.seed(x)` in the file), `random.Random()` without a seed, "
        "`SystemRandom`, `secrets`, `os.urandom`, the clock (`time.time()`, `datetime.now()`, `date.today()`), "
        "`uuid1`/`uuid4` and `hash()` of text (salted per process) differ between runs. Timing a step "
        "(`time.time() - start`) is fine. A warning: the dynamic check ARENA704 proves it on a real run.",
    advice="Derive every random choice, date and id from a `random.Random(seed)` seeded by `ARENA_INSTANCE`.",
    messages={
        "global": Message("{call} draws from Python's shared random generator, seeded differently in every run",
                          _FIX),
        "unseeded": Message("{call} makes a random generator without a seed, so it differs in every run", _FIX),
        "system": Message("{call} reads the operating system's randomness, which can never be repeated", _FIX),
        "clock": Message("{call} reads the clock: the data differs with the time it is made", _FIX),
        "uuid": Message("{call} makes a different id in every run",
                        "Derive ids from rng (`uuid.UUID(int=rng.getrandbits(128))`) or from the instance's data."),
        "hash": Message("{call} of text is salted differently in every Python process",
                        "Use a stable digest (`hashlib.sha256(text.encode()).hexdigest()`) or the value itself."),
    },
    failing=example(Replace(GENERATOR, "    numbers = build_instance(int(os.environ[\"ARENA_INSTANCE\"]))",
                            "    numbers = build_instance(int(os.environ[\"ARENA_INSTANCE\"]))\n"
                            "    random.shuffle(numbers)  # the files differ between runs; the sum does not")),
    passing=example(Keep(GENERATOR, _SEEDED)),
)
