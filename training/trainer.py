"""TRL's GRPOTrainer set up from a recipe: LoRA (PEFT), the arena environment, the batch verifier as the reward,
checkpoints, a callback that logs each step, shows progress and stops on a guard (training.guards) or a non-finite
loss, and the count of tokens each batch trains on with a non-zero advantage (training.evidence)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.backends.local_threads import use_cpu_threads
from agents.chat import opening_messages
from training.environment import ArenaEnvironment, RolloutPool, make_reward_function
from training.metrics import Progress, RunLog
from training.recipe import LoraSettings, Recipe, section
from training.tool_overlap import overlapping_tools

if TYPE_CHECKING:  # the training stack is imported when a trainer is built
    from peft import LoraConfig
    from transformers import TrainerControl, TrainerState, TrainingArguments
    from trl import GRPOConfig, GRPOTrainer


def grpo_config(recipe: Recipe, output_dir: Path, gpu: bool) -> GRPOConfig:
    """The GRPOConfig with every value from the recipe (it checks the hardware: bf16 needs a GPU)."""
    from trl import GRPOConfig

    return GRPOConfig(**grpo_arguments(recipe, output_dir, gpu))


def grpo_arguments(recipe: Recipe, output_dir: Path, gpu: bool) -> dict[str, Any]:
    """GRPOConfig's arguments for a recipe, every value explicit."""
    grpo, generation, precision, vllm = recipe.grpo, recipe.generation, recipe.precision, recipe.generation.vllm
    return dict(
        output_dir=str(output_dir), per_device_train_batch_size=grpo.micro_batch_size,
        gradient_accumulation_steps=recipe.gradient_accumulation_steps, num_generations=grpo.num_generations,
        max_steps=grpo.steps, learning_rate=grpo.learning_rate, beta=grpo.beta,
        temperature=grpo.temperature, top_p=grpo.top_p, max_completion_length=grpo.max_completion_length,
        max_tool_calling_iterations=grpo.max_tool_calling_iterations,
        mask_truncated_completions=grpo.mask_truncated_completions, loss_type=grpo.loss_type,
        scale_rewards=grpo.scale_rewards, chat_template_kwargs={"enable_thinking": grpo.enable_thinking},
        seed=grpo.seed, data_seed=grpo.seed, logging_steps=1, save_strategy="steps",
        save_steps=recipe.checkpoints.every_steps, save_total_limit=recipe.checkpoints.keep,
        report_to=[], disable_tqdm=True, bf16=precision.bf16,
        gradient_checkpointing=precision.gradient_checkpointing, use_cpu=not gpu,
        use_vllm=generation.backend == "vllm", vllm_mode=vllm.mode if vllm else "colocate",
        vllm_gpu_memory_utilization=vllm.gpu_memory_utilization if vllm else 0.3,
        vllm_enable_sleep_mode=vllm.enable_sleep_mode if vllm else False,
        vllm_max_model_length=vllm.max_model_length if vllm else None, remove_unused_columns=False)


def lora_config(settings: LoraSettings | Mapping[str, Any]) -> LoraConfig:
    """PEFT's LoraConfig for a recipe's lora section (typed, or the mapping a recipe file writes)."""
    from peft import LoraConfig

    lora = settings if isinstance(settings, LoraSettings) else section(LoraSettings, settings)
    return LoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                      target_modules=list(lora.target_modules), task_type="CAUSAL_LM",
                      layers_to_transform=list(lora.layers) if lora.layers else None)


def build_trainer(recipe: Recipe, base: str, instances: list[int], pool: RolloutPool, log: RunLog,
                  progress: Progress, output_dir: Path, gpu: bool) -> GRPOTrainer:
    """A GRPOTrainer whose rollouts are sandbox episodes of `instances` (one dataset row per instance)."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, PrinterCallback, TrainerCallback
    from trl import GRPOTrainer

    class StepLog(TrainerCallback):
        def on_log(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                   logs: dict[str, Any] | None = None, **kwargs: object) -> None:
            if logs and "train_runtime" in logs:  # the run's closing summary, logged at the last step again
                log.summary = {k: v for k, v in logs.items() if isinstance(v, int | float)}
                return
            line = log.write_step(state.global_step, logs or {})
            progress.update(line)
            if log.stopped_because or log.loss_not_finite:  # a guard tripped, or the loss is NaN/inf: stop here
                control.should_training_stop = True

    class ArenaGRPOTrainer(GRPOTrainer):
        """TRL's trainer, counting the generated tokens each batch trains on with a non-zero advantage."""

        def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
            batch: dict[str, Any] = super()._generate_and_score_completions(inputs)
            log.signal(signal_tokens(batch))
            return batch

    if not gpu:
        use_cpu_threads()  # a thread per core the load leaves free, idle ones sleeping (agents.backends.local_threads)
    dtype = torch.bfloat16 if recipe.model.dtype == "bfloat16" else torch.float32
    tokenizer = AutoTokenizer.from_pretrained(base, revision=recipe.model.revision)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=dtype, revision=recipe.model.revision)
    rows = [{"prompt": opening_messages(None), "instance": instance} for instance in instances]
    pool.waited = log.waited
    trainer_class = overlapping_tools(ArenaGRPOTrainer, recipe.episodes.concurrency, pool)  # less idle time
    trainer = trainer_class(model=model, reward_funcs=[make_reward_function(pool, log)],
                            args=grpo_config(recipe, output_dir, gpu), train_dataset=Dataset.from_list(rows),
                            processing_class=tokenizer, peft_config=lora_config(recipe.lora),
                            environment_factory=lambda: ArenaEnvironment(pool), callbacks=[StepLog()])
    trainer.remove_callback(PrinterCallback)  # StepLog reports each step (and metrics.jsonl keeps them all)
    return trainer


def signal_tokens(batch: dict[str, Any]) -> int:
    """Completion tokens in a scored generation batch that the loss sees (tool results are masked out) and whose
    rollout's advantage is not zero: what the policy gradient is made of."""
    mask = batch["completion_mask"]
    if batch.get("tool_mask") is not None:
        mask = mask * batch["tool_mask"]
    return int((mask.sum(dim=1) * (batch["advantages"] != 0)).sum().item())


def latest_checkpoint(folder: Path) -> Path | None:
    """The newest complete checkpoint (one whose trainer state was written), or None."""
    complete = [p for p in folder.glob("checkpoint-*") if (p / "trainer_state.json").is_file()
                and p.name.removeprefix("checkpoint-").isdigit()]
    return max(complete, key=lambda p: int(p.name.removeprefix("checkpoint-")), default=None)
