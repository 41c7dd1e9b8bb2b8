"""ARENA7xx: the dynamic checks, which run the package in the sandbox on a Docker engine.

Their examples are changes to the base package that the test suite runs on a real engine (with the tamper probes
named, besides the core trials: the oracle, doing nothing, and the oracle again for determinism).
"""

from __future__ import annotations

from taskpkg.diagnostics import Severity
from taskpkg.rules.examples import Copy, Keep, Replace, example, situation
from taskpkg.rules.rule import Category, Message, Rule, one

DYNAMIC, E, W = Category.DYNAMIC, Severity.ERROR, Severity.WARNING
DOCKERFILE, TASK, VERIFIER = "environment/Dockerfile", "task.md", "verifier.py"
ORACLE, GENERATOR = "oracle/solve.py", "instance/generate.py"
_TAMPER_FIX = ("The verifier must check the task's result from regenerated inputs and must not trust anything the "
               "agent could write; see docs/SPEC.md.")

ARENA701 = Rule(
    "ARENA701", DYNAMIC, E, "image does not build within the build timeout",
    doc="The agent's image is built from `environment/` with no registry pulls beyond the base image; the build "
        "must succeed within `limits.build_timeout_s`.",
    advice="Fix the build error shown, and make the build finish within `limits.build_timeout_s`.",
    messages=one("{problem}\n{log}",
                 "Run `docker build environment/` to see the whole log; raise limits.build_timeout_s if the build "
                 "is slow but correct."),
    failing=example(Replace(DOCKERFILE, "WORKDIR /workspace", "RUN exit 3\nWORKDIR /workspace")),
    passing=example(Keep(DOCKERFILE, "WORKDIR /workspace")),
)

ARENA702 = Rule(
    "ARENA702", DYNAMIC, E, "oracle does not solve an instance within its limits",
    doc="The oracle is run as an agent on several instances spread over the whole range; it must score exactly 1 "
        "on each, within `limits.oracle_timeout_s` and the package's other limits. This is what proves the task "
        "solvable.",
    advice="Fix the oracle or the verifier until the oracle scores 1 on every instance tried "
           "(`arena run PATH --agent oracle`).",
    messages={
        "score": Message("the oracle scored {reward} on instance {instance}; details: {details}",
                         "The oracle must solve every instance; run `arena run PATH --agent oracle --instance "
                         "{instance}` to see the episode."),
        "exit": Message("the oracle scored {reward} on instance {instance} (it exited with status {status}: "
                        "{stderr}); details: {details}",
                        "The oracle must solve every instance; run `arena run PATH --agent oracle --instance "
                        "{instance}` to see the episode."),
        "timeout": Message("the oracle did not finish within limits.oracle_timeout_s ({limit} s) on instance "
                           "{instance}", "Speed the oracle up or raise oracle_timeout_s (at most agent_timeout_s)."),
        "storage": Message("{agent} on instance {instance}: {problem}",
                           "The oracle must solve the task within the limits: keep its files (and the instance's) "
                           "under limits.storage_mb, or raise it."),
    },
    failing=example(Replace(ORACLE, 'Path("answer.txt").write_text(f"{total}\\n")',
                            'Path("answer.txt").write_text(f"{total + 1}\\n")')),
    passing=example(Keep(ORACLE, 'Path("answer.txt").write_text(f"{total}\\n")')),
)

ARENA703 = Rule(
    "ARENA703", DYNAMIC, E, "doing nothing scores above the floor",
    doc="The untouched initial state of each instance is verified; an agent that does nothing must score 0, or "
        "training rewards doing nothing.",
    advice="Make the verifier give 0 to an untouched workspace (`arena run PATH --agent nop`).",
    messages=one("doing nothing scored {reward} on instance {instance} (floor {floor}); details: {details}",
                 _TAMPER_FIX),
    failing=example(Replace(VERIFIER, 'return {"reward": 0.0, "details": {"reason": "answer.txt is missing"}}',
                            'return {"reward": 1.0, "details": {"reason": "answer.txt is missing"}}')),
    passing=example(Keep(VERIFIER, 'return {"reward": 0.0, "details": {"reason": "answer.txt is missing"}}')),
)

