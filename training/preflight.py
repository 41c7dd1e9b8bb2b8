"""The learnability pre-flight: before any GRPO step, is there anything to learn?

GRPO learns only from groups whose G rollouts score differently. The pre-flight plays G samples (the recipe's
`grpo.num_generations`) of the base model on each of a batch of training instances, through the same harness, sampling
and backend as the rollouts, and asks `estimates.learnability` whether the share of signal-carrying groups could
reach the recipe's threshold. It samples batch after batch until the evidence decides or `max_instances` is reached,
and refuses only when the upper confidence bound on that share is below the threshold (inconclusive: it trains).

The report (per instance: samples, pass rate, whether the group carries signal, pass@1 and pass@G, mean turns, tool
errors, verifier errors; overall: pass@1 and pass@G with intervals, the signal-carrying share with its bounds, the
samples it took, the verdict) is written to `preflight.json` and cached by (package digest, base model revision,
the settings that shape its episodes), so a resumed or repeated run does not play it again.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agents.backends.local_dtype import default_dtype
from estimates import binomial
from estimates.groups import has_signal, judged, pass_at_k, pass_rate_estimate, passes
from estimates.learnability import CONTINUE, REFUSE, SignalTest, judge
from sandbox.sandbox import EpisodeResult, Sandbox
from taskpkg.atomic_files import write_json_atomic
from taskpkg.layouts import ADAPTER_DIR, CHECKPOINTS_DIR, MANIFEST_FILE
from taskpkg.package import TaskPackage
from taskpkg.run_manifest import RunStatus, TrainingManifest
from training.evaluate import Sample, chat_settings, open_backends, play, release
from training.metrics import keep_transcripts
from training.recipe import Recipe

VERSION = 1  # bump when what the pre-flight plays or reports changes: cached reports are then played again
CACHE_VARIABLE = "ARENA_PREFLIGHT_CACHE"
REPORT_FILE = "preflight.json"


def cache_key(package_digest: str, base_revision: str, recipe: Recipe) -> str:
    """What a pre-flight's outcome depends on: the package, the model, the harness and sampling settings."""
    grpo = recipe.grpo
    identity = {"version": VERSION, "package": package_digest, "model": base_revision,
                "preflight": asdict(recipe.preflight), "episodes": asdict(recipe.episodes),
                "generation": recipe.generation.backend, "dtype": _dtype(recipe),
                "sampling": {k: getattr(grpo, k) for k in ("num_generations", "temperature", "top_p",
                                                           "max_completion_length", "enable_thinking", "seed")}}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:24]


def _dtype(recipe: Recipe) -> str:
    """The type the pre-flight's model runs in (vLLM: the engine's own choice)."""
    return "vllm" if recipe.generation.backend == "vllm" else default_dtype()


def preflight_cache() -> Path:
    """Where reports are cached: $ARENA_PREFLIGHT_CACHE, else $XDG_CACHE_HOME/posttrain-arena/preflight."""
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "posttrain-arena" / "preflight"


def cached_report(key: str, out: Path | None) -> dict[str, Any] | None:
    """A report made earlier with the same key: in the run's folder (a resume), else in the cache."""
    for path in ([out / REPORT_FILE] if out else []) + [preflight_cache() / f"{key}.json"]:
        try:
            report = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(report, dict) and report.get("key") == key:
            return report
    return None


def preflight(sandbox: Sandbox, package: TaskPackage, recipe: Recipe, base: str, package_digest: str,
              base_revision: str, instances: list[int], out: Path | None,
              say: Callable[[str], None] = print) -> dict[str, Any]:
    """The pre-flight's report (cached, or played now and cached); `report["verdict"]["decision"]` is refuse, go or
    inconclusive."""
    key = cache_key(package_digest, base_revision, recipe)
    report = cached_report(key, out)
    if report is not None:
        say(f"pre-flight: reused ({report['samples']} samples, verdict {report['verdict']['decision']})")
    else:
        report = {"key": key, "model": base_revision, "package_digest": package_digest,
                  **_play(sandbox, package, recipe, base, instances, say, keep_transcripts(out, "preflight"))}
        write_json_atomic(preflight_cache() / f"{key}.json", report, sort_keys=True)
    if out is not None:
        write_json_atomic(out / REPORT_FILE, report, sort_keys=True)
    for line in table(report):
        say(line)
    return report


def _play(sandbox: Sandbox, package: TaskPackage, recipe: Recipe, base: str, instances: list[int],
          say: Callable[[str], None], keep: Callable[[EpisodeResult, int], None] | None = None) -> dict[str, Any]:
    settings = recipe.preflight
    g, batch = recipe.grpo.num_generations, settings.instances
    limit = min(settings.max_instances, len(instances))
    looks = max(1, math.ceil(limit / batch))
    test = SignalTest(settings.min_signal_share, settings.confidence, looks)
    backend, _ = open_backends(recipe, base)
    chat = chat_settings(recipe, settings.max_new_tokens)
    samples: list[Sample] = []
    for look in range(looks):
        chosen = instances[look * batch: min(limit, (look + 1) * batch)]
        say(f"pre-flight: {g} samples on each of {len(chosen)} training instance(s) (look {look + 1} of "
            f"{looks})")
        samples += play(sandbox, package, [(i, k) for i in chosen for k in range(g)], backend, chat,
                        recipe.episodes.concurrency, "preflight", keep=keep)
        verdict = judge(list(_groups(samples).values()), test, last_look=look == looks - 1)
        if verdict.decision != CONTINUE:
            break
    release(backend)
    return {**summary(samples, g, test.confidence), "threshold": test.threshold, "confidence": test.confidence,
            "looks": looks, "verdict": {"decision": verdict.decision, "reason": verdict.reason,
                                        "signal_share": [round(verdict.low, 4), round(verdict.high, 4)],
                                        "groups": verdict.groups, "with_signal": verdict.with_signal}}


