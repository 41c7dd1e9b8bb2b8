"""ARENA301: unseeded randomness, clock reads and random ids in the generator and the verifier, found on the syntax
tree through whatever names the file imports them under; timing a step is not data."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.packages import make_valid_package
from validators.static import run_static_checks
from validators.static.determinism import may_be_nondeterministic, scan

FLAGGED = {
    "import random\nrandom.shuffle(rows)": ("global", "random.shuffle()"),
    "from random import choice as pick\nx = pick(names)": ("global", "random.choice()"),
    "import random as r\nrng = r.Random()": ("unseeded", "random.Random()"),
    "from random import Random\nrng = Random(None)": ("unseeded", "random.Random()"),
    "import numpy as np\nnp.random.shuffle(a)": ("global", "numpy.random.shuffle()"),
    "import numpy as np\ng = np.random.default_rng()": ("unseeded", "numpy.random.default_rng()"),
    "import random\nsecret = random.SystemRandom(4).random()": ("system", "random.SystemRandom()"),
    "import os\nsalt = os.urandom(8)": ("system", "os.urandom()"),
    "import secrets\ntoken = secrets.token_hex(8)": ("system", "secrets.token_hex()"),
    "import time\nstamp = int(time.time())": ("clock", "time.time()"),
    "from time import time\nstamp = time()": ("clock", "time.time()"),
    "import datetime\nday = datetime.date.today()": ("clock", "datetime.date.today()"),
    "from datetime import datetime\nnow = datetime.now().isoformat()": ("clock", "datetime.datetime.now()"),
    "import datetime as dt\nnow = dt.datetime.utcnow()": ("clock", "datetime.datetime.utcnow()"),
    "import time\nlabel = time.strftime('%Y')": ("clock", "time.strftime()"),
    "import uuid\nticket = str(uuid.uuid4())": ("uuid", "uuid.uuid4()"),
    "from uuid import uuid1\nticket = uuid1()": ("uuid", "uuid.uuid1()"),
    "seed = hash('clinic')": ("hash", "hash()"),
}

CLEAN = {
    "seeded generator": "import random\nrng = random.Random(f'x/{index}')\nrng.shuffle(rows)",
    "global seeded first": "import random\nrandom.seed(index)\nrandom.shuffle(rows)",
    "seeded numpy": "import numpy as np\ng = np.random.default_rng(index)",
    "timing a step": "import time\nstart = time.time()\nwork()\nelapsed = time.time() - start",
    "monotonic clock": "import time\nt = time.monotonic()\nprint(t)",
    "fixed dates": "import datetime\nday = datetime.date(2024, 1, 1) + datetime.timedelta(days=rng.randint(0, 9))",
    "clock with a given time": "import time\ntext = time.strftime('%Y', time.gmtime(0))",
    "name-based uuid": "import uuid\nticket = uuid.uuid5(uuid.NAMESPACE_DNS, 'x')",
    "a method named like a module function": "rows.shuffle()\nself.rng.choice(names)\ntoday = cal.today()",
    "a local hash function": "from mylib import hash\nh = hash('x')",
}


@pytest.mark.parametrize("source", sorted(FLAGGED))
def test_each_kind_is_found_with_the_call_named(source: str) -> None:
    assert [(case, call) for _, case, call in scan(ast.parse(source))] == [FLAGGED[source]]
    assert may_be_nondeterministic(source)  # the textual pre-check lets it through to the syntax tree


IMPORTS = ["import random", "import random as r", "if True: import uuid", "x = 1; import time",
           "from random import shuffle, Random", "import time", "from time import time as now",
           "import datetime as dt", "from datetime import datetime, date", "import uuid", "from uuid import uuid4",
           "import numpy as np", "from numpy import random as npr", "import os", "import secrets",
           "from mylib import hash"]
CALLS = ["random.shuffle(x)", "r.Random()", "r.Random(7)", "shuffle(x)", "Random(None)", "Random(seed)", "time.time()",
         "now()", "t = time.time() - start", "dt.date.today()", "dt.time(1)", "datetime.now()", "date(2024, 1, 1)",
         "uuid.uuid4()", "uuid.uuid5(ns, 'x')", "uuid4()", "np.random.shuffle(a)", "np.random.default_rng()",
         "npr.default_rng(3)", "os.urandom(4)", "os.path.join('a')", "secrets.choice(x)", "hash('x')",
         "rng.shuffle(x)", "x = cal.today()"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(IMPORTS), max_size=4), st.lists(st.sampled_from(CALLS), min_size=1, max_size=4))
def test_the_pre_check_never_hides_a_finding(imports: list[str], calls: list[str]) -> None:
    source = "\n".join([*imports, "", "def f(x, a, ns, rng, cal, start, seed):", *(f"    {c}" for c in calls)])
    if scan(ast.parse(source)):
        assert may_be_nondeterministic(source), source


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_deterministic_code_is_not_flagged(name: str) -> None:
    assert scan(ast.parse(CLEAN[name])) == []


def test_a_stamp_kept_from_the_clock_is_data_even_when_also_subtracted() -> None:
    source = "import time\nstart = time.time()\nprint(start)\nelapsed = time.time() - start"
    assert [(line, case) for line, case, _ in scan(ast.parse(source))] == [(2, "clock")]


def test_generator_helpers_and_verifier_are_watched_with_their_lines(tmp_path: Path) -> None:
    package = make_valid_package(tmp_path / "environments")
    helper = "import uuid\n\n\ndef ticket() -> str:\n    return str(uuid.uuid4())\n"
    (package / "instance" / "names.py").write_text(helper)
    verifier = package / "verifier.py"
    verifier.write_text(verifier.read_text().replace("import json\n", "import json\nimport time\n").replace(
        '    return {"reward": 1.0, "details": {"reason": "correct"}}',
        '    return {"reward": 1.0, "details": {"reason": "correct", "at": time.time()}}'))
    (package / "oracle" / "solve.py").write_text((package / "oracle" / "solve.py").read_text()
                                                 + "import random\nrandom.random()\n")  # the oracle is not watched
    found = [(d.file, d.line, d.severity.value) for d in run_static_checks(package).diagnostics
             if d.check_id == "ARENA301"]
    verifier_line = next(n for n, line in enumerate(verifier.read_text().split("\n"), 1) if "time.time()" in line)
    assert found == [("instance/names.py", 5, "warning"), ("verifier.py", verifier_line, "warning")]
