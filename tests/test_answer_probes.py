"""The answer probes (ARENA713-716): the records of an answer and their near misses, the constant answer, and, on the
real engine, each broken package of tests/fixtures/broken/ caught by exactly its check while sound packages pass."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from sandbox.outcomes import EpisodeOutcome, EpisodeResult
from sandbox.sandbox import Sandbox
from sandbox.workspace_files import WorkspaceFile, read_workspace, workspace_archive
from taskpkg.loader import load_package
from validators.dynamic import DEFAULT_INSTANCES, pick_instances, plan, run_dynamic_checks
from validators.dynamic.answer_probes import AnswerTrial, constant_summary, judge_answer_trials, plan_answer_trials
from validators.dynamic.answers import answer_of, constant_answers, near_misses, same_answer

BROKEN = Path(__file__).resolve().parent / "fixtures" / "broken"
ANSWER_CHECKS = {"ARENA713", "ARENA714", "ARENA715", "ARENA716"}


def files(**by_name: bytes) -> dict[str, WorkspaceFile]:
    return {name.replace("_", "."): WorkspaceFile(data) for name, data in by_name.items()}


def test_the_answer_is_what_the_oracle_created_or_changed() -> None:
    initial = files(readings_csv=b"id,value\n", notes_txt=b"a\n")
    final = {**initial, **files(flags_csv=b"id,flag\n", notes_txt=b"b\n")}
    assert set(answer_of(initial, final) or {}) == {"flags.csv", "notes.txt"}
    assert answer_of(None, final) is None


def test_near_misses_of_a_csv_change_drop_and_add_one_row() -> None:
    answer = files(flags_csv=b"id,flag,score\r\nA1,ok,3\r\nA2,high,4.50\r\n")
    made = {kind: found[0]["flags.csv"].data for kind, found in near_misses(answer).items()}
    assert made == {"changed": b"id,flag,score\r\nA1,ok,3\r\nA2,high-x,5.50\r\n",
                    "dropped": b"id,flag,score\r\nA1,ok,3\r\n",
                    "added": b"id,flag,score\r\nA1,ok,3\r\nA2,high,4.50\r\nA2-x,high-x,5.50\r\n"}
    assert all(not same_answer(answer, found[0]) for found in near_misses(answer).values())


def test_near_misses_of_json_use_the_first_nonempty_list_and_of_text_its_lines() -> None:
    report = files(audit_json=json.dumps({"open": [], "rules": [{"id": 7, "allow": True}], "total": 1}).encode())
    changed = json.loads(near_misses(report)["changed"][0]["audit.json"].data)
    assert changed == {"open": [], "rules": [{"id": 7, "allow": False}], "total": 1}  # the first field (a key) kept
    assert json.loads(near_misses(report)["dropped"][0]["audit.json"].data)["rules"] == []
    keyed = near_misses(files(totals_json=b'{"north": 3, "south": 4}'))
    assert set(keyed) == {"changed", "dropped"}  # an extra key in an object may rightly be ignored: no `added`
    single = near_misses(files(answer_txt=b"123\n"))
    assert {k: v[0]["answer.txt"].data for k, v in single.items()} == {"changed": b"124\n", "dropped": b"",
                                                                      "added": b"123\n124\n"}
    assert near_misses(files(blob_bin=b"\xff\xfe")) == {}


def test_constant_answer_sets_each_label_to_its_commonest_value() -> None:
    answers = {0: files(flags_csv=b"id,flag\nA,ok\nB,high\nC,ok\nD,ok\n"),
               5: files(flags_csv=b"id,flag\nE,ok\nF,low\nG,ok\n")}
    constant, described, _source = constant_answers(answers)
    assert described == "flags.csv: every 'flag' set to 'ok'"  # 3 values in 7: a label; the ids are not
    assert constant[0]["flags.csv"].data == b"id,flag\nA,ok\nB,ok\nC,ok\nD,ok\n"
    assert constant[5]["flags.csv"].data == b"id,flag\nE,ok\nF,ok\nG,ok\n"


def test_without_labels_the_constant_answer_is_the_commonest_whole_answer() -> None:
    answers = {0: files(answer_txt=b"7\n"), 3: files(answer_txt=b"9\n"), 4: files(answer_txt=b"9\n")}
    constant, described, source = constant_answers(answers)
    assert described == "the oracle's answer of instance 3 on every instance" and source == 3
    assert {i: a["answer.txt"].data for i, a in constant.items()} == {0: b"9\n", 3: b"9\n", 4: b"9\n"}


def test_plan_spreads_the_answer_probes_over_three_instances() -> None:
    trials = plan_answer_trials([0, 10, 20, 30], None)
    assert {(t.probe, t.instance, t.donor) for t in trials if t.donor is not None} == {
        (probe, a, b) for probe in ("rewritten-inputs", "replay") for a, b in ((0, 10), (10, 20), (20, 30))}
    assert [(t.instance, t.kind) for t in trials if t.probe == "near-miss"] == [
        (0, "changed"), (0, "changed"), (0, "changed"), (10, "dropped"), (20, "added")]
    assert [t.instance for t in trials if t.probe == "constant-answer"] == [0, 10, 20, 30]
    assert [t.probe for t in plan_answer_trials([0], None)] == ["near-miss"] * 3
    assert plan_answer_trials([0, 1], ()) == []


def test_a_default_check_has_twenty_trials_or_more_on_eight_instances() -> None:
    """Eight instances made (ARENA715 compares them all), the oracle on six of them spread among them (the first and
    the last), the generator alone on the other two; every answer probe on the oracle's instances."""
    package = load_package(BROKEN / "arena716-constant-label").package
    assert package is not None
    instances = pick_instances(package.instance_count, DEFAULT_INSTANCES)
    trials = plan(package, instances)
    assert len(instances) == 8 and len(trials) >= 20
    oracled = [t.instance for t in trials if t.role == "oracle"]
    assert len(oracled) == 6 and oracled[0] == instances[0] and oracled[-1] == instances[-1]
    assert sorted(oracled + [t.instance for t in trials if t.role == "instance"]) == instances
    assert {t.instance for t in trials if t.role == "answer"} <= set(oracled)


