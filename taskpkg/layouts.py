"""Where training and scoring put their outputs: the file and folder names every reader of those outputs shares.

Training writes into its `--out` folder, scoring into its own; launch's job runner (which may import neither) finds
their files by these names, as do the bot and the leaderboard. One place, so a renamed file is renamed everywhere.

    <training out>/manifest.json                   the run manifest (training.run)
    <training out>/adapter/adapter_config.json     the trained LoRA adapter
    <training out>/checkpoints/checkpoint-<step>/  resumable checkpoints
    <scoring out>/results/<environment>/<run_id>.json        a version-2 results record (scoring.results)
    <scoring out>/results/<environment>/<run_id>.items.json  its per-item paired scores (scoring.items)
"""

from __future__ import annotations

from pathlib import PurePath
from typing import TypeVar

P = TypeVar("P", bound=PurePath)

MANIFEST_FILE = "manifest.json"
ADAPTER_DIR = "adapter"
ADAPTER_CONFIG = "adapter_config.json"
CHECKPOINTS_DIR = "checkpoints"
RESULTS_DIR = "results"
RECORD_SUFFIX = ".json"
ITEMS_SUFFIX = ".items.json"


def record_path(results_dir: P, environment: str, run_id: str) -> P:
    """Where a version-2 record lives."""
    return results_dir / environment / f"{run_id}{RECORD_SUFFIX}"


def items_path(record_file: P) -> P:
    """The items file beside a record file."""
    return record_file.with_name(record_file.name.removesuffix(RECORD_SUFFIX) + ITEMS_SUFFIX)


def is_record_file(name: str) -> bool:
    """True for a version-2 record's file name (a `.json` that is not an items file)."""
    return name.endswith(RECORD_SUFFIX) and not name.endswith(ITEMS_SUFFIX)