def _groups(samples: list[Sample]) -> dict[int, list[float | None]]:
    groups: dict[int, list[float | None]] = {}
    for s in samples:
        groups.setdefault(s.instance, []).append(s.reward)
    return groups


def summary(samples: list[Sample], g: int, confidence: float) -> dict[str, Any]:
    """Per instance and overall: pass rates, signal, pass@1 and pass@G with intervals, turns and errors."""
    rows = []
    for instance, rewards in _groups(samples).items():
        mine = [s for s in samples if s.instance == instance]
        n, c = len(judged(rewards)), passes(rewards)
        rows.append({"instance": instance, "samples": len(rewards), "judged": n,
                     "pass_rate": round(c / n, 4) if n else None, "signal": has_signal(rewards),
                     "pass_at_g": pass_at_k(n, c, min(g, n)) if n else None,
                     "mean_reward": round(sum(judged(rewards)) / n, 4) if n else None,
                     "turns": round(sum(s.turns for s in mine) / len(mine), 2),
                     "tool_errors": sum(s.invalid_calls for s in mine),
                     "verifier_errors": sum(s.reward is None for s in mine)})
    rated = [r for r in rows if r["judged"]]
    report: dict[str, Any] = {"instances": rows, "samples": len(samples), "group_size": g}
    if rated:
        counts = [(passes(group), len(judged(group))) for group in _groups(samples).values()]
        report["pass_at_1"] = pass_rate_estimate(counts, confidence).to_dict()
        solved = sum(r["pass_at_g"] == 1.0 for r in rated if r["judged"] == g)
        full = sum(r["judged"] == g for r in rated)
        low, high = binomial.interval(solved, full, confidence) if full else (0.0, 1.0)
        report["pass_at_g"] = {"value": round(solved / full, 4) if full else None,
                               "interval": [round(low, 4), round(high, 4)], "units": full, "confidence": confidence}
    return report


def table(report: dict[str, Any]) -> list[str]:
    """The report as terminal lines: one row per instance, then the totals and the verdict."""
    at_g = f"pass@{report['group_size']}"
    lines = [f"{'instance':>8} {'pass rate':>9} {'signal':>6} {at_g:>7} {'turns':>5} {'tool err':>8} {'verif err':>9}"]
    for row in report["instances"]:
        rate = "-" if row["pass_rate"] is None else f"{row['pass_rate']:.2f}"
        at_g = "-" if row["pass_at_g"] is None else f"{row['pass_at_g']:.2f}"
        lines.append(f"{row['instance']:>8} {rate:>9} {'yes' if row['signal'] else 'no':>6} {at_g:>7} "
                     f"{row['turns']:>5.1f} {row['tool_errors']:>8} {row['verifier_errors']:>9}")
    lines.append("pre-flight: " + one_line(report))
    return lines


def one_line(report: dict[str, Any]) -> str:
    """The report in one line (the PR comment's)."""
    verdict = report["verdict"]
    low, high = verdict["signal_share"]
    parts = [f"{verdict['with_signal']}/{verdict['groups']} groups of {report['group_size']} carry signal "
             f"(share {low:.2f}–{high:.2f}, threshold {report['threshold']:.2f})"]
    for name, key in (("pass@1", "pass_at_1"), (f"pass@{report['group_size']}", "pass_at_g")):
        value = report.get(key)
        if value and value["value"] is not None:
            parts.append(f"{name} {value['value']:.2f} [{value['interval'][0]:.2f}, {value['interval'][1]:.2f}]")
    parts.append(f"{report['samples']} samples")
    return f"{verdict['decision']}: " + ", ".join(parts)


def refusal(report: dict[str, Any]) -> str | None:
    """Why training would teach nothing, or None."""
    verdict = report["verdict"]
    if verdict["decision"] != REFUSE:
        return None
    return f"pre-flight: {verdict['reason']} ({report['samples']} samples; --skip-preflight trains anyway)"


def preflight_gate(sandbox: Sandbox, package: TaskPackage, recipe: Recipe, base: str, instances: list[int],
                   out: Path, skip: bool, manifest: TrainingManifest, say: Callable[[str], None],
                   overridden: dict[str, Any] | None = None) -> tuple[RunStatus, str | None]:
    """The pre-flight as the run's first phase: ("completed", None) to train, ("stopped", why) when it refuses.
    Skipped, it keeps on record the refusal it overrides (`overridden`), if this folder held one."""
    if skip:
        manifest.preflight = {"skipped": True, **({"overridden": overridden} if overridden else {})}
        return RunStatus.COMPLETED, None
    report = preflight(sandbox, package, recipe, base, manifest.package_digest or "",
                       (manifest.base_model or {})["revision"], instances, out, say)
    manifest.preflight = {k: v for k, v in report.items() if k != "instances"} | {"line": one_line(report)}
    why = refusal(report)
    return (RunStatus.STOPPED, why) if why else (RunStatus.COMPLETED, None)


def preflight_refusal(out: Path) -> dict[str, Any] | None:
    """The pre-flight of a run in `out` that the pre-flight stopped before any training (nothing else to keep)."""
    manifest = TrainingManifest.read(out / MANIFEST_FILE)
    if manifest is None:
        return None
    report = manifest.preflight or {}
    trained = any((out / CHECKPOINTS_DIR).glob("checkpoint-*")) or (out / ADAPTER_DIR).exists()
    refused = (report.get("verdict") or {}).get("decision") == REFUSE
    if manifest.status == RunStatus.STOPPED and refused and not trained:
        return report
    return None
