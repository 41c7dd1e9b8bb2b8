"""Training recipes: versioned YAML files (training/recipes/<name>.yaml), validated by a JSON Schema and by the
rules the schema cannot express, with a stable hash of the effective recipe for manifests.

A `Recipe` is a frozen dataclass: one typed, frozen section per top-level key of the schema (`recipe.grpo.steps`,
`recipe.generation.vllm`), made from the validated mapping it keeps as `data` (what the digest and the manifest hold;
`dataclasses.replace(recipe, data=...)` remakes the sections). Plain dataclasses, as every format of the arena: the
JSON Schema stays the published contract and the one validator (its messages name the file and line), and the
classes add no dependency; tests/test_formats.py holds each section's fields to the schema's properties.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeVar

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from taskpkg.strict_yaml import StrictYamlError, YamlDocument, load

NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


class RecipeError(Exception):
    """A recipe cannot be used; the message names the file (and line) and says what to change."""


@dataclass(frozen=True)
class Hardware:
    """Where the recipe runs: gpu refuses to start without a CUDA GPU."""

    accelerator: Literal["cpu", "gpu"]
    gpu_types: tuple[str, ...] | None = None
    min_gpu_memory_gib: int | None = None


@dataclass(frozen=True)
class ModelSettings:
    """The base model, its pinned revision and dtype; `warmup` holds the warm-up's settings (training.warmup)."""

    base: str
    dtype: Literal["float32", "bfloat16"]
    revision: str | None = None
    warmup: dict[str, Any] | None = None


@dataclass(frozen=True)
class LoraSettings:
    """The LoRA adapter trained: rank, alpha, dropout, target modules, and (optionally) the layers it covers."""

    r: int
    alpha: int
    dropout: float
    target_modules: tuple[str, ...]
    layers: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Grpo:
    """TRL's GRPO hyperparameters, every one written out."""

    num_generations: int
    prompts_per_step: int
    steps: int
    learning_rate: float
    beta: float
    temperature: float
    top_p: float
    max_completion_length: int
    max_tool_calling_iterations: int
    mask_truncated_completions: bool
    loss_type: Literal["grpo", "dapo", "dr_grpo", "bnpo"]
    scale_rewards: Literal["group", "batch", "none"]
    enable_thinking: bool
    seed: int
    micro_batch_size: int


@dataclass(frozen=True)
class Vllm:
    """vLLM colocated with training."""

    mode: Literal["colocate"]
    gpu_memory_utilization: float
    enable_sleep_mode: bool
    max_model_length: int


@dataclass(frozen=True)
class Generation:
    """How rollouts are generated: TRL's transformers generation, or vLLM (GPU only)."""

    backend: Literal["transformers", "vllm"]
    vllm: Vllm | None = None


@dataclass(frozen=True)
class Precision:
    """bf16 and gradient checkpointing (GPU recipes)."""

    bf16: bool = False
    gradient_checkpointing: bool = False


@dataclass(frozen=True)
class Episodes:
    """Rollout episodes: a command's time limit, the output an agent sees, episodes run at once."""

    command_timeout_s: float
    output_chars: int
    concurrency: int


@dataclass(frozen=True)
class Seeds:
    """The instance split: the shuffle seed and how many instances are held out."""

    shuffle_seed: int
    heldout: int


@dataclass(frozen=True)
class Checkpoints:
    """How often a checkpoint is saved, and how many are kept."""

    every_steps: int
    keep: int


@dataclass(frozen=True)
class Transcripts:
    """Which rollouts are kept as transcripts: every n-th step, so many per step."""

    every_steps: int = 1
    per_step: int = 0


@dataclass(frozen=True)
class PreflightSettings:
    """The learnability pre-flight (training.preflight)."""

    instances: int
    max_instances: int
    min_signal_share: float
    confidence: float
    max_new_tokens: int


@dataclass(frozen=True)
class InDomainSettings:
    """The in-domain lift on held-out instances (training.in_domain)."""

    instances: int
    samples: int
    max_new_tokens: int


Section = TypeVar("Section")


def section(kind: type[Section], values: Mapping[str, Any]) -> Section:
    """A typed section from its validated mapping (lists become tuples, nested sections their classes)."""
    made: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, list):
            value = tuple(value)
        elif name == "vllm" and isinstance(value, Mapping):
            value = section(Vllm, value)
        made[name] = value
    return kind(**made)


@dataclass(frozen=True)
class Recipe:
    """A validated recipe: its typed sections, its data (the effective mapping), where it came from, and its hash."""

    name: str
    data: dict[str, Any]
    source: str
    overrides: dict[str, Any]
    hardware: Hardware = field(init=False)
    model: ModelSettings = field(init=False)
    lora: LoraSettings = field(init=False)
    grpo: Grpo = field(init=False)
    generation: Generation = field(init=False)
    precision: Precision = field(init=False)
    episodes: Episodes = field(init=False)
    seeds: Seeds = field(init=False)
    checkpoints: Checkpoints = field(init=False)
    transcripts: Transcripts = field(init=False)
    preflight: PreflightSettings = field(init=False)
    in_domain: InDomainSettings = field(init=False)

    def __post_init__(self) -> None:
        for part in fields(self):
            if not part.init:
                kind = SECTIONS[part.name]
                object.__setattr__(self, part.name, section(kind, self.data.get(part.name, {})))

    @property
    def digest(self) -> str:
        """sha256 of the canonical JSON of the effective recipe (overrides applied)."""
        canonical = json.dumps(self.data, sort_keys=True, separators=(",", ":")).encode()
        return "sha256:" + hashlib.sha256(canonical).hexdigest()

    @property
    def on_gpu(self) -> bool:
        """True when the recipe needs a CUDA GPU."""
        return self.hardware.accelerator == "gpu"

    @property
    def gradient_accumulation_steps(self) -> int:
        """Micro-batches per optimizer step: every step sees prompts_per_step x num_generations completions."""
        grpo = self.grpo
        return grpo.prompts_per_step * grpo.num_generations // grpo.micro_batch_size


