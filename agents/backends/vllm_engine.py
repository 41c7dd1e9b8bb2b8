"""vLLM in-process on a GPU (the `gpu` extra): one engine serving the base model and LoRA adapters, so the base and
the trained model of a scoring run share the weights in memory. Thin by design: the harness logic is elsewhere."""

from __future__ import annotations

from pathlib import Path

from agents.backends.contract import BackendError, Reply, Sampling, template_options
from agents.parse import parse_reply


class VllmEngine:
    """One vLLM engine for a base model, able to apply LoRA adapters per request."""

    def __init__(self, model: str, gpu_memory_utilization: float = 0.85, max_model_length: int = 16384,
                 max_lora_rank: int = 64) -> None:
        try:
            from vllm import LLM
        except ImportError:
            raise BackendError("the vLLM backend needs a GPU machine with the gpu extra: pip install -e '.[gpu]'") \
                from None
        self.model = model
        self.llm = LLM(model=model, enable_lora=True, max_lora_rank=max_lora_rank,
                       gpu_memory_utilization=gpu_memory_utilization, max_model_len=max_model_length)


class VllmBackend:
    """Replies from a shared engine: the base model, or with `adapter` (a LoRA folder) applied to each request."""

    def __init__(self, engine: VllmEngine, adapter: Path | None = None) -> None:
        from vllm.lora.request import LoRARequest

        self.engine = engine
        self.name = Path(engine.model).name + (f"+{adapter.name}" if adapter else "")
        self.lora = LoRARequest("adapter", 1, str(adapter)) if adapter else None

    def reply(self, messages: list[dict], tools: list[dict], sampling: Sampling) -> Reply:
        """One reply through the engine's own chat template, with the tools."""
        from vllm import SamplingParams

        params = SamplingParams(max_tokens=sampling.max_new_tokens, temperature=sampling.temperature,
                                top_p=sampling.top_p, seed=sampling.seed, skip_special_tokens=False)
        outputs = self.engine.llm.chat(messages, params, tools=tools, lora_request=self.lora, use_tqdm=False,
                                       chat_template_kwargs=template_options(sampling))
        completion = outputs[0].outputs[0]
        raw = completion.text.split("<|im_end|>")[0]
        return Reply(parse_reply(raw), raw, len(completion.token_ids), len(outputs[0].prompt_token_ids or []))
