"""Training jobs through the bot, against the GitHub stand-in: a confirmed `/arena train` launches one job and says
so, `/arena status` and `/arena cancel` work, and polling publishes results exactly once, treating what a job sends
back as untrusted (wrong environment or commit, corrupt, oversized, partial), under races and lost answers.

The backend here is the Backend protocol kept in memory (tests.test_launch_units.RecordingBackend, with logs a test
writes); the real local backend runs the whole loop in tests/test_launch_loop.py."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from bot import github_api, jobs
from bot.facts import Config
from bot.handoff import LaunchRequest
from bot.main import confirm_launch
from bot.state_branch import BranchStore
from launch import result_block
from launch.backends import BackendJob
from launch.budget import Budget
from launch.state import JobRecord
from scoring.record import build_run
from tests.support.github_standin import fake_sha as sha
from tests.support.scoring import paired_items, run_info
from tests.test_launch_units import RecordingBackend

if TYPE_CHECKING:
    from tests.conftest_github import World

REPO = "arena-org/arena"
ENV = {"ARENA_RECIPE": "cpu-small", "ARENA_SCORE_PROFILE": "smoke", "ARENA_SCORE_BACKEND": "local"}


class Backend(RecordingBackend):
    """Jobs whose logs the test writes."""

    def __init__(self) -> None:
        super().__init__()
        self.log_text: dict[str, str] = {}

    def logs(self, job_id: str) -> str:
        return self.log_text.get(job_id, "")

    def finish(self, name: str, state: str = "succeeded", log: str = "", detail: str | None = None) -> None:
        job = self.jobs[name]
        self.jobs[name] = replace(job, state=state, detail=detail, gpu_hours=1.25)
        self.log_text[job.id] = log


def result_log(environment: str = "sample-task", commit: str | None = None, **changes: object) -> tuple[str, dict]:
    """A job log ending in a result block holding a real version-2 record (built by scoring) and its items."""
    record, items = build_run(paired_items(3, per_domain=4, clusters=0, effect=0.3),
                              run_info(environment, items=32, resamples=200, commit=commit or sha(1)))
    record.update({"contributor": "attacker", **changes})  # the PR's author (tests/conftest_github.py)
    lines = ["arena-job: gate: done", "arena-job: succeeded", *result_block.encode({"record": record,
                                                                                  "items": items})]
    return "\n".join(lines), record


def client(world: World) -> github_api.Client:
    return github_api.connect({"GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": world.hub.base_url,
                               "GITHUB_TOKEN": world.hub.token, "ARENA_GITHUB_THROTTLE": "off",
                               "ARENA_GITHUB_BACKOFF": "0.01"})


def config(world: World) -> Config:
    return Config(repo=REPO, bot_login=world.hub.bot_login)


def accepted(world: World, number: int, login: str = "maintainer", body: str = "/arena train") -> LaunchRequest:
    """The request the bot hands the launch job for a maintainer's /arena train (confirmed against the PR)."""
    handed: list[LaunchRequest] = []
    event = world.comment_event(number, login, body)
    assert world.run("issue_comment", event, launcher=handed.append) == 0
    (request,) = handed
    assert confirm_launch(world.env("issue_comment", event) | {"ARENA_LAUNCH_REQUEST": request.to_json()}) == 0
    return request


def reply(world: World, request: LaunchRequest) -> str:
    return world.hub.repos[REPO].comments[request.reply_comment]["body"]


def job_files(world: World) -> dict[str, dict]:
    return {p: json.loads(d) for p, d in world.hub.files(REPO, "arena-state").items() if p.startswith("jobs/")}


# ----- launching ------------------------------------------------------------------------------------------------
def test_a_confirmed_train_starts_one_job_and_the_reply_says_which(world: World, passing: int) -> None:
    backend, gh = Backend(), client(world)
    request = accepted(world, passing)
    before = len(world.hub.log)
    decision = jobs.launch(gh, request, backend, BranchStore(gh), Budget(), ENV, print)
    assert decision.outcome == "started" and backend.launched == ["arena-sample-task-" + sha(1)[:12]]
    text = reply(world, request)
    assert "**Training started**" in text and "arena-sample-task-" in text and "posttrain-arena:train" in text
    (record,) = job_files(world).values()
    assert (record["state"], record["pr"], record["reply_comment"]) == ("running", passing, request.reply_comment)
    assert json.loads(record["spec"])["recipe"] == "cpu-small"
    calls = len(world.hub.log) - before
    assert calls <= 11, f"the launch step made {calls} GitHub calls"  # one reads the package's limits
    again = jobs.launch(gh, request, backend, BranchStore(gh), Budget(), ENV, print)
    assert again.outcome == "running" and len(backend.launched) == 1  # a repeated launch starts nothing