ARENA704 = Rule(
    "ARENA704", DYNAMIC, E, "same instance, different result",
    doc="One instance is made and solved twice from scratch; the reward and the verifier's details must be "
        "identical, or training sees noise (the instance itself, its files and prompt values, is ARENA715's).",
    advice="Make the generator, oracle and verifier deterministic in `ARENA_INSTANCE` (no clock, no unseeded "
           "randomness).",
    messages=one("instance {instance} run twice gave different {what}: {first} vs {second}",
                 "Derive every random choice from ARENA_INSTANCE (random.Random(seed)), never from time, hash() or "
                 "the environment."),
    failing=example(Replace(VERIFIER, 'return {"reward": 1.0, "details": {"reason": "correct"}}',
                            'return {"reward": 1.0, "details": {"reason": "correct", '
                            '"nonce": __import__("os").urandom(4).hex()}}')),
    passing=example(Keep(VERIFIER, 'return {"reward": 1.0, "details": {"reason": "correct"}}')),
)

ARENA705 = Rule(
    "ARENA705", DYNAMIC, E, "agent container reaches the network",
    doc="The `reach-network` probe tries DNS and TCP egress (including the engine's host) from the agent's "
        "container and lists its network interfaces; only loopback may exist and nothing may be reached. No package "
        "can grant itself a network, so a finding means the sandbox leaked one.",
    advice="Nothing in the package may need the network; report it if the sandbox leaked one.",
    messages={
        "reached": Message("the agent container has network access: reached {reached}, interfaces {interfaces}",
                           "This is a sandbox failure: report it; never run untrusted packages on this engine until "
                           "fixed."),
        "unproven": Message("the egress probe could not run, so isolation is unproven",
                            "The image must provide python3 (see docs/SPEC.md)."),
    },
    failing=situation("the engine gives the agent's container a network (a sandbox fault)",
                      "tests/test_dynamic_checks.py::test_network_reaching_container_is_caught"),
    passing=example(Keep(DOCKERFILE, "apt-get install -y --no-install-recommends python3"),
                    probes=("reach-network",)),
)

ARENA706 = Rule(
    "ARENA706", DYNAMIC, E, "verifier, oracle or generator inside the image",
    doc="Every layer of the built image is scanned for byte-identical copies of the verifier, the oracle, the "
        "generator and verifier data (files of 32 bytes or more): the agent could read them. Verifier data the "
        "image shares on purpose is no leak (docs/SPEC.md, \"What is a leak\").",
    advice="Keep answers, the verifier and the oracle out of the image and out of instance files the agent can read.",
    messages=one("the image contains /{name}, a copy of {source}: the agent could read it",
                 "Remove whatever copies it into environment/ or the image; hidden files are copied in by the arena "
                 "only when they are needed."),
    failing=example(Copy(ORACLE, "environment/solve_copy.py"),
                    Replace(DOCKERFILE, "WORKDIR /workspace", "COPY solve_copy.py /opt/\nWORKDIR /workspace")),
    passing=example(Keep(DOCKERFILE, "WORKDIR /workspace")),
)

ARENA707 = Rule(
    "ARENA707", DYNAMIC, E, "tamper probe scores above the floor",
    doc="The tamper probes try to win without solving: forged reward files and interpreter hooks, a background "
        "writer, a wiped or garbage workspace, junk in every file the prompt names, exhausted resources. Each must "
        "score no more than doing nothing. Replay one with `arena run PATH --agent probe:NAME`.",
    advice="Harden the verifier against the probe named (a forged reward file, deleted files, ...): judge the real "
           "state.",
    messages=one("the tamper probe {agent} scored {reward} on instance {instance} (floor {floor}); details: "
                 "{details}", _TAMPER_FIX),
    failing=example(Replace(VERIFIER, "    if not answer.is_file():",
                            '    if Path("/tmp/reward.json").exists():\n'
                            '        return {"reward": 1.0, "details": {"reason": "trusted a report"}}\n'
                            "    if not answer.is_file():"), probes=("forge-reward",)),
    passing=example(Keep(VERIFIER, "expected = sum(build_instance(int(os.environ[\"ARENA_INSTANCE\"])))"),
                    probes=("forge-reward",)),
)

