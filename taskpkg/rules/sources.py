"""ARENA5xx and ARENA6xx: the sources of verifier.py and oracle/."""

from __future__ import annotations

from taskpkg.diagnostics import Severity
from taskpkg.rules.examples import Append, Keep, Replace, Write, example
from taskpkg.rules.rule import Category, Message, Rule, one

STATIC, E, W = Category.STATIC, Severity.ERROR, Severity.WARNING
VERIFIER, TASK = "verifier.py", "task.md"
_WRITES_REWARD = 'Path(os.environ["ARENA_OUTPUT"]).write_text(json.dumps(score()))'

ARENA501 = Rule(
    "ARENA501", STATIC, E, "verifier.py is not valid Python",
    doc="verifier.py is read as Python before anything else is checked in it; a syntax error fails every episode.",
    advice="Fix the syntax error at the line shown.",
    messages=one("verifier.py is not valid Python: {problem}",
                 "Fix the syntax; `python3 -m py_compile verifier.py` shows it."),
    failing=example(Append(VERIFIER, "def broken(:\n")),
    passing=example(Keep(VERIFIER, "def score() -> dict:")),
)

ARENA502 = Rule(
    "ARENA502", STATIC, E, "verifier reads the transcript or agent logs",
    doc="A verifier judges the final state of the world, never what the agent said or ran: a model trained on a "
        "transcript-reading verifier learns to talk, not to do. Scripts and Python files in `verifier.data` that "
        "name where the agent's logs are kept (`/logs/agent/`, `.bash_history`, ...) are checked too.",
    advice="Judge the final state in `/workspace`, never the transcript or agent logs.",
    messages={
        "": Message("verifier.py refers to {text}: a verifier judges the final state, never the transcript",
                    "Check the files the task asks for instead of what the agent said or ran."),
        "script": Message("{path} reads the agent's logs ({where}): a verifier judges the final state, never the "
                          "transcript", "Check the files the task asks for instead of what the agent said or ran."),
    },
    failing=example(Append(VERIFIER, "LOG = '/logs/agent/transcript.jsonl'\n")),
    passing=example(Keep(VERIFIER, 'answer = Path(os.environ.get("ARENA_WORKSPACE", "/workspace")) / "answer.txt"')),
)

ARENA503 = Rule(
    "ARENA503", STATIC, E, "verifier uses the network",
    doc="The verifier runs with no network. Importing a network module means it either fails or wants to fetch "
        "what it should compute.",
    advice="Remove network use; the verifier runs with no network.",
    messages=one("verifier.py imports {module}, a network module; the verifier runs without a network",
                 "Score the final state from files in the container only."),
    failing=example(Replace(VERIFIER, "import sys\n", "import sys\nimport urllib.request\n"),
                    Append(VERIFIER, "OFFICIAL = urllib.request.urlopen  # to fetch the expected answer\n")),
    passing=example(Keep(VERIFIER, "import json")),
)

ARENA504 = Rule(
    "ARENA504", STATIC, E, "verifier installs packages",
    doc="Installing at verification time needs a network the verifier does not have, and makes scores depend on "
        "what a registry serves that day. Scripts in `verifier.data` are checked too.",
    advice="Do not install packages at verification time; put what you need in the image.",
    messages={
        "verifier": Message("verifier.py {what}: verifiers must not install packages",
                            "Install what the verifier needs in the image (pinned), or use the standard library."),
        "script": Message("{path} installs packages at verification time: {command}",
                          "Install what the tests need in environment/Dockerfile (pinned); the verifier has no "
                          "network."),
        "script_packages": Message("{path} installs packages at verification time: {command}",
                                   "Install them in the image instead, pinned: add `{dockerfile_line}` to "
                                   "environment/Dockerfile and delete this line (the verifier has no network)."),
    },
    failing=example(Replace(VERIFIER, "import os\n", "import os\nimport subprocess\n"),
                    Append(VERIFIER, "subprocess.run(['pip', 'install', 'numpy'])\n")),
    passing=example(Keep(VERIFIER, "from generate import build_instance")),
)

