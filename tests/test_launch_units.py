"""The launch layer's own rules, without a cloud or a model: job descriptions, result blocks in a log, the budget,
the record store's compare-and-swap, and the job's life (launched once, adopted after a crash, stale, retried)."""

from __future__ import annotations

import base64
import gzip
import json
import multiprocessing
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from launch import lifecycle, result_block
from launch.backends import BackendError, BackendJob
from launch.budget import Budget, BudgetConfigError
from launch.spec import PROFILES, JobSpec, SpecError
from launch.state import Conflict, FolderStore, JobRecord, RecordError, parse_record
from scoring.evaluation import PROFILES as SCORING_PROFILES

SHA = "0123456789abcdef0123456789abcdef01234567"


def spec(**changes: object) -> JobSpec:
    return replace(JobSpec("echo-word", SHA, "cpu-small"), **changes)


# ----- job descriptions ---------------------------------------------------------------------------------------
def test_a_spec_round_trips_and_names_its_job_stably() -> None:
    one = spec(pr=7, requested_by="maintainer", steps=2)
    assert JobSpec.from_json(one.to_json()) == one
    assert one.name == "arena-echo-word-0123456789ab" and one.next_attempt().name.endswith("-a2")
    long = spec(environment="a" * 48)
    assert len(long.name) <= 63 and long.name.endswith(SHA[:12])
    assert one.artifact_path == f"echo-word/{SHA}/attempt-1"


@pytest.mark.parametrize(("change", "field"), [
    ({"environment": "Bad Name"}, "environment"), ({"commit": "abc"}, "commit"), ({"profile": "huge"}, "profile"),
    ({"pr": 0}, "pr"), ({"requested_by": "x y"}, "requested_by"), ({"attempt": 0}, "attempt"),
    ({"steps": 0}, "steps"), ({"repository": "no-slash"}, "repository")])
def test_a_malformed_spec_names_the_field(change: dict, field: str) -> None:
    with pytest.raises(SpecError, match=field):
        spec(**change)


def test_spec_json_with_unknown_or_missing_fields_is_refused() -> None:
    data = json.loads(spec().to_json())
    with pytest.raises(SpecError, match="unknown field 'extra'"):
        JobSpec.from_json(json.dumps({**data, "extra": 1}))
    with pytest.raises(SpecError, match="not a version 1"):
        JobSpec.from_json(json.dumps({k: v for k, v in data.items() if k != "spec_version"}))
    with pytest.raises(SpecError, match="not JSON"):
        JobSpec.from_json("{")


def test_the_profiles_a_job_may_name_are_scorings() -> None:
    assert set(PROFILES) == set(SCORING_PROFILES)


# ----- result blocks --------------------------------------------------------------------------------------------
def test_a_result_block_ending_the_log_is_read_and_the_same_block_again_is_accepted() -> None:
    payload = {"record": {"run_id": "b"}, "items": {"x": list(range(3000))}}
    lines = result_block.encode(payload)
    assert len(lines) > 1  # a big payload is split
    log = "\n".join(["arena-job: train: done", "arena-job: succeeded: x", *lines, "", "restart 1",
                     "arena-job: succeeded: x", *lines, ""])  # a recovered job prints the same block again
    assert result_block.decode(log) == payload


@pytest.mark.parametrize(("log", "message"), [
    ("two", "2 different result blocks"),
    ("after", "not the last thing the job printed"),
    ("interleaved", "interrupted by other output"),
    ("reordered", "out of order"),
    ("cut", "ends inside a result block"),
])
def test_a_loose_result_channel_is_refused(log: str, message: str) -> None:
    first, second = result_block.encode({"record": {"run_id": "a"}}), result_block.encode(
        {"record": {"run_id": "b"}, "items": {"x": list(range(3000))}})
    logs = {"two": [*first, "arena-job: restart 1", *second],
            "after": [*second, "a line the package printed after the block"],
            "interleaved": [second[0], "noise", *second[1:]],
            "reordered": [second[1], second[0], *second[2:]],
            "cut": [*first, *second[:-1]]}
    with pytest.raises(result_block.ResultBlockError, match=message):
        result_block.decode("\n".join(logs[log]))