ARENA708 = Rule(
    "ARENA708", DYNAMIC, W, "oracle close to its limits",
    doc="An oracle that needs over half its time limit, or over 70% of the memory limit, will fail on a slower or "
        "busier machine.",
    advice="Leave headroom: make the oracle faster or lighter, or raise the limit.",
    messages={
        "slow": Message("{agent} on instance {instance} took {seconds:.1f} s, over {share:.0%} of "
                        "limits.oracle_timeout_s ({limit} s)", "Leave headroom: slower machines will time out."),
        "heavy": Message("{agent} on instance {instance} used {peak} MiB at peak, over {share:.0%} of "
                         "limits.memory_mb ({limit})", "Raise memory_mb or make the task lighter."),
    },
    failing=example(Replace(ORACLE, "from pathlib import Path\n", "import time\nfrom pathlib import Path\n"),
                    Replace(ORACLE, "total = sum", "time.sleep(2.2)\ntotal = sum"),
                    Replace(TASK, "oracle_timeout_s: 120", "oracle_timeout_s: 4")),
    passing=example(Keep(TASK, "oracle_timeout_s: 120")),
)

ARENA709 = Rule(
    "ARENA709", DYNAMIC, E, "verifier error",
    doc="A verifier must write a valid reward (a number in [0, 1]) within `limits.verifier_timeout_s` for any final "
        "state, however broken: crashing on junk input is an error, not a score.",
    advice="Make the verifier exit 0 and write a valid reward in time on every instance.",
    messages=one("verifier error for {agent} on instance {instance}: {error}",
                 "A verifier must write a valid reward for any final state, however broken; catch bad input and "
                 "score it 0."),
    failing=example(Replace(VERIFIER, "    if text != str(expected):", "    int(text)\n    if text != str(expected):"),
                    probes=("junk-mentioned-files",)),
    passing=example(Keep(VERIFIER, "    if text != str(expected):"), probes=("junk-mentioned-files",)),
)

ARENA710 = Rule(
    "ARENA710", DYNAMIC, E, "instance setup fails",
    doc="Each instance is made by running the generator with `python3 -I` as root in `/workspace`; it must exit 0 "
        "and print one JSON object holding every value the prompt names. A `{{ instance.KEY }}` the generator does "
        "not print is shown at its line of task.md, with the printed key it most likely meant.",
    advice="Make the generator run with `python3 -I` as root in `/workspace` and print one JSON object.",
    messages={
        "": Message("instance {instance} could not be set up: {error}",
                    "Run the generator by hand with ARENA_INSTANCE set and fix it."),
        "placeholder": Message("the prompt uses {{{{ instance.{key} }}}} but the generator does not print '{key}' "
                               "(it prints: {printed})",
                               "Print '{key}' in the generator's JSON object, or use one of the keys it prints."),
        "placeholder_guess": Message("the prompt uses {{{{ instance.{key} }}}} but the generator does not print "
                                     "'{key}' (it prints: {printed})",
                                     "Did you mean {{{{ instance.{guess} }}}}? Correct the placeholder, or print "
                                     "'{key}' in the generator's JSON object."),
    },
    failing=example(Replace(GENERATOR, "    numbers = build_instance",
                            "    raise SystemExit(4)\n    numbers = build_instance")),
    passing=example(Keep(GENERATOR, '    print(json.dumps({"count": len(numbers)}))')),
)

ARENA711 = Rule(
    "ARENA711", DYNAMIC, E, "agent can read the answer or a copy of hidden files",
    doc="On each sampled instance the `read-answers` probe, as the agent user, runs the oracle to learn its answer "
        "files (every file it changed: names, JSON keys, CSV header), puts them back, then reads every file it can "
        "outside the task's own (the paths the prompt names, and visible files beside them): hidden files, `/tmp`, "
        "`/var`, `/opt`, `/root`, `/srv`, home folders, everything from the image. The best answer-like file per "
        "answer is copied into place and verified: it must score no more than doing nothing. Text that is a "
        "near-copy of the verifier, oracle, generator or verifier data (half of its 8-token shingles or more, "
        "spacing ignored) is reported with the match; an exact copy in the image is ARENA706's.",
    advice="Keep answers and hidden code out of every file the agent can read: write only the task's inputs, only "
           "into the workspace, and delete or never write anything else.",
    messages={
        "answer": Message("copying what the agent can read ({copied}) scored {reward} (floor {floor}); the trials "
                          "say on which instances",
                          "Do not leave the answer, or what it is computed from, readable outside the prompt's "
                          "files: the generator must write only the task's inputs, and the image no answers."),
        "copy": Message("{path} ({where}) is a near-copy of {source}: {share:.0%} of its {tokens}-token shingles, "
                        "e.g. `{example}`; the agent could read it",
                        "Remove whatever writes it (the generator copying its own files, a COPY in the Dockerfile); "
                        "hidden files reach a container only when the arena puts them there."),
    },
    failing=example(Replace(GENERATOR, '    print(json.dumps({"count": len(numbers)}))',
                            '    Path("/var/tmp/answer.txt").write_text(f"{sum(numbers)}\\n")\n'
                            '    print(json.dumps({"count": len(numbers)}))'), probes=("read-answers",)),
    passing=example(Keep(GENERATOR, '    print(json.dumps({"count": len(numbers)}))'), probes=("read-answers",)),
)

