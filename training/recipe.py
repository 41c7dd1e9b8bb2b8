"""Training recipes: versioned YAML files (training/recipes/<name>.yaml), validated by a JSON Schema and by the
rules the schema cannot express, with a stable hash of the effective recipe for manifests."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from taskpkg.strict_yaml import StrictYamlError, YamlDocument, load

NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


class RecipeError(Exception):
    """A recipe cannot be used; the message names the file (and line) and says what to change."""


@dataclass(frozen=True)
class Recipe:
    """A validated recipe: its data, where it came from, and its hash."""

    name: str
    data: dict
    source: str
    overrides: dict

    @property
    def digest(self) -> str:
        """sha256 of the canonical JSON of the effective recipe (overrides applied)."""
        canonical = json.dumps(self.data, sort_keys=True, separators=(",", ":")).encode()
        return "sha256:" + hashlib.sha256(canonical).hexdigest()

    @property
    def on_gpu(self) -> bool:
        """True when the recipe needs a CUDA GPU."""
        return self.data["hardware"]["accelerator"] == "gpu"

    @property
    def gradient_accumulation_steps(self) -> int:
        """Micro-batches per optimizer step: every step sees prompts_per_step x num_generations completions."""
        grpo = self.data["grpo"]
        return grpo["prompts_per_step"] * grpo["num_generations"] // grpo["micro_batch_size"]

    def __getitem__(self, key: str) -> dict:
        return self.data[key]


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
    data = dict(document.data)  # type: ignore[arg-type]  # the schema validated a mapping
    overrides = {}
    if steps is not None:
        data["grpo"] = {**data["grpo"], "steps": steps}
        overrides["grpo.steps"] = steps
    return Recipe(data["name"], data, source, overrides)


@cache
def recipe_schema() -> dict:
    """The recipe JSON Schema."""
    return json.loads(resources.files("training").joinpath("schema/recipe-v1.schema.json").read_text())


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
        known = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(known)) if isinstance(error.instance, dict) else []
        return (f"{source}:{_key_line(document, path, extra) or line}: unknown key {', '.join(extra)} in {where}; "
                f"the keys are {', '.join(known)}")
    if error.validator == "required":
        return f"{source}:{line}: {where}: {error.message}; every hyperparameter is written out in a recipe"
    return f"{source}:{line}: {where}: {error.message}"


def _key_line(document: YamlDocument, path: tuple, extra: list[str]) -> int | None:
    return document.lines.get((*path, extra[0])) if extra else None