@pytest.mark.parametrize("damage", ["drop", "corrupt", "none"])
def test_an_incomplete_or_corrupt_block_is_an_error(damage: str) -> None:
    lines = result_block.encode({"record": {"run_id": "a"}, "items": {"x": list(range(3000))}})
    if damage == "drop":
        lines = lines[:-1]
    elif damage == "corrupt":
        lines[0] = lines[0][:-8] + "AAAAAAAA"
    else:
        lines = ["nothing here"]
    with pytest.raises(result_block.ResultBlockError):
        result_block.decode("\n".join(lines))


def test_a_compressed_bomb_is_refused_before_it_is_inflated() -> None:
    bomb = base64.b64encode(gzip.compress(b"{" + b" " * (result_block.MAX_DECODED_BYTES + 10) + b"}")).decode()
    with pytest.raises(result_block.ResultBlockError, match="larger than"):
        result_block.decode(f"{result_block.PREFIX} 1/1 {bomb}")


# ----- budget ---------------------------------------------------------------------------------------------------
def record(state: str = "running", gpu_hours: float = 0.0, commit: str = SHA, updated: str | None = None,
           environment: str = "echo-word") -> JobRecord:
    stamp = updated or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return JobRecord(environment, commit, state, "local", "maintainer", stamp, stamp, 7, f"arena-{environment}",
                     gpu_hours=gpu_hours)