ARENA712 = Rule(
    "ARENA712", DYNAMIC, E, "agent can steer the verifier",
    doc="On each sampled instance the `steer-verifier` probe runs the oracle, then, as the agent user, plants modules "
        "under the names the verifier's sources import (in every import folder it can write) and programs under the "
        "names they run (in every PATH folder it can write), and overwrites workspace scripts they name. The frozen "
        "state is verified traced, as the arena runs the verifier (`python3 -I`, PATH of the runtime contract, the "
        "`sys.path` changes the verifier makes): every import path and PATH entry, module, program and script it "
        "used that the agent user could write is an error, and so is any plant that ran.",
    advice="Run nothing and import nothing the agent could have written: keep the verifier's import folders and "
           "PATH root-owned, and read workspace files as data only.",
    messages={
        "writable": Message("the verifier's {kind} {path} can be written by the agent user{proof}",
                            "Keep it out of the agent's reach: in the Dockerfile, do not chown or chmod it for the "
                            "agent; in verifier.py, import and run only what lives in the verifier's own folder or "
                            "the image."),
        "workspace": Message("the verifier's {kind} {path} is in the agent's workspace{proof}",
                             "Read workspace files as data only: never run or import them; put what the verifier "
                             "runs in its own data (verifier.data)."),
        "planted": Message("the verifier ran {what}, which the agent planted at {where}",
                           "Never execute or import files from the workspace; read them as data."),
    },
    failing=example(Replace(DOCKERFILE, "WORKDIR /workspace", "RUN chown agent /usr/local/bin\nWORKDIR /workspace"),
                    probes=("steer-verifier",)),
    passing=example(Keep(DOCKERFILE, "WORKDIR /workspace"), probes=("steer-verifier",)),
)

_EXPECTED = '    expected = sum(build_instance(int(os.environ["ARENA_INSTANCE"])))'
_ANSWER_FIX = ("Rebuild the truth from ARENA_INSTANCE alone (as the generator does) and compare every record of the "
               "answer with it, all or in full; never read the truth back from files the agent can edit.")

ARENA713 = Rule(
    "ARENA713", DYNAMIC, E, "verifier trusts inputs the agent rewrote",
    doc="The `rewritten-inputs` probe writes another instance's whole final workspace (its input files and the "
        "oracle's answer to them) over an instance's, and submits it. A verifier that rebuilds the truth from "
        "`ARENA_INSTANCE` scores it as it scores the other instance's answer alone (`replay`); one that recomputes the "
        "truth from the workspace's inputs scores it 1, so an agent could rewrite the inputs to fit any answer.",
    advice="Rebuild the instance's truth from ARENA_INSTANCE in the verifier; never recompute it from workspace files.",
    messages=one("on instance {instance}, instance {donor}'s inputs and answer written over the workspace scored "
                 "{reward}, its answer alone {alone}: the verifier recomputes the truth from files the agent can edit",
                 _ANSWER_FIX),
    failing=example(Replace(VERIFIER, _EXPECTED, '    expected = sum(int(x) for x in (Path(os.environ.get('
                                                 '"ARENA_WORKSPACE", "/workspace")) / "numbers.txt").read_text()'
                                                 '.split())'), probes=("rewritten-inputs",), instances=2),
    passing=example(Keep(VERIFIER, _EXPECTED), probes=("rewritten-inputs",), instances=2),
)