def test_workspace_files_go_into_a_container_and_come_back(engine: docker.DockerClient) -> None:
    written = {"flags.csv": WorkspaceFile(b"id,flag\n"), "deep/run.sh": WorkspaceFile(b"#!/bin/sh\n", 0o755)}
    client = engine
    container = client.containers.create("debian:bookworm-slim", ["true"])
    try:
        container.put_archive("/", workspace_archive(written))
        assert read_workspace(container) == written
    finally:
        container.remove(force=True)


@pytest.fixture(scope="module")
def sandbox(engine: docker.DockerClient) -> Iterator[Sandbox]:
    with Sandbox(engine) as box:
        yield box


CAUGHT_BY = {
    "arena713-trusts-inputs": "ARENA713",
    "arena714-shape-only": "ARENA714",
    "arena714-spot-check": "ARENA714",
    "arena715-ignores-instance": "ARENA715",
    "arena715-same-answer": "ARENA715",
    "arena716-constant-label": "ARENA716",
}


def test_every_broken_package_is_listed() -> None:
    assert sorted(p.name for p in BROKEN.iterdir() if p.name[8:9] == "-" and p.name[:8] in
                  {c.lower() for c in ANSWER_CHECKS}) == sorted(CAUGHT_BY)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CAUGHT_BY))
def test_broken_package_is_caught_by_exactly_its_check(sandbox: Sandbox, name: str) -> None:
    """The whole dynamic check, as `arena check` runs it (every probe, eight instances): the package's one check
    finds it, no other check finds anything (notes aside), and the answer probes ran on three instances or more."""
    package = load_package(BROKEN / name).package
    assert package is not None
    result = run_dynamic_checks(package, sandbox)
    found = {d.check_id for d in result.diagnostics if d.severity.value != "info"}
    assert found == {CAUGHT_BY[name]}, [(d.check_id, d.message) for d in result.diagnostics]
    (finding, *_) = [d for d in result.diagnostics if d.check_id == CAUGHT_BY[name]]
    assert finding.file and finding.fix
    probed = {t["instance"] for t in result.trials if t["check_id"] in ANSWER_CHECKS - {"ARENA715"}}
    assert len(probed) >= 3


def test_constant_answer_leaves_json_entries_that_are_not_objects() -> None:
    rows = [{"id": n, "flag": "ok" if n % 3 else "bad"} for n in range(6)]
    answers = {0: files(r_json=json.dumps({"items": rows}).encode()), 1: files(r_json=b'{"items": ["x", "y"]}')}
    constant, described, _source = constant_answers(answers)
    assert described == "r.json: every 'flag' set to 'ok'; the rest as instance 0's answer"
    assert json.loads(constant[1]["r.json"].data) == {"items": ["x", "y"]}
    assert {row["flag"] for row in json.loads(constant[0]["r.json"].data)["items"]} == {"ok"}


def test_constant_answer_keeps_only_the_keys_of_what_the_oracle_worked_out() -> None:
    answers = {0: files(routing_csv=b"ticket,queue,deadline\nT1,net,09:00\nT2,net,10:30\n"),
               1: files(routing_csv=b"ticket,queue,deadline\nT7,db,11:00\nT8,net,09:00\n")}
    constant, described, _source = constant_answers(answers)
    assert described == "routing.csv: every 'queue' set to 'net'; routing.csv: every 'deadline' set to '09:00'"
    assert constant[1]["routing.csv"].data == b"ticket,queue,deadline\nT7,net,09:00\nT8,net,09:00\n"


def scored(instance: int, reward: float | None, outcome: str = "scored") -> EpisodeResult:
    return EpisodeResult("pkg", instance, "probe", EpisodeOutcome(outcome), reward)


def test_judging_reads_only_scored_rewards_and_names_the_best_constant_answer() -> None:
    trials = [AnswerTrial("rewritten-inputs", 1, 2), AnswerTrial("replay", 1, 2),
              AnswerTrial("near-miss", 1, kind="dropped"), AnswerTrial("near-miss", 1, kind="dropped", again=1),
              AnswerTrial("constant-answer", 1),
              AnswerTrial("constant-answer", 2), AnswerTrial("constant-answer", 3), AnswerTrial("constant-answer", 4)]
    results = [scored(1, 0.9), scored(1, 0.1), scored(1, 0.0), scored(1, 0.5), scored(1, 0.5), scored(2, 0.8),
               scored(3, 0.8), scored(4, None, "verifier_error")]
    notes = ["whole workspace", "replay", "row 2 dropped", "row 2 dropped", "ok=yes", "ok=yes", "ok=yes", "ok=yes"]
    judged = judge_answer_trials(trials, results, notes, floor=0.1)
    found = {d.check_id: d.message for d in judged.diagnostics}
    assert set(found) == {"ARENA713", "ARENA714", "ARENA716"}, found
    assert judged.failed == {0, 2, 3}  # the rewritten inputs and the unstable near miss; a warning fails nothing
    assert "0.8" in found["ARENA716"] and "instance 2" in found["ARENA716"], found["ARENA716"]
    assert constant_summary(trials, results, notes) == \
        "constant answer (ok=yes): mean 0.70 over 3 instance(s), best 0.8 on instance 2"
