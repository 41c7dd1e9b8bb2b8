"""`arena train PATH --preflight`: the learnability pre-flight on its own, exactly as a training run starts it (the
recipe's base model, warm-up and pins, the package's image, the same training instances), without training."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.sandbox import Sandbox
from taskpkg.digest import tree_digest
from taskpkg.package import TaskPackage
from training.preflight import preflight
from training.recipe import Recipe
from training.run import TrainingError, base_model, check_machine, split_seeds


def check_learnability(package: TaskPackage, recipe: Recipe, out: Path | None = None,
                       say: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The pre-flight's report (cached per package digest and model); its lines go to `say` (stdout by default)."""
    say = say or (lambda line: print(line, flush=True))
    check_machine(recipe)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    instances, _ = split_seeds(package.instance_count, recipe.seeds.shuffle_seed, recipe.seeds.heldout)
    base, info = base_model(recipe, say)
    digest = "sha256:" + tree_digest(package.root, frozenset({"__pycache__"}))
    with Sandbox() as sandbox:
        try:
            sandbox.image(package)
        except Exception as exc:  # BuildFailed: the package's image does not build
            raise TrainingError(f"{package.root}/environment/Dockerfile: the image does not build: {exc}; run "
                                f"`arena check {package.root}`") from None
        return preflight(sandbox, package, recipe, base, digest, info["revision"], instances, out, say)
