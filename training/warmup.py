"""The tool-call warm-up: a short SFT on generic, synthetic tool-use conversations, merged into the base model.

A small base model that has never called a tool gives GRPO no signal (no rollout ever acts). The warm-up teaches the
format only: the conversations are made-up chores (write a word to a file, count a file's lines, add to a number),
none taken from any environment, rendered with the same system prompt, tool schemas and tool-result text the model
later sees.

The warm-up's LoRA adapter is kept in the repository (`training/warmups/<base>-<key>/`: the adapter, its config and
`warmup.json`, which records the key, the settings and the adapter's sha256), so no machine trains it again: the
adapter's digest is checked, then it is merged into the base (seconds) and the merged model is cached under the model
cache, reused by training and scoring so both start from the same base. The key covers the base's revision, the
warm-up settings and the data version; a recipe whose warm-up has no kept adapter trains one on first use (cached
beside the merged model). `python -m training.warmup --rebuild` trains the kept adapter again from this script and
its data (tests/test_training_warmup.py checks that it comes out within tolerance of the kept one).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.chat import SYSTEM_PROMPT
from agents.models import LocalModel, ModelUnavailable, file_sha256, model_cache
from agents.render import RenderLimits, command_text
from agents.tools import EPISODE_OVER, TOOL_SCHEMAS
from sandbox.channel import CommandResult
from training.trainer import lora_config

DATA_VERSION = 2
WORDS = ("amber", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kestrel",
         "lantern", "meadow", "nickel", "orchid", "pepper", "quartz", "raven", "saffron", "tundra")
FILES = ("notes.txt", "data.csv", "input.txt", "list.txt", "values.txt", "records.csv", "log.txt")
DONE = "The task is complete; there is nothing more to do. " + EPISODE_OVER
KEPT = Path(__file__).resolve().parent / "warmups"
ADAPTER_FILE = "adapter_model.safetensors"
DESCRIPTION = "warmup.json"
REBUILD = "python -m training.warmup --rebuild"


def _call(name: str, **arguments: str) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def _tool(name: str, content: str, turns_left: int) -> dict[str, Any]:
    return {"role": "tool", "name": name, "content": f"{content}\n(turns left: {turns_left}, seconds left: 600)"}


def _shell_output(stdout: str) -> str:
    return command_text(CommandResult(0, stdout, "", False, False, 0.01), RenderLimits())


def _finish() -> list[dict[str, Any]]:
    """End the scene; the conversation stops at the tool's answer. (A final assistant reply would be rendered after
    an empty think block by the Qwen3 template, teaching the model to open every reply with <think>, which TRL's
    parser then reads as reasoning, calls included.)"""
    return [_call("end_scene"), {"role": "tool", "name": "end_scene", "content": DONE}]


def conversation(rng: random.Random) -> list[dict[str, Any]]:
    """One made-up chore solved with the tools."""
    word, source, target = rng.choice(WORDS), rng.choice(FILES), rng.choice(("answer.txt", "result.txt", "out.txt"))
    kind = rng.randrange(3)
    if kind == 0:
        task = f"Write the word {word} to /workspace/{target}."
        steps = [_call("write_file", path=target, content=word), _tool("write_file", f"wrote {target}", 19)]
    elif kind == 1:
        lines = rng.randint(2, 40)
        task = f"How many lines does /workspace/{source} have? Write the number to /workspace/{target}."
        steps = [_call("shell", command=f"wc -l < /workspace/{source}"),
                 _tool("shell", _shell_output(f"{lines}\n"), 19),
                 _call("write_file", path=target, content=str(lines)), _tool("write_file", f"wrote {target}", 18)]
    else:
        number, add = rng.randint(1, 500), rng.randint(1, 50)
        task = f"/workspace/{source} holds one number. Write that number plus {add} to /workspace/{target}."
        steps = [_call("shell", command=f"cat /workspace/{source}"), _tool("shell", _shell_output(f"{number}\n"), 19),
                 _call("write_file", path=target, content=str(number + add)),
                 _tool("write_file", f"wrote {target}", 18)]
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task}, *steps, *_finish()]


def conversations(count: int, seed: int) -> list[list[dict[str, Any]]]:
    """`count` chores, the same for the same seed."""
    rng = random.Random(f"arena-warmup/{DATA_VERSION}/{seed}")
    return [conversation(rng) for _ in range(count)]


def warmup_key(base: LocalModel, settings: dict[str, Any]) -> str:
    """What names a warm-up: the base's revision, its settings and the data version."""
    return hashlib.sha256(json.dumps([base.revision, settings, DATA_VERSION], sort_keys=True).encode()).hexdigest()


def kept_folder(base: LocalModel, settings: dict[str, Any]) -> Path:
    """Where the repository keeps the adapter of this warm-up."""
    return KEPT / f"{base.name}-{warmup_key(base, settings)[:12]}"


def warmed_base(base: LocalModel, settings: dict[str, Any] | None, say: Callable[[str], None] = print) -> LocalModel:
    """The base with the warm-up merged in (merged once and cached); the base itself when the recipe has none. The
    adapter is the repository's where it keeps one for this warm-up, else trained here once and cached."""
    if not settings:
        return base
    key = warmup_key(base, settings)
    adapter = kept_folder(base, settings)
    if not (adapter / DESCRIPTION).is_file():
        adapter = model_cache() / f"{base.name}-toolcall-{key[:12]}-adapter"
        if not (adapter / DESCRIPTION).is_file():
            say(f"warm-up: no kept adapter for these settings; teaching {base.name} the tool-call format "
                f"({settings['examples']} conversations, {settings['epochs']} epochs; once, then cached)")
            train_adapter(base, settings, adapter)
    digest = verified_adapter(adapter, key)
    revision = hashlib.sha256(f"{key}:{digest}".encode()).hexdigest()
    target = model_cache() / f"{base.name}-toolcall-{revision[:12]}"
    if not (target / "config.json").is_file():
        say(f"warm-up: merging the tool-call adapter {adapter.name} into {base.name} (once, then cached)")
        _merge(base, adapter, target)
    return LocalModel(f"{base.name}+toolcall", target, f"sha256:{revision}")


