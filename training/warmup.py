"""The tool-call warm-up: a short SFT on generic, synthetic tool-use conversations, merged into the base model.

A small base model that has never called a tool gives GRPO no signal (no rollout ever acts). The warm-up teaches the
format only: the conversations are made-up chores (write a word to a file, count a file's lines, add to a number),
none taken from any environment, rendered with the same system prompt, tool schemas and tool-result text the model
later sees. The merged model is cached by (base revision, warm-up settings, data version) and reused by training and
scoring, so both start from the same base.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import tempfile
from pathlib import Path

from agents.chat import SYSTEM_PROMPT
from agents.models import LocalModel, model_cache
from agents.render import RenderLimits, command_text
from agents.tools import EPISODE_OVER, TOOL_SCHEMAS
from sandbox.channel import CommandResult
from training.trainer import lora_config

DATA_VERSION = 2
WORDS = ("amber", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kestrel",
         "lantern", "meadow", "nickel", "orchid", "pepper", "quartz", "raven", "saffron", "tundra")
FILES = ("notes.txt", "data.csv", "input.txt", "list.txt", "values.txt", "records.csv", "log.txt")
DONE = "The task is complete; there is nothing more to do. " + EPISODE_OVER


def _call(name: str, **arguments: str) -> dict:
    return {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def _tool(name: str, content: str, turns_left: int) -> dict:
    return {"role": "tool", "name": name, "content": f"{content}\n(turns left: {turns_left}, seconds left: 600)"}


def _shell_output(stdout: str) -> str:
    return command_text(CommandResult(0, stdout, "", False, False, 0.01), RenderLimits())


def _finish() -> list[dict]:
    """End the scene; the conversation stops at the tool's answer. (A final assistant reply would be rendered after
    an empty think block by the Qwen3 template, teaching the model to open every reply with <think>, which TRL's
    parser then reads as reasoning, calls included.)"""
    return [_call("end_scene"), {"role": "tool", "name": "end_scene", "content": DONE}]


def conversation(rng: random.Random) -> list[dict]:
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


def conversations(count: int, seed: int) -> list[list[dict]]:
    """`count` chores, the same for the same seed."""
    rng = random.Random(f"arena-warmup/{DATA_VERSION}/{seed}")
    return [conversation(rng) for _ in range(count)]


def warmed_base(base: LocalModel, settings: dict | None, say: object = print) -> LocalModel:
    """The base with the warm-up merged in (made once and cached); the base itself when the recipe has none."""
    if not settings:
        return base
    key = hashlib.sha256(json.dumps([base.revision, settings, DATA_VERSION], sort_keys=True).encode()).hexdigest()
    target = model_cache() / f"{base.name}-toolcall-{key[:12]}"
    if not (target / "config.json").is_file():
        say(f"warm-up: teaching {base.name} the tool-call format ({settings['examples']} conversations, "
            f"{settings['epochs']} epochs; once, then cached)")  # type: ignore[operator]
        _train_and_merge(base, settings, target)
    return LocalModel(f"{base.name}+toolcall", target, f"sha256:{key}")


def _train_and_merge(base: LocalModel, settings: dict, target: Path) -> None:
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
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
        merged = trainer.model.merge_and_unload()
        shutil.rmtree(staging / "sft", ignore_errors=True)
        merged.save_pretrained(staging)
        trainer.processing_class.save_pretrained(staging)
        try:
            staging.rename(target)
        except OSError:
            if not (target / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
