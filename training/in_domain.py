"""The in-domain lift: after training, the base and the trained model play the same held-out instances of the
environment (split off before training, never trained on), K samples each with the same seeds per (instance, sample).
The lift is the mean over instances of trained minus base, with a paired bootstrap interval over instances
(`estimates.bootstrap.paired_difference`): what training changed on this environment, beside the transfer score on
the held-out suite that scoring reports.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from estimates.bootstrap import paired_difference
from sandbox.sandbox import Sandbox
from taskpkg.atomic_files import write_json_atomic
from taskpkg.layouts import ADAPTER_DIR
from taskpkg.package import TaskPackage
from training.evaluate import Sample, chat_settings, open_backends, play, release
from training.metrics import keep_transcripts
from training.recipe import Recipe

REPORT_FILE = "in-domain.json"
CONFIDENCE = 0.95


def in_domain_lift(sandbox: Sandbox, package: TaskPackage, recipe: Recipe, base: str, out: Path,
                   heldout: list[int], say: Callable[[str], None] = print) -> dict[str, Any] | None:
    """Both arms on the first `in_domain.instances` held-out instances (the trained one with `out`/adapter), written
    to `out`/in-domain.json; None when the recipe asks for none. The manifest keeps it without the episodes."""
    settings = recipe.in_domain
    instances = heldout[: settings.instances]
    if not instances:
        return None
    k = settings.samples
    say(f"in-domain lift: base and trained model on {len(instances)} held-out instance(s), {k} sample(s) "
        "each")
    base_backend, trained_backend = open_backends(recipe, base, out / ADAPTER_DIR)
    assert trained_backend is not None
    chat = chat_settings(recipe, settings.max_new_tokens)
    jobs = [(i, s) for i in instances for s in range(k)]
    concurrency = recipe.episodes.concurrency
    arms = {"base": play(sandbox, package, jobs, base_backend, chat, concurrency, "in-domain-base",
                         keep=keep_transcripts(out, "in-domain-base")),
            "trained": play(sandbox, package, jobs, trained_backend, chat, concurrency, "in-domain-trained",
                            keep=keep_transcripts(out, "in-domain-trained"))}
    release(base_backend, trained_backend)
    report = lift(arms, instances, k)
    write_json_atomic(out / REPORT_FILE, report, sort_keys=True)
    say(one_line(report))
    return {key: value for key, value in report.items() if key != "episodes"} | {"line": one_line(report)}


def lift(arms: dict[str, list[Sample]], instances: list[int], k: int) -> dict[str, Any]:
    """The paired comparison; an instance with an unjudged base episode is left out of both arms (counted), an
    unjudged trained episode scores 0 (as scoring treats them)."""
    by_arm = {arm: {(s.instance, s.sample): s for s in samples} for arm, samples in arms.items()}
    kept = [i for i in instances if all(by_arm["base"][(i, s)].reward is not None for s in range(k))]
    base = [[by_arm["base"][(i, s)].reward or 0.0 for s in range(k)] for i in kept]
    trained = [[by_arm["trained"][(i, s)].reward or 0.0 for s in range(k)] for i in kept]
    report: dict[str, Any] = {"instances": kept, "samples": k, "excluded": [i for i in instances if i not in kept],
                    "confidence": CONFIDENCE}
    if not kept:
        return {**report, "lift": None}
    estimate = paired_difference(base, trained, CONFIDENCE)
    report.update({"base_mean": round(sum(map(sum, base)) / (len(kept) * k), 4),
                   "trained_mean": round(sum(map(sum, trained)) / (len(kept) * k), 4),
                   "lift": round(estimate.value, 4), "interval": [round(estimate.low, 4), round(estimate.high, 4)],
                   "episodes": {arm: [s.to_dict() for s in samples] for arm, samples in arms.items()}})
    return report


def one_line(report: dict[str, Any] | None) -> str:
    """The lift in one line (the PR comment's and the job's)."""
    if not report:
        return "in-domain lift: not measured"
    if report.get("lift") is None:
        return f"in-domain lift: not measured (the base arm errored on all {len(report['excluded'])} instance(s))"
    low, high = report["interval"]
    return (f"in-domain lift {report['lift'] * 100:+.1f} points (95% interval [{low * 100:+.1f}, {high * 100:+.1f}]; "
            f"base {report['base_mean'] * 100:.1f}% → trained {report['trained_mean'] * 100:.1f}% on "
            f"{len(report['instances'])} held-out instance(s) × {report['samples']})")