def verified_adapter(folder: Path, key: str) -> str:
    """The adapter's sha256, once checked against its warmup.json (and that the adapter is for this warm-up)."""
    described = folder / DESCRIPTION
    try:
        description = json.loads(described.read_text())
        recorded, made_for = description["adapter_sha256"], description["key"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelUnavailable(f"{described}: not a warm-up description ({exc}); restore it with `git checkout -- "
                               f"{folder}` or train it again with `{REBUILD}`") from None
    if made_for != key:
        raise ModelUnavailable(f"{described}: made for warm-up {made_for[:12]}, not {key[:12]} (the settings, the "
                               f"data or the base changed); train it again with `{REBUILD}`")
    weights = folder / ADAPTER_FILE
    actual = file_sha256(weights) if weights.is_file() else "missing"
    if actual != recorded:
        raise ModelUnavailable(f"{weights}: sha256 {actual[:16]}, but {DESCRIPTION} says {recorded[:16]}: the file "
                               f"was changed or cut (a Git LFS pointer?); restore it with `git checkout -- {folder}` "
                               f"or train it again with `{REBUILD}`")
    return actual


def train_adapter(base: LocalModel, settings: dict[str, Any], folder: Path) -> Path:
    """Train the warm-up's LoRA and write it to `folder` (replaced atomically) with its warmup.json."""
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        tools = json.dumps(list(TOOL_SCHEMAS))
        rows = [{"messages": m, "tools": tools} for m in conversations(settings["examples"], settings["seed"])]
        trainer = SFTTrainer(
            model=str(base.path), train_dataset=Dataset.from_list(rows),
            processing_class=AutoTokenizer.from_pretrained(base.path),
            peft_config=lora_config(settings["lora"]),
            args=SFTConfig(output_dir=str(staging / "sft"), num_train_epochs=settings["epochs"],
                           learning_rate=settings["learning_rate"], per_device_train_batch_size=8,
                           assistant_only_loss=True, report_to=[], save_strategy="no", logging_steps=5,
                           seed=settings["seed"], disable_tqdm=True, use_cpu=True, gradient_checkpointing=False))
        trainer.train()
        shutil.rmtree(staging / "sft", ignore_errors=True)
        trainer.model.save_pretrained(staging)
        (staging / "README.md").unlink(missing_ok=True)  # PEFT's model card template: nothing of ours in it
        _describe(staging, base, settings)
        old = folder.with_name(f".{folder.name}-old")
        shutil.rmtree(old, ignore_errors=True)
        if folder.exists():
            folder.rename(old)
        staging.rename(folder)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _describe(folder: Path, base: LocalModel, settings: dict[str, Any]) -> None:
    import peft
    import torch
    import transformers
    import trl

    description = {"key": warmup_key(base, settings), "base": {"name": base.name, "revision": base.revision},
                   "settings": settings, "data_version": DATA_VERSION,
                   "adapter_sha256": file_sha256(folder / ADAPTER_FILE), "made_by": REBUILD,
                   "libraries": {"torch": torch.__version__, "transformers": transformers.__version__,
                                 "trl": trl.__version__, "peft": peft.__version__}}
    (folder / DESCRIPTION).write_text(json.dumps(description, indent=1, sort_keys=True) + "\n")


def _merge(base: LocalModel, adapter: Path, target: Path) -> None:
    """Base + adapter, merged and saved as a plain checkpoint beside `target`, then renamed into place."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        model = AutoModelForCausalLM.from_pretrained(base.path)
        merged = PeftModel.from_pretrained(model, adapter).merge_and_unload()
        merged.save_pretrained(staging)
        AutoTokenizer.from_pretrained(base.path).save_pretrained(staging)
        try:
            staging.rename(target)
        except OSError:  # another process merged it first
            if not (target / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    """`python -m training.warmup --prepare`: the recipe's warmed-up base, made ready in the model cache (the small
    model converted, the kept adapter checked and merged); `--rebuild`: train the kept adapter again from this
    script and its data, into the repository's folder (or --out)."""
    from agents.models import resolve_local_model
    from training.recipe import load_recipe

    parser = argparse.ArgumentParser(prog="python -m training.warmup", description=main.__doc__)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--prepare", action="store_true", help="convert the base and merge the kept adapter")
    action.add_argument("--rebuild", action="store_true", help="train the adapter again")
    parser.add_argument("--recipe", default="cpu-small", help="the recipe whose warm-up it is (default cpu-small)")
    parser.add_argument("--out", type=Path, help="--rebuild: write the adapter here instead of training/warmups/")
    args = parser.parse_args(argv)
    recipe = load_recipe(args.recipe)
    settings = recipe.model.warmup
    if not settings:
        parser.error(f"the recipe {args.recipe} has no warm-up")
    try:
        base = resolve_local_model(recipe.model.base)
        if args.prepare:
            print(warmed_base(base, settings, say=lambda text: print(text, file=sys.stderr)).path)
        else:
            print(train_adapter(base, settings, args.out or kept_folder(base, settings)))
    except ModelUnavailable as exc:
        print(f"arena: {exc}", file=sys.stderr)
        sys.exit(3)


if __name__ == "__main__":
    main()