ARENA505 = Rule(
    "ARENA505", STATIC, E, "verifier never writes the reward",
    doc="The arena reads the reward from the file named by `ARENA_OUTPUT`; a verifier that never mentions it cannot "
        "write one there.",
    advice="Write `{\"reward\": ...}` to the path in `ARENA_OUTPUT` on every path through the verifier.",
    messages=one("verifier.py never mentions {variable}, so it cannot write the reward where the arena reads it",
                 'Write {{"reward": r, "details": {{...}}}} as JSON to os.environ["{variable}"].'),
    failing=example(Replace(VERIFIER, 'os.environ["ARENA_OUTPUT"]', '"/tmp/reward.json"',
                            shown='Path("/tmp/reward.json").write_text(json.dumps(score()))')),
    passing=example(Keep(VERIFIER, _WRITES_REWARD)),
)

ARENA506 = Rule(
    "ARENA506", STATIC, W, "verifier runs or imports files from the workspace",
    doc="The agent can rewrite anything in the workspace, so a verifier that runs a script from it, loads code from "
        "it (`runpy`, `exec`, importlib's file loaders) or adds it to the import path hands the agent its verdict. "
        "Read on the syntax tree: a path is the workspace's when it starts with `/workspace` or comes from "
        "`ARENA_WORKSPACE`, through assignments. The dynamic check ARENA712 confirms it by planting code there.",
    advice="Read workspace files as data only; run and import only what the verifier brings (its own folder, its "
           "data) or the image holds.",
    messages=one("verifier.py {what}: `{code}`; the agent can rewrite what it runs",
                 "Read the workspace's files as data (open, json.load, csv) and judge them in verifier.py; never "
                 "execute or import them."),
    failing=example(Replace(VERIFIER, "import os\n", "import os\nimport subprocess\n"),
                    Replace(VERIFIER, "    text = answer.read_bytes()",
                            '    subprocess.run(["sh", str(answer.parent / "check.sh")], check=False)\n'
                            "    text = answer.read_bytes()")),
    passing=example(Keep(VERIFIER, "    text = answer.read_bytes()[:100]")),
)

ARENA601 = Rule(
    "ARENA601", STATIC, E, "oracle entrypoint missing or unsupported",
    doc="`oracle.entrypoint` names the script in `oracle/` that solves an instance: a `.sh` file (run with sh) or a "
        "`.py` file (run with python3).",
    advice="Name an existing `.sh` or `.py` file inside `oracle/` as `oracle.entrypoint`.",
    messages={
        "missing": Message("oracle.entrypoint '{entry}' is not a file in oracle/",
                           "Add oracle/{entry} or point oracle.entrypoint at the script that solves the task."),
        "kind": Message("oracle.entrypoint '{entry}' is neither a .sh nor a .py file",
                        "Use a shell script (run with sh) or a Python file (run with python3)."),
    },
    failing=example(Replace(TASK, "entrypoint: solve.sh", "entrypoint: run.sh")),
    passing=example(Keep(TASK, "entrypoint: solve.sh")),
)

ARENA602 = Rule(
    "ARENA602", STATIC, E, "oracle only copies or echoes an answer",
    doc="The oracle proves each instance solvable by solving it. One that only copies or prints prepared content "
        "proves nothing, and a fixed answer is wrong for generated instances.",
    advice="Make the oracle solve the task from the instance's files, not copy a stored answer.",
    messages=one("oracle/{entry} only copies or prints prepared content; it proves nothing about solvability, and a "
                 "fixed answer is wrong for generated instances",
                 "Make the oracle compute the answer from the instance's files, the way an agent would."),
    failing=example(Write("oracle/solve.sh", '#!/bin/sh\ncp "$(dirname "$0")/answer.txt" answer.txt\n')),
    passing=example(Keep("oracle/solve.py",
                         'total = sum(int(line) for line in Path("numbers.txt").read_text().split())')),
)

ARENA603 = Rule(
    "ARENA603", STATIC, W, "oracle ships data files",
    doc="Data files in `oracle/` are usually prepared answers: they cannot solve new instances, and they can leak.",
    advice="Derive what the oracle needs from the instance; shipped answers can leak.",
    messages=one("oracle/{name} is a data file; an oracle that reads prepared answers cannot solve new instances",
                 "Compute answers in the oracle's code from the instance files instead."),
    failing=example(Write("oracle/answer.txt", "42\n")),
    passing=example(Write("oracle/README.md", "solve.py sums numbers.txt.\n")),
)