ARENA714 = Rule(
    "ARENA714", DYNAMIC, E, "near-miss or replayed answer scores full",
    doc="The `near-miss` probe submits the oracle's answer with one record (a CSV row, a JSON list entry, a line) "
        "changed, dropped or added, one kind per instance over three instances, and verifies the first of them three "
        "times: each must score below 1, and the same frozen state must get the same reward every time (a random "
        "spot check does not). The `replay` probe submits the oracle's answer of one instance on another: it must "
        "score no more than the do-nothing floor.",
    advice="Compare the whole answer with the truth of this instance: every record, none missing, none extra.",
    messages={
        "near_miss": Message("on instance {instance}, the oracle's answer with {what} scored {reward}: a wrong answer "
                             "gets full marks", _ANSWER_FIX),
        "unstable": Message("on instance {instance}, the oracle's answer with {what}, one frozen state, was verified "
                            "three times and scored {rewards}", "Check every record, not a random sample: the same "
                            "state must always get the same reward."),
        "replay": Message("the oracle's answer of instance {donor}, submitted on instance {instance}, scored {reward} "
                          "(floor {floor}): the verifier checks the answer's shape, not that it is this instance's",
                          _ANSWER_FIX),
    },
    failing=example(Replace(VERIFIER, "    if text != str(expected):",
                            '    if expected is None or not text.lstrip("-").isdigit():  # the shape only'),
                    probes=("near-miss", "replay"), instances=2),
    passing=example(Keep(VERIFIER, "    if text != str(expected):"), probes=("near-miss", "replay"), instances=2),
)

ARENA715 = Rule(
    "ARENA715", DYNAMIC, E, "instances are not what they claim",
    doc="One instance made twice must be byte-identical in its files and prompt values; the instances sampled (the "
        "oracle's, eight by default) must differ pairwise in files or prompt values, and the oracle's answers to them "
        "must not all be equal. A generator that ignores `ARENA_INSTANCE`, or a task with one answer, trains "
        "memorising, not solving.",
    advice="Derive every instance's data, and so its answer, from ARENA_INSTANCE alone "
           "(random.Random(f\"name/{index}\")).",
    messages={
        "irreproducible": Message("instance {instance} made twice differs in {what}",
                                  "Derive every random choice from ARENA_INSTANCE; no clock, no unseeded randomness, "
                                  "no set or dict order that varies."),
        "same_instance": Message("instances {first} and {second} are identical in every file and prompt value (of "
                                 "{count} sampled): the generator ignores ARENA_INSTANCE",
                                 "Seed the generator from ARENA_INSTANCE (random.Random(f\"name/{{index}}\"))."),
        "same_answer": Message("the oracle's answer ({files}) is the same on all {count} instances sampled",
                               "Make the answer depend on the instance's data, so that it has to be worked out."),
    },
    failing=example(Replace(GENERATOR, 'build_instance(int(os.environ["ARENA_INSTANCE"]))', "build_instance(0)"),
                    Replace(VERIFIER, 'build_instance(int(os.environ["ARENA_INSTANCE"]))', "build_instance(0)"),
                    instances=2),
    passing=example(Keep(GENERATOR, 'build_instance(int(os.environ["ARENA_INSTANCE"]))'), instances=2),
)

ARENA716 = Rule(
    "ARENA716", DYNAMIC, W, "a constant answer scores well above the floor",
    doc="The `constant-answer` probe submits the commonest answer shape on every instance sampled but the one it is "
        "made from: the oracle's commonest whole answer, with each record of this instance (a CSV row, a JSON entry) "
        "kept by its key and every other field at its commonest value, as in every row given the commonest label. "
        "Its mean and best instance are shown with `arena check -v`; a mean of 0.25 or more above the do-nothing "
        "floor means a policy that never works anything out earns that share of the reward.",
    advice="Give credit only for what shows the task was solved: no marks for the format or the commonest label.",
    messages=one("a constant answer ({what}) scored {mean:.2f} on average over {count} instance(s) (best {best} on "
                 "instance {instance}), against the do-nothing floor {floor}",
                 "Score what only solving gets right: weigh the rare labels, or give no partial credit for a "
                 "well-formed answer."),
    failing=example(Replace(VERIFIER, '        return {"reward": 0.0, "details": {"reason": "wrong sum", "got": '
                                      'text[:40]}}',
                            '        return {"reward": 0.5 if text.lstrip("-").isdigit() else 0.0, "details": '
                            '{"reason": "wrong sum", "got": text[:40]}}'), probes=("constant-answer",), instances=2),
    passing=example(Keep(VERIFIER, "    if text != str(expected):"), probes=("constant-answer",), instances=2),
)