def test_the_budget_refuses_over_the_concurrency_and_the_gpu_hours() -> None:
    budget = Budget(max_concurrent=1, gpu_hours_per_period=40, period_days=7, job_gpu_hours=15)
    assert budget.refusal([]) is None
    assert "at most 1 may run at once" in budget.refusal([record()])
    old = (datetime.now(UTC) - timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert budget.refusal([record("succeeded", 30.0, updated=old)]) is None  # outside the period
    assert "over the budget of 40.0" in budget.refusal([record("succeeded", 30.0)])


def test_budget_variables_are_checked() -> None:
    assert Budget.from_env({"ARENA_MAX_CONCURRENT_JOBS": "4"}).max_concurrent == 4
    with pytest.raises(BudgetConfigError, match="ARENA_GPU_HOURS_PER_PERIOD='lots'"):
        Budget.from_env({"ARENA_GPU_HOURS_PER_PERIOD": "lots"})
    with pytest.raises(BudgetConfigError, match="at least 1"):
        Budget.from_env({"ARENA_BUDGET_PERIOD_DAYS": "0"})


# ----- the record store -----------------------------------------------------------------------------------------
def test_the_folder_store_compares_before_it_swaps(tmp_path: Path) -> None:
    store = FolderStore(tmp_path)
    created = store.create(record("queued"))
    with pytest.raises(Conflict):
        store.create(record("queued"))
    moved = store.update(created, created.record.moved_to("running"))
    with pytest.raises(Conflict):
        store.update(created, created.record.moved_to("failed"))  # read before the move: refused
    assert store.get("echo-word", SHA).record.state == "running" == moved.record.state
    (tmp_path / "echo-word" / f"{'f' * 40}.json").write_text("{not json")
    assert [s.record.commit for s in store.all()] == [SHA]  # an unreadable file is skipped


def _create_one(root: str, results: multiprocessing.Queue) -> None:
    try:
        FolderStore(Path(root)).create(record("queued"))
        results.put("won")
    except Conflict:
        results.put("lost")


def test_two_processes_creating_one_record_leave_exactly_one_winner(tmp_path: Path) -> None:
    results: multiprocessing.Queue = multiprocessing.Queue()
    processes = [multiprocessing.Process(target=_create_one, args=(str(tmp_path), results)) for _ in range(4)]
    for p in processes:
        p.start()
    for p in processes:
        p.join(30)
    assert sorted(results.get(timeout=5) for _ in processes) == ["lost", "lost", "lost", "won"]


def test_records_are_read_as_untrusted_data() -> None:
    good = record().to_dict()
    assert parse_record(good) == record()
    for broken, field in [({**good, "state": "exploded"}, "state"), ({**good, "commit": "../../x"}, "commit"),
                          ({**good, "extra": 1}, "extra"), ({**good, "gpu_hours": -1}, "gpu_hours"),
                          ({**good, "spec": '{"spec_version": 1}'}, "spec")]:
        with pytest.raises(RecordError, match=field):
            parse_record(broken)


# ----- the job's life -------------------------------------------------------------------------------------------
class RecordingBackend:
    """The Backend protocol kept in memory: what lifecycle asked of it, and jobs whose state a test sets."""

    name = "local"

    def __init__(self, fail_launch: bool = False) -> None:
        self.launched: list[str] = []
        self.cancelled: list[str] = []
        self.jobs: dict[str, BackendJob] = {}
        self.calls = 0
        self.fail_launch = fail_launch

    def launch(self, spec: JobSpec, environment: Path | None = None) -> str:
        if self.fail_launch:
            raise BackendError("no capacity")
        self.launched.append(spec.name)
        self.jobs[spec.name] = BackendJob(f"id-{len(self.launched)}", spec.name, "queued")
        return self.jobs[spec.name].id

    def states(self, names: list[str]) -> dict[str, BackendJob]:
        self.calls += 1
        return {n: self.jobs[n] for n in names if n in self.jobs}

    def cancel(self, job_ids: list[str]) -> None:
        self.cancelled += job_ids

    def logs(self, job_id: str) -> str:
        return ""


def test_a_job_is_launched_once_and_finished_by_one_backend_call(tmp_path: Path) -> None:
    store, backend = FolderStore(tmp_path), RecordingBackend()
    first = lifecycle.request(store, backend, spec(), Budget())
    again = lifecycle.request(store, backend, spec(), Budget())
    assert (first.outcome, again.outcome, backend.launched) == ("started", "running", [spec().name])
    other = lifecycle.request(store, backend, spec(environment="other-env"), Budget())
    assert other.outcome == "started"
    for name in list(backend.jobs):
        backend.jobs[name] = replace(backend.jobs[name], state="succeeded", gpu_hours=1.5)
    changes = lifecycle.refresh(store, backend)
    assert backend.calls == 1 and sorted(c.after.state for c in changes) == ["succeeded", "succeeded"]
    assert lifecycle.request(store, backend, spec(), Budget()).outcome == "done"
    assert store.get("echo-word", SHA).record.gpu_hours == 1.5


def test_a_crash_between_launch_and_record_adopts_the_job_instead_of_starting_another(tmp_path: Path) -> None:
    store, backend = FolderStore(tmp_path), RecordingBackend()
    store.create(JobRecord.new(spec(), "local"))  # recorded as queued, then the process died after launching
    backend.jobs[spec().name] = BackendJob("id-9", spec().name, "running")
    assert lifecycle.request(store, backend, spec(), Budget()).outcome == "running"
    (change,) = lifecycle.refresh(store, backend)
    assert change.after.state == "running" and change.after.backend_job == "id-9" and backend.launched == []


def test_a_queued_record_whose_launch_never_happened_fails_after_the_grace(tmp_path: Path) -> None:
    store, backend = FolderStore(tmp_path), RecordingBackend()
    store.create(JobRecord.new(spec(), "local"))
    assert lifecycle.refresh(store, backend) == []  # within the grace: maybe still launching
    (change,) = lifecycle.refresh(store, backend, now=datetime.now(UTC) + lifecycle.LAUNCH_GRACE * 2)
    assert change.after.state == "failed" and "never started" in change.after.reason


def test_a_failed_launch_is_recorded_and_a_later_request_is_the_next_attempt(tmp_path: Path) -> None:
    store = FolderStore(tmp_path)
    refused = lifecycle.request(store, RecordingBackend(fail_launch=True), spec(), Budget())
    assert refused.outcome == "refused" and "no capacity" in refused.message
    backend = RecordingBackend()
    retried = lifecycle.request(store, backend, spec(), Budget())
    assert retried.outcome == "started" and retried.record.attempt == 2 and backend.launched == [f"{spec().name}-a2"]


def test_over_budget_nothing_is_launched(tmp_path: Path) -> None:
    store, backend = FolderStore(tmp_path), RecordingBackend()
    lifecycle.request(store, backend, spec(), Budget())
    refused = lifecycle.request(store, backend, spec(environment="other-env"), Budget(max_concurrent=1))
    assert refused.outcome == "refused" and "at most 1 may run at once" in refused.message
    assert backend.launched == [spec().name]


def test_cancel_and_stale_stop_the_backend_job(tmp_path: Path) -> None:
    store, backend = FolderStore(tmp_path), RecordingBackend()
    lifecycle.request(store, backend, spec(), Budget())
    stale = lifecycle.cancel(store, backend, "echo-word", SHA, "stale", "the pull request moved to abc")
    assert stale.state == "stale" and backend.cancelled == ["id-1"]
    assert lifecycle.cancel(store, backend, "echo-word", SHA) is None  # nothing active any more


# ----- the ceiling and the real spend -----------------------------------------------------------------------------
LIMITS = {"build_timeout_s": 600, "agent_timeout_s": 900, "verifier_timeout_s": 60}


def test_a_package_whose_verifier_alone_could_pass_the_ceiling_is_refused_with_the_arithmetic(tmp_path: Path) -> None:
    store, backend = FolderStore(tmp_path), RecordingBackend()
    gpu = spec(recipe="qwen3-8b-grpo-lora")
    assert lifecycle.request(store, backend, gpu, Budget(), limits=LIMITS).outcome == "started"  # 13.5 h < 24 h
    slow = {**LIMITS, "verifier_timeout_s": 1800}
    refused = lifecycle.request(store, backend, spec(environment="slow", recipe="qwen3-8b-grpo-lora"), Budget(),
                                limits=slow)
    assert refused.outcome == "refused" and backend.launched == [gpu.name]
    assert ("200 steps × 4 waves of episodes (64 episodes a step, 16 at once) × verifier_timeout_s 1800 s + "
            "build_timeout_s 600 s = 400.2 h, over the 24 h a job may run (ARENA_JOB_MAX_HOURS)") in refused.message
    assert store.get("slow", SHA) is None  # refused before anything was recorded or launched


def test_a_job_past_its_ceiling_is_cancelled_by_the_poll_with_the_reason(tmp_path: Path) -> None:
    store, backend = FolderStore(tmp_path), RecordingBackend()
    lifecycle.request(store, backend, spec(max_hours=2.0, max_gpu_hours=3.0), Budget())
    name = spec().name
    backend.jobs[name] = replace(backend.jobs[name], state="running", hours=1.9, gpu_hours=1.9)
    (change,) = lifecycle.refresh(store, backend)
    assert change.after.state == "running" and backend.cancelled == []
    backend.jobs[name] = replace(backend.jobs[name], hours=2.1, gpu_hours=2.1, recoveries=2)
    (change,) = lifecycle.refresh(store, backend)
    assert change.after.state == "cancelled" and backend.cancelled == ["id-1"]
    assert change.after.reason == ("stopped at its ceiling: it ran 2.10 h over all its segments, and a job may run "
                                   "2 h (ARENA_JOB_MAX_HOURS)")
    assert change.after.gpu_hours == 2.1


def test_spend_counts_every_segment_and_every_ending(tmp_path: Path) -> None:
    store, backend = FolderStore(tmp_path), RecordingBackend()
    lifecycle.request(store, backend, spec(), Budget())
    name = spec().name
    backend.jobs[name] = replace(backend.jobs[name], state="running", gpu_hours=5.0)
    lifecycle.refresh(store, backend)
    backend.jobs[name] = replace(backend.jobs[name], state="recovering", gpu_hours=0.5)  # a backend that forgot
    lifecycle.refresh(store, backend)
    assert store.get("echo-word", SHA).record.gpu_hours == 5.0  # spend only grows
    backend.jobs[name] = replace(backend.jobs[name], gpu_hours=7.25)
    cancelled = lifecycle.cancel(store, backend, "echo-word", SHA)
    assert cancelled.state == "cancelled" and cancelled.gpu_hours == 7.25  # asked once more when closed
    # The budget reads it: 7.25 used by the cancelled job + 24 that a new job may use > 30.
    assert "7.2 + 0.0 + 24.0 = 31.2, over the budget of 30.0" in Budget(gpu_hours_per_period=30).refusal(
        [s.record for s in store.all()], needs=24.0)


def test_a_running_job_holds_back_what_is_left_of_its_ceiling() -> None:
    running = replace(record("running", 2.0), spec=spec(max_gpu_hours=10.0).to_json())
    message = Budget(max_concurrent=5, gpu_hours_per_period=20).refusal([running], needs=10.5)
    assert "used 2.0 GPU-hours, the running jobs may use 8.0 more" in message


def test_ceiling_variables_are_checked() -> None:
    from launch.ceiling import Ceiling, CeilingConfigError

    assert Ceiling.from_env({"ARENA_JOB_MAX_HOURS": "6"}) == Ceiling(6.0, 24.0)
    with pytest.raises(CeilingConfigError, match=r"ARENA_JOB_MAX_GPU_HOURS='0': must be at least 0\.01"):
        Ceiling.from_env({"ARENA_JOB_MAX_GPU_HOURS": "0"})
    with pytest.raises(SpecError, match="max_hours"):
        spec(max_hours=10_000.0)


# ----- a repeated launch of a job scored before ----------------------------------------------------------------
def test_a_repeated_launch_of_a_scored_job_names_the_run_and_writes_its_record(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from arena.launch_command import launch_command
    from launch.backends.local import LocalBackend
    from scoring.items import items_path
    from scoring.record import build_run
    from tests.support.scoring import paired_items, run_info

    fixture = Path(__file__).resolve().parent / "fixtures" / "training" / "echo-word"
    monkeypatch.setenv("ARENA_LAUNCH_DIR", str(tmp_path / "launch"))
    record, items = build_run(paired_items(3, per_domain=4, clusters=0, effect=0.3),
                              run_info("echo-word", items=32, resamples=200, commit=SHA))
    job = spec(requested_by="local")
    backend, store = LocalBackend(tmp_path / "suite", tmp_path / "launch"), FolderStore(tmp_path / "launch" / "records")
    store.create(replace(JobRecord.new(job, "local"), state="succeeded", backend_job=job.name))  # its run unnoted
    backend.job_folder(job.name).mkdir(parents=True)
    (backend.job_folder(job.name) / "log").write_text("\n".join(["arena-job: succeeded", *result_block.encode(
        {"record": record, "items": items})]) + "\n")
    results = tmp_path / "results"
    first = CliRunner().invoke(launch_command, [str(fixture), "--commit", SHA, "--results", str(results)])
    assert first.exit_code == 0, first.output
    written = results / "echo-word" / f"{record['run_id']}.json"
    assert json.loads(written.read_text()) == record and json.loads(items_path(written).read_text()) == items
    assert f"run {record['run_id']} of job {job.name}" in first.stderr
    assert str(backend.artifacts(job)) in first.stderr and first.stdout.splitlines()[-1] == str(written)
    assert store.get("echo-word", SHA).record.run_id == record["run_id"]  # noted on the job's record
    again = CliRunner().invoke(launch_command, [str(fixture), "--commit", SHA, "--results", str(tmp_path / "other")])
    assert again.exit_code == 0 and f"already scored (run {record['run_id']})" in again.stderr
    assert (tmp_path / "other" / "echo-word" / f"{record['run_id']}.json").is_file()


def test_a_scored_job_whose_log_lost_its_results_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from arena.launch_command import launch_command
    from launch.backends.local import LocalBackend

    fixture = Path(__file__).resolve().parent / "fixtures" / "training" / "echo-word"
    monkeypatch.setenv("ARENA_LAUNCH_DIR", str(tmp_path / "launch"))
    job = spec(requested_by="local")
    FolderStore(tmp_path / "launch" / "records").create(replace(JobRecord.new(job, "local"), state="succeeded"))
    LocalBackend(tmp_path / "suite", tmp_path / "launch").job_folder(job.name).mkdir(parents=True)
    (LocalBackend(tmp_path / "suite", tmp_path / "launch").job_folder(job.name) / "log").write_text("cut\n")
    done = CliRunner().invoke(launch_command, [str(fixture), "--commit", SHA, "--results", str(tmp_path / "r")])
    assert done.exit_code == 1 and "holds no complete result block" in done.stderr
    assert not (tmp_path / "r").exists()


# ----- the job's result -----------------------------------------------------------------------------------------
def test_the_job_result_is_the_record_score_wrote_with_the_items_file_named_beside_it(tmp_path: Path) -> None:
    from launch.job_run import RESULT_FILE, JobPaths, JobRun
    from launch.job_status import JobStatus, Segment
    from scoring.record import write_run
    from taskpkg.layouts import RESULTS_DIR, items_path, record_path
    from tests.support.scoring import paired_items, run_info

    paths = JobPaths(tmp_path / "echo-word", tmp_path / "out", "suite")
    written = write_run(paths.score / RESULTS_DIR, paired_items(2, per_domain=4, clusters=0),
                        run_info("echo-word", items=32, resamples=200, commit=SHA))
    place = record_path(paths.score / RESULTS_DIR, "echo-word", written.run_id)
    runner = JobRun(spec(), paths, say=lambda line: None)
    runner.status = JobStatus(segments=[Segment(wall_s=1.0)])
    payload = runner._result()
    assert payload["record"] == json.loads(place.read_text())
    assert payload["items"] == json.loads(items_path(place).read_text())
    assert json.loads((paths.out / RESULT_FILE).read_text()) == payload
    items_path(place).unlink()  # a record without its items file: the result says so by leaving them out
    assert "items" not in runner._result()
