"""The job's writers against an object-store mount: a real FUSE filesystem (tests/support/object_store_fs.py) that
refuses appends, writes in the middle of a file and renames of folders, as S3/GCS/R2 mounts do. A stand-in
directory with a Python wrapper would only test the wrapper; through FUSE the kernel hands the job's own system calls
to the filesystem, so what passes here is what the job really asks of a bucket mount.

The job works on local disk and mirrors finished files (launch.artifacts); killed mid-training, it is recovered on a
new machine (an empty local folder) from the bucket alone, and a job that already finished prints the same result
block again. Writing the old way (appending, renaming the adapter folder into place) on the mount is refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from launch import artifacts, job_run, result_block
from launch.job_run import JobPaths, JobRun
from launch.spec import JobSpec

pytestmark = pytest.mark.slow  # a FUSE mount and a few short jobs: seconds

ROOT = Path(__file__).resolve().parent.parent
SPEC = JobSpec("echo-word", "0123456789abcdef0123456789abcdef01234567", "cpu-small")
# Each fake phase writes the way the real one does: training appends metrics.jsonl, writes checkpoints and renames
# the adapter folder into place; its stderr is the package's output. The first training run dies after a checkpoint.
FAKE_PHASE = r'''
import json, pathlib, sys, time
phase, out = sys.argv[1], pathlib.Path(sys.argv[2])
if phase == "gate":
    print(json.dumps({"verdict": "clean"}))
elif phase == "train":
    train = out / "train"
    train.mkdir(parents=True, exist_ok=True)
    with open(train / "metrics.jsonl", "a") as metrics:
        metrics.write(json.dumps({"step": 1}) + "\n")
    checkpoint = train / "checkpoints" / "checkpoint-1"
    if "--resume" not in sys.argv:
        checkpoint.mkdir(parents=True)
        (checkpoint / "adapter_model.safetensors").write_bytes(b"weights" * 1000)
        (checkpoint / "trainer_state.json").write_text("{}")
        print("PACKAGE-SECRET printed by the verifier", file=sys.stderr)
        time.sleep(1.5)
        sys.exit(137)
    assert (checkpoint / "trainer_state.json").is_file(), "resumed without its checkpoint"
    staging = train / ".adapter-staging"
    staging.mkdir()
    (staging / "adapter_config.json").write_text("{}")
    staging.rename(train / "adapter")
    (train / "manifest.json").write_text(json.dumps({"status": "completed", "gpus": 0}))
else:
    results = out / "score" / "results" / "echo-word"
    results.mkdir(parents=True)
    (results / "run-1.json").write_text(json.dumps({"run_id": "run-1", "environment": "echo-word"}))
'''


@pytest.fixture
def bucket(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """An object-store mount: (mount point, log of refused calls)."""
    try:
        import fuse  # noqa: F401
    except (ImportError, OSError) as exc:  # fusepy missing, or libfuse (Debian's libfuse2) not installed
        message = f"FUSE is not available here ({exc}): pip install fusepy, apt-get install libfuse2"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    backing, mount, refusals = tmp_path / "backing", tmp_path / "mount", tmp_path / "refusals.log"
    backing.mkdir()
    mount.mkdir()
    server = subprocess.Popen([sys.executable, "-m", "tests.support.object_store_fs", str(backing), str(mount),
                               str(refusals)], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 15
    while not os.path.ismount(mount):
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            pytest.skip(f"could not mount a FUSE filesystem here: {server.communicate()[1][-500:]}")
        time.sleep(0.1)
    try:
        yield mount, refusals
    finally:
        subprocess.run(["umount", str(mount)], check=False, capture_output=True)
        server.wait(timeout=15)


def fake_phases(script: Path) -> object:
    real = job_run.phase_commands

    def commands(spec: JobSpec, paths: JobPaths) -> dict[str, list[str]]:
        resume = ["--resume"] if "--resume" in real(spec, paths)["train"] else []
        return {phase: [sys.executable, str(script), phase, str(paths.out), *(resume if phase == "train" else [])]
                for phase in job_run.PHASES}

    return commands


def run_job(work: Path, mount: Path) -> tuple[int, list[str]]:
    said: list[str] = []
    paths = JobPaths(ROOT / "tests" / "fixtures" / "training" / "echo-word", work, "unused", bucket=mount)
    return JobRun(SPEC, paths, said.append, env={}).run(), said


def test_the_object_store_mount_refuses_what_s3_refuses(bucket: tuple[Path, Path]) -> None:
    mount, refusals = bucket
    (mount / "metrics.jsonl").write_text('{"step": 1}\n')  # a new file, start to end: fine
    with pytest.raises(OSError), open(mount / "metrics.jsonl", "a") as metrics:
        metrics.write('{"step": 2}\n')  # appending, as training writes metrics.jsonl
    (mount / ".adapter-staging").mkdir()
    (mount / ".adapter-staging" / "adapter_config.json").write_text("{}")
    with pytest.raises(OSError):
        (mount / ".adapter-staging").rename(mount / "adapter")  # the adapter folder renamed into place
    with pytest.raises(OSError), open(mount / "metrics.jsonl", "r+b") as handle:
        handle.seek(3)
        handle.write(b"x")
    (mount / "metrics.jsonl").write_text("replaced whole\n")  # truncate-and-write: fine
    kinds = sorted({line.split()[0] for line in refusals.read_text().splitlines()})
    assert kinds == ["append", "rename-folder", "rewrite"]  # r+ then a write in the middle: a rewrite


def test_a_job_on_a_bucket_mount_survives_a_preemption_and_resumes_from_the_bucket(
        bucket: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mount, refusals = bucket
    script = tmp_path / "fake_phase.py"
    script.write_text(FAKE_PHASE)
    monkeypatch.setattr(job_run, "phase_commands", fake_phases(script))
    monkeypatch.setattr(job_run, "HEARTBEAT_S", 0.3)
    monkeypatch.setattr(artifacts, "QUIET_S", 0.1)
    folder = mount / SPEC.artifact_path

    # The first machine: the gate passes, training writes a checkpoint and dies (a preemption, as far as the job
    # can tell); its heartbeat mirrored the checkpoint to the bucket before that.
    code, said = run_job(tmp_path / "machine-1", folder)
    assert code == 1 and any("train failed (exit 137)" in line for line in said)
    assert not any("PACKAGE-SECRET" in line for line in said)  # the package's output is in the phase log only
    number, published = artifacts.Mirror(tmp_path / "unused", folder).manifest()
    assert number >= 2 and "train/checkpoints/checkpoint-1/trainer_state.json" in published
    assert {"job.json", "gate.json", "train/metrics.jsonl", "logs/train.log"} <= set(published)
    shutil.rmtree(tmp_path / "machine-1")  # that machine is gone

    # A new machine: everything is read back from the bucket, training resumes from the checkpoint, the job ends.
    code, said = run_job(tmp_path / "machine-2", folder)
    assert code == 0, said
    assert said[0].endswith(f"read back from {folder}") and not said[0].startswith("arena-job: 0 ")
    assert "arena-job: gate: done in an earlier run, kept" in said
    block = [line for line in said if line.startswith(result_block.PREFIX)]
    assert said[-len(block):] == block  # the result block is the last thing the job printed
    payload = result_block.decode("\n".join(said))
    assert payload["record"]["run_id"] == "run-1" and payload["job"]["segments"] == 2
    restored = tmp_path / "machine-2" / "train" / "metrics.jsonl"
    assert restored.read_text().count("\n") == 2  # appended to on local disk, after the first run's line

    # A third machine after the end (a recovery that came late) prints the very same block, and trains nothing.
    code, again = run_job(tmp_path / "machine-3", folder)
    assert code == 0 and [line for line in again if line.startswith(result_block.PREFIX)] == block
    assert not any("started" in line for line in again)
    assert refusals.read_text() == ""  # the job never asked the mount for anything it refuses
    log = artifacts.Mirror(tmp_path / "machine-4", folder)
    log.restore()
    assert "PACKAGE-SECRET" in (tmp_path / "machine-4" / "logs" / "train.log").read_text()


def test_a_copy_cut_short_is_never_read_back(bucket: tuple[Path, Path], tmp_path: Path) -> None:
    mount, _ = bucket
    work = tmp_path / "work"
    (work / "train").mkdir(parents=True)
    (work / "train" / "metrics.jsonl").write_text("one\n")
    mirror = artifacts.Mirror(work, mount)
    assert mirror.publish(final=True) == 1
    _, entries = mirror.manifest()
    (work / "train" / "metrics.jsonl").write_text("one\ntwo\n")
    assert mirror.publish(final=True) == 1
    # A preemption during the next object's upload: a short object under its name, no manifest naming it yet.
    (work / "train" / "metrics.jsonl").write_text("one\ntwo\nthree\n")
    digest = artifacts._hash(work / "train" / "metrics.jsonl")
    (mount / "objects" / digest).write_bytes(b"one\n")
    fresh = tmp_path / "fresh"
    assert artifacts.Mirror(fresh, mount).restore() == 1
    assert (fresh / "train" / "metrics.jsonl").read_text() == "one\ntwo\n"  # the last whole version
    assert mirror.publish(final=True) == 1  # the short object is replaced, then named
    assert artifacts.Mirror(tmp_path / "fresh-2", mount).restore() == 1
    assert (tmp_path / "fresh-2" / "train" / "metrics.jsonl").read_text() == "one\ntwo\nthree\n"
    assert entries["train/metrics.jsonl"].size == 4