def test_a_second_train_on_the_same_commit_is_answered_not_launched(world: World, passing: int) -> None:
    accepted(world, passing)
    handed: list[LaunchRequest] = []
    assert world.run("issue_comment", world.comment_event(passing, "maintainer", "/arena train"),
                     launcher=handed.append) == 0
    assert handed == [] and "was already accepted" in world.replies(passing)[-1]


def test_over_budget_the_reply_says_why_and_the_request_can_be_made_again(world: World, passing: int) -> None:
    backend, gh = Backend(), client(world)
    request = accepted(world, passing)
    decision = jobs.launch(gh, request, backend, BranchStore(gh), Budget(gpu_hours_per_period=10), ENV, print)
    assert decision.outcome == "refused" and backend.launched == []
    text = reply(world, request)
    assert "**Training was not started**" in text and "over the budget of 10.0 \\(ARENA\\_GPU\\_HOURS" in text
    assert "posttrain-arena:train" not in text  # the key is gone: a later /arena train is accepted
    later: list[LaunchRequest] = []
    assert world.run("issue_comment", world.comment_event(passing, "maintainer", "/arena train"),
                     launcher=later.append) == 0
    assert len(later) == 1


# ----- status and cancel ----------------------------------------------------------------------------------------
def test_status_reports_the_job_record_to_anyone(world: World, passing: int) -> None:
    assert world.run("issue_comment", world.comment_event(passing, "someone", "/arena status")) == 0
    assert "No training job has been started" in world.replies(passing)[-1]
    backend, gh = Backend(), client(world)
    jobs.launch(gh, accepted(world, passing), backend, BranchStore(gh), Budget(), ENV, print)
    assert world.run("issue_comment", world.comment_event(passing, "someone", "/arena status")) == 0
    assert "is **running**" in world.replies(passing)[-1]


def test_cancel_is_for_maintainers_and_stops_the_job(world: World, passing: int) -> None:
    backend, gh = Backend(), client(world)
    jobs.launch(gh, accepted(world, passing), backend, BranchStore(gh), Budget(), ENV, print)
    handed: list[LaunchRequest] = []
    assert world.run("issue_comment", world.comment_event(passing, "someone", "/arena cancel"),
                     launcher=handed.append) == 0
    assert handed == [] and "only maintainers" in world.replies(passing)[-1]
    cancel = accepted(world, passing, body="/arena cancel")
    assert cancel.action == "cancel"
    jobs.cancel(gh, cancel, backend, BranchStore(gh), print)
    assert backend.cancelled == ["id-1"] and "Cancelled training job" in reply(world, cancel)
    (record,) = job_files(world).values()
    assert record["state"] == "cancelled" and record["reason"] == "cancelled by maintainer"


# ----- polling --------------------------------------------------------------------------------------------------
def launched(world: World, passing: int) -> tuple[Backend, github_api.Client, LaunchRequest]:
    backend, gh = Backend(), client(world)
    request = accepted(world, passing)
    jobs.launch(gh, request, backend, BranchStore(gh), Budget(), ENV, print)
    return backend, gh, request


def test_results_are_committed_commented_and_recorded_once(world: World, passing: int) -> None:
    backend, gh, _ = launched(world, passing)
    log, record = result_log()
    backend.finish(backend.launched[0], log=log)
    summary = jobs.poll(gh, config(world), backend, BranchStore(gh), print)
    assert summary.published == [record["run_id"]] and backend.calls == 1
    files = world.hub.files(REPO, "arena-state")
    assert f"results/sample-task/{record['run_id']}.json" in files
    assert json.loads(files[f"results/sample-task/{record['run_id']}.items.json"])["run_id"] == record["run_id"]
    (body,) = [c["body"] for c in world.hub.comments(REPO, passing) if "posttrain-arena:results" in c["body"]]
    assert "## Training results: `environments/sample-task`" in body and "Macro Δ" in body
    assert body.count("\n| ") == 9 and "rank 1" in body  # a header and eight domains
    (job,) = job_files(world).values()
    assert (job["state"], job["run_id"], job["gpu_hours"]) == ("succeeded", record["run_id"], 1.25)
    assert jobs.poll(gh, config(world), backend, BranchStore(gh), print).published == []  # nothing more to do