SECTIONS: dict[str, type] = {
    "hardware": Hardware, "model": ModelSettings, "lora": LoraSettings, "grpo": Grpo, "generation": Generation,
    "precision": Precision, "episodes": Episodes, "seeds": Seeds, "checkpoints": Checkpoints,
    "transcripts": Transcripts, "preflight": PreflightSettings, "in_domain": InDomainSettings,
}


def recipe_names() -> list[str]:
    """The recipes that ship with the arena."""
    folder = resources.files("training").joinpath("recipes")
    return sorted(p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml"))


def load_recipe(spec: str, steps: int | None = None) -> Recipe:
    """A shipped recipe by name, or a recipe file by path; `steps` overrides grpo.steps (recorded as an override)."""
    if NAME.match(spec) and not spec.endswith(".yaml"):
        if spec not in recipe_names():
            raise RecipeError(f"unknown recipe {spec!r}: the shipped recipes are {', '.join(recipe_names())}; or "
                              "give the path of a recipe file")
        text = resources.files("training").joinpath(f"recipes/{spec}.yaml").read_text(encoding="utf-8")
        source = f"training/recipes/{spec}.yaml"
    else:
        path = Path(spec)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RecipeError(f"{spec}: cannot read the recipe ({exc})") from None
        source = spec
    try:
        document = load(text)
    except StrictYamlError as exc:
        raise RecipeError(f"{source}:{exc.line or 1}: {exc.message}. {exc.fix}") from None
    _validate(document, source)
    mapping = document.data
    assert isinstance(mapping, dict)  # the schema validated a mapping
    data: dict[str, Any] = dict(mapping)
    overrides: dict[str, Any] = {}
    if steps is not None:
        data["grpo"] = {**data["grpo"], "steps": steps}
        overrides["grpo.steps"] = steps
    return Recipe(data["name"], data, source, overrides)


@cache
def recipe_schema() -> dict[str, Any]:
    """The recipe JSON Schema."""
    loaded: dict[str, Any] = json.loads(
        resources.files("training").joinpath("schema/recipe-v1.schema.json").read_text())
    return loaded


def _validate(document: YamlDocument, source: str) -> None:
    errors = sorted(Draft202012Validator(recipe_schema()).iter_errors(document.data),
                    key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        raise RecipeError(_schema_message(errors[0], document, source))
    data = document.data
    assert isinstance(data, dict)
    grpo = data["grpo"]
    batch = grpo["prompts_per_step"] * grpo["num_generations"]
    if batch % grpo["micro_batch_size"]:
        raise RecipeError(f"{source}:{document.line_of(('grpo', 'micro_batch_size'))}: prompts_per_step x "
                          f"num_generations = {batch} is not a multiple of micro_batch_size "
                          f"{grpo['micro_batch_size']}; pick a divisor of {batch}")
    gpu = data["hardware"]["accelerator"] == "gpu"
    if data["generation"]["backend"] == "vllm" and (not gpu or "vllm" not in data["generation"]):
        raise RecipeError(f"{source}:{document.line_of(('generation', 'backend'))}: vLLM generation needs "
                          "hardware.accelerator: gpu and a generation.vllm section; on a CPU use backend "
                          "transformers")
    if data.get("precision", {}).get("bf16") and not gpu:
        raise RecipeError(f"{source}:{document.line_of(('precision', 'bf16'))}: bf16 training needs a GPU; set "
                          "precision.bf16: false for a CPU recipe")


def _schema_message(error: ValidationError, document: YamlDocument, source: str) -> str:
    path = tuple(error.absolute_path)
    where = ".".join(str(p) for p in path) or "(top level)"
    line = document.line_of(path) or 1
    if error.validator == "additionalProperties":
        known = sorted(error.schema.get("properties", {})) if isinstance(error.schema, Mapping) else []
        extra = sorted(set(error.instance) - set(known)) if isinstance(error.instance, dict) else []
        return (f"{source}:{_key_line(document, path, extra) or line}: unknown key {', '.join(extra)} in {where}; "
                f"the keys are {', '.join(known)}")
    if error.validator == "required":
        return f"{source}:{line}: {where}: {error.message}; every hyperparameter is written out in a recipe"
    return f"{source}:{line}: {where}: {error.message}"


def _key_line(document: YamlDocument, path: tuple[Any, ...], extra: list[str]) -> int | None:
    return document.lines.get((*path, extra[0])) if extra else None
