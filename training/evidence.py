"""Evidence that a run's updates happened: per step the groups whose rewards varied, the tokens that carried a
non-zero advantage and the gradient norm (metrics.jsonl); at the end, which LoRA tensors moved and whether the loss and
the weights stayed finite. A run without that evidence ends `no_effective_update` and is never scored."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from taskpkg.run_manifest import RunStatus, TrainingManifest

if TYPE_CHECKING:  # torch is imported by the trainer that hands the model over
    import torch

__all__ = ["RunStatus", "closing_block", "lora_change", "lora_snapshot", "no_update_reason", "update_evidence"]


def lora_snapshot(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A CPU copy of the trainable (LoRA) tensors, to compare with after training."""
    return {
        name: p.detach().to("cpu", copy=True)
        for name, p in model.named_parameters()
        if p.requires_grad
    }


def lora_change(before: dict[str, torch.Tensor], model: torch.nn.Module) -> dict[str, Any]:
    """How the trainable tensors moved since `before`: LoRA-B (zero at the start) and LoRA-A tensors that changed,
    the largest absolute change of any element, and whether every weight is finite."""
    after = dict(model.named_parameters())
    counts = {"lora_b_tensors": 0, "lora_b_changed": 0, "lora_a_tensors": 0, "lora_a_changed": 0}
    largest, finite = 0.0, True
    for name, old in before.items():
        new = after[name].detach().to("cpu").float()
        if not bool(new.isfinite().all()):
            finite = False
            continue
        change = float((new - old.float()).abs().max()) if new.numel() else 0.0
        largest = max(largest, change)
        kind = "lora_b" if "lora_B" in name else "lora_a" if "lora_A" in name else None
        if kind:
            counts[f"{kind}_tensors"] += 1
            counts[f"{kind}_changed"] += change > 0
    return {**counts, "max_change": largest, "weights_finite": finite}


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def update_evidence(lines: list[dict[str, Any]], lora: dict[str, Any]) -> dict[str, Any]:
    """The run's evidence from its step lines and the LoRA change, with what is missing for an effective update."""
    judged = sum(line.get("judged", 0) for line in lines)
    lows = [line["reward_min"] for line in lines if line.get("reward_min") is not None]
    highs = [line["reward_max"] for line in lines if line.get("reward_max") is not None]
    total = sum(line["reward_mean"] * line.get("judged", 0) for line in lines if line.get("reward_mean") is not None)
    bad_loss = [line["step"] for line in lines if "loss" in line and not _finite(line["loss"])]
    evidence = {
        "steps": len(lines),
        "rewards": {
            "judged": judged,
            "min": min(lows, default=None),
            "max": max(highs, default=None),
            "mean": round(total / judged, 4) if judged else None,
        },
        "groups": sum(line.get("groups", 0) for line in lines),
        "groups_with_signal": sum(line.get("groups_with_signal", 0) for line in lines),
        "signal_tokens": sum(line.get("signal_tokens", 0) for line in lines),
        "steps_with_gradient": sum(_finite(line.get("grad_norm")) and line["grad_norm"] > 0 for line in lines),
        "losses_finite": not bad_loss,
        **lora,
    }
    missing = []
    if not evidence["groups_with_signal"]:
        missing.append("no group of rollouts had rewards that differed (every advantage was 0)")
    elif not evidence["signal_tokens"]:
        missing.append("no generated token carried a non-zero advantage")
    if not evidence["steps_with_gradient"]:
        missing.append("no optimizer step had a non-zero gradient")
    if bad_loss:
        missing.append(f"the loss was not finite at step {bad_loss[0]}")
    if not lora.get("weights_finite", True):
        missing.append("a LoRA weight is not finite")
    if not lora.get("lora_b_changed"):
        missing.append(f"none of the {lora.get('lora_b_tensors', 0)} LoRA-B tensors changed")
    evidence["effective"], evidence["missing"] = not missing, missing
    return evidence


def no_update_reason(evidence: dict[str, Any]) -> str:
    """Why a run has no effective update, and what to look at."""
    return (
        "no effective update: " + "; ".join(evidence["missing"]) + ". GRPO learns only from groups whose rewards "
        "differ: make the verifier give partial credit, or make the task neither impossible nor trivial for the "
        "base model (preflight.json, transcripts/); the run is not scored"
    )


def closing_block(manifest: TrainingManifest) -> str:
    """The end of a run in one block: reward spread, the share of groups with signal, the update, the verdict."""
    evidence = manifest.update_evidence
    lines = ["run summary"]
    if evidence:
        rewards = evidence["rewards"]
        spread = (
            "no judged rollout"
            if not rewards["judged"]
            else f"{rewards['judged']} judged, from {rewards['min']:.3f} to {rewards['max']:.3f} (mean "
            f"{rewards['mean']:.3f})"
        )
        share = evidence["groups_with_signal"] / evidence["groups"] if evidence["groups"] else 0.0
        lines += [
            f"  rewards: {spread}",
            f"  groups with signal: {evidence['groups_with_signal']} of {evidence['groups']} ({share:.0%}); "
            f"tokens with a non-zero advantage: {evidence['signal_tokens']}",
            f"  optimizer steps with a non-zero gradient: {evidence['steps_with_gradient']} of "
            f"{evidence['steps']}; loss {'finite' if evidence['losses_finite'] else 'NOT finite'}",
            f"  LoRA-B tensors changed: {evidence.get('lora_b_changed', 0)} of "
            f"{evidence.get('lora_b_tensors', 0)} (largest change {evidence.get('max_change', 0.0):.3g}); "
            f"weights {'finite' if evidence.get('weights_finite', True) else 'NOT finite'}",
        ]
    ended = "trained" if manifest.status == RunStatus.COMPLETED else f"{manifest.status}: {manifest.reason}"
    lines.append("  verdict: " + ended)
    return "\n".join(lines)