@pytest.mark.parametrize(("damage", "reason"), [
    ("environment", "not the job's sample-task"), ("commit", "not the job's sample-task"),
    ("incomplete", "incomplete"), ("corrupt", "corrupt"), ("missing", "no complete result block"),
    ("schema", "results_version"), ("forged", "macro/p_value: the record says 1e-05")])
def test_a_result_that_is_not_the_jobs_fails_the_job_with_the_reason(world: World, passing: int, damage: str,
                                                                     reason: str) -> None:
    backend, gh, request = launched(world, passing)
    log, _ = {"environment": lambda: result_log(environment="other-env"),
              "commit": lambda: result_log(commit=sha(5)),
              "incomplete": lambda: result_log(complete=False),
              "schema": lambda: result_log(results_version=7),
              "forged": lambda: result_log(macro={**result_log()[1]["macro"], "p_value": 1e-05}),
              "corrupt": lambda: (result_log()[0][:-40] + "A" * 40, None),
              "missing": lambda: ("arena-job: succeeded", None)}[damage]()
    backend.finish(backend.launched[0], log=log)
    summary = jobs.poll(gh, config(world), backend, BranchStore(gh), print)
    assert summary.published == [] and reason in summary.problems[0]
    assert not any(p.startswith("results/") for p in world.hub.files(REPO, "arena-state"))
    (job,) = job_files(world).values()
    assert job["state"] == "failed" and "its results were not accepted" in job["reason"]
    ended = [c["body"] for c in world.hub.comments(REPO, passing) if "posttrain-arena:ended" in c["body"]]
    assert len(ended) == 1 and "failed" in ended[0] and "To try again" in ended[0]
    assert "posttrain-arena:train" not in reply(world, request)  # reopened: /arena train may ask again


def test_an_oversized_record_is_refused() -> None:
    from scoring.results import ResultsError
    from scoring.verify import accept_job_result

    _, record = result_log()
    with pytest.raises(ResultsError, match="larger than"):
        accept_job_result({"record": {**record, "padding": "x" * 2_000_000}}, "sample-task", sha(1), "job")


def test_a_failed_job_is_told_its_reason_never_its_log(world: World, passing: int) -> None:
    backend, gh, _ = launched(world, passing)
    hostile = "\n".join(["step 1", "PACKAGE-SECRET Traceback: boom", "```", "@everyone <script>alert(1)</script>"])
    backend.finish(backend.launched[0], "failed", hostile, detail="FAILED_SETUP \u202eevil")
    jobs.poll(gh, config(world), backend, BranchStore(gh), print)
    (body,) = [c["body"] for c in world.hub.comments(REPO, passing) if "posttrain-arena:ended" in c["body"]]
    assert "FAILED\\_SETUP" in body and "\u202e" not in body
    assert "PACKAGE-SECRET" not in body and "@everyone" not in body and "```" not in body
    assert "arena jobs logs arena-sample-task-" in body  # where a maintainer reads it


@pytest.mark.parametrize(("change", "env", "reason"), [
    ({}, {"ARENA_SUITE_NAME": "private-v2"}, "not the job's 'private-v2'"),
    ({}, {"ARENA_SUITE_VERSION": "9.9.9"}, "scored on suite version"),
    ({}, {"ARENA_SUITE_DIGEST": "sha256:" + "1" * 64}, "scored on suite digest 'sha256:"),
    ({"contributor": "maintainer"}, {}, "credits 'maintainer', not the pull request's author 'attacker'"),
])
def test_a_result_on_another_suite_or_crediting_someone_else_is_refused(world: World, passing: int, change: dict,
                                                                      env: dict, reason: str) -> None:
    backend, gh = Backend(), client(world)
    jobs.launch(gh, accepted(world, passing), backend, BranchStore(gh), Budget(), {**ENV, **env}, print)
    log, _ = result_log(**change)
    backend.finish(backend.launched[0], log=log)
    summary = jobs.poll(gh, config(world), backend, BranchStore(gh), print)
    assert summary.published == [] and reason in summary.problems[0], summary.problems


def test_a_lost_answer_while_committing_results_publishes_them_once(world: World, passing: int) -> None:
    backend, gh, _ = launched(world, passing)
    log, record = result_log()
    backend.finish(backend.launched[0], log=log)
    world.hub.inject(r"/contents/results/.*\.json$", 502, method="PUT", after=True, times=2)
    world.hub.inject(r"/issues/\d+/comments$", 502, method="POST", after=True, times=1)
    jobs.poll(gh, config(world), backend, BranchStore(gh), print)
    results = [p for p in world.hub.files(REPO, "arena-state") if p.startswith("results/")]
    assert sorted(results) == sorted([f"results/sample-task/{record['run_id']}.json",
                                      f"results/sample-task/{record['run_id']}.items.json"])
    comments = [c for c in world.hub.comments(REPO, passing) if "posttrain-arena:results" in c["body"]]
    assert len(comments) == 1


def test_two_polls_at_once_publish_each_result_once(world: World, passing: int) -> None:
    backend, gh, _ = launched(world, passing)
    number, _ = world.open_fork_pr(["environments/other-env/task.md"], sha(2))
    other = JobRecord.new(replace(json_spec(job_files(world)), environment="other-env", commit=sha(2), pr=number),
                          "local")
    BranchStore(gh).create(other.moved_to("running", backend_job="id-2"))
    backend.jobs[other.name] = BackendJob("id-2", other.name, "running")
    backend.finish(backend.launched[0], log=result_log()[0])
    backend.finish(other.name, log=result_log("other-env", sha(2))[0])
    world.hub.rendezvous(r"/contents/results/", parties=2, method="GET")
    outcomes: list[object] = []

    def poll() -> None:
        try:
            outcomes.append(jobs.poll(client(world), config(world), backend, BranchStore(client(world)), print))
        except Exception as exc:  # a lost race must not crash either poll
            outcomes.append(exc)

    threads = [threading.Thread(target=poll) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(not isinstance(o, Exception) for o in outcomes), outcomes
    records = [p for p in world.hub.files(REPO, "arena-state") if p.startswith("results/") and
               not p.endswith(".items.json")]
    assert len(records) == 2
    for pr in (passing, number):
        assert len([c for c in world.hub.comments(REPO, pr) if "posttrain-arena:results" in c["body"]]) == 1
    assert {r["state"] for r in job_files(world).values()} == {"succeeded"}


def json_spec(files: dict[str, dict]) -> object:
    from launch.spec import JobSpec

    (record,) = files.values()
    return JobSpec.from_json(record["spec"])


def test_a_push_makes_the_running_job_stale(world: World, passing: int) -> None:
    backend, gh, _ = launched(world, passing)
    world.hub.push(REPO, passing, sha(3))
    jobs.poll(gh, config(world), backend, BranchStore(gh), print)
    (job,) = job_files(world).values()
    assert job["state"] == "stale" and sha(3)[:12] in job["reason"] and backend.cancelled == ["id-1"]
    assert any("posttrain-arena:ended" in c["body"] and "pull request moved on" in c["body"]
               for c in world.hub.comments(REPO, passing))


def test_polling_many_jobs_asks_the_backend_once(world: World, passing: int) -> None:
    backend, gh, _ = launched(world, passing)
    store = BranchStore(gh)
    for n in range(2, 7):
        stamp = "2026-12-01T00:00:00Z"
        record = JobRecord("sample-task", sha(100 + n), "running", "local", "maintainer", stamp, stamp, passing,
                           f"arena-sample-task-{n}", backend_job=f"x{n}")
        store.create(record)
    backend.calls = 0
    jobs.poll(gh, config(world), backend, store, print)
    assert backend.calls == 1


def test_records_on_the_state_branch_are_read_as_untrusted(world: World, passing: int) -> None:
    _, gh, _ = launched(world, passing)
    world.hub.repos[REPO].branches["arena-state"].files["jobs/evil/" + "e" * 40 + ".json"] = b'{"job_version": 1}'
    assert [s.record.environment for s in BranchStore(gh).all()] == ["sample-task"]


def test_a_job_past_its_ceiling_is_cancelled_and_the_pr_told_why(world: World, passing: int) -> None:
    backend, gh = Backend(), client(world)
    jobs.launch(gh, accepted(world, passing), backend, BranchStore(gh), Budget(),
                {**ENV, "ARENA_JOB_MAX_GPU_HOURS": "10"}, print)
    name = backend.launched[0]
    backend.jobs[name] = replace(backend.jobs[name], state="running", hours=9.0, gpu_hours=10.5, recoveries=1)
    jobs.poll(gh, config(world), backend, BranchStore(gh), print)
    (job,) = job_files(world).values()
    assert job["state"] == "cancelled" and job["gpu_hours"] == 10.5 and backend.cancelled == [backend.jobs[name].id]
    (body,) = [c["body"] for c in world.hub.comments(REPO, passing) if "posttrain-arena:ended" in c["body"]]
    assert "was cancelled" in body and "used 10.50 GPU-hours over all its segments" in body
    assert "ARENA\\_JOB\\_MAX\\_GPU\\_HOURS" in body and "ask a maintainer to raise the ceiling" in body
