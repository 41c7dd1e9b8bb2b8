"""Any OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp, Ollama, a hosted API), over plain HTTP.

The API key comes from an environment variable and is never logged. Transient failures (connection refused,
429, 5xx) are retried with back-off; anything else, and an answer that is not a chat completion, is a BackendError.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request

from agents.backends.contract import BackendError, Reply, Sampling, template_options
from agents.parse import ParsedReply, ToolCall, parse_reply

API_KEY_VARIABLE = "ARENA_MODEL_API_KEY"
RETRY_WAITS_S = (0.5, 2.0, 5.0)
MAX_ANSWER_BYTES = 4 * 2**20


class OpenAIBackend:
    """Talks to `{base_url}/chat/completions`; `model` names the served model (asked of /models when None)."""

    def __init__(self, base_url: str, model: str | None = None, timeout_s: float = 300.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self._key = os.environ.get(API_KEY_VARIABLE) or os.environ.get("OPENAI_API_KEY")
        self.model = model or self._first_model()
        self.name = f"{self.model}@{self.base_url}"

    def reply(self, messages: list[dict], tools: list[dict], sampling: Sampling) -> Reply:
        """One chat completion; tool calls from the structured field, else from <tool_call> blocks in the text."""
        wire_tools = [{**t, "function": {k: v for k, v in t["function"].items() if k != "return"}} for t in tools]
        body = {"model": self.model, "messages": [_wire_message(m) for m in messages], "tools": wire_tools,
                "tool_choice": "auto", "max_tokens": sampling.max_new_tokens, "temperature": sampling.temperature,
                "top_p": sampling.top_p, "seed": sampling.seed}
        if template_options(sampling):  # vLLM's server passes these to the chat template (only sent when set)
            body["chat_template_kwargs"] = template_options(sampling)
        answer = self._request("POST", "/chat/completions", body)
        try:
            message = answer["choices"][0]["message"]
            content = message.get("content") or ""
            wire_calls = message.get("tool_calls") or []
            usage = answer.get("usage") or {}
        except (KeyError, IndexError, TypeError, AttributeError):
            raise BackendError(f"{self.base_url}: the answer is not a chat completion: {str(answer)[:300]}") from None
        if not isinstance(content, str) or not isinstance(wire_calls, list):
            raise BackendError(f"{self.base_url}: the answer's message has the wrong shape: {str(message)[:300]}")
        parsed = _structured(content, wire_calls) if wire_calls else parse_reply(content)
        raw = content + "".join(f"\n<tool_call>\n{json.dumps(c.get('function', c), default=str)}\n</tool_call>"
                                for c in wire_calls if isinstance(c, dict))
        return Reply(parsed, raw, int(usage.get("completion_tokens") or 0), int(usage.get("prompt_tokens") or 0))

    def _first_model(self) -> str:
        answer = self._request("GET", "/models", None)
        try:
            return str(answer["data"][0]["id"])
        except (KeyError, IndexError, TypeError):
            raise BackendError(f"{self.base_url}/models lists no model; pass --model-name") from None

    def _request(self, method: str, path: str, body: dict | None) -> dict:
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        data = json.dumps(body).encode() if body is not None else None
        last = ""
        for wait in (*RETRY_WAITS_S, None):
            request = urllib.request.Request(self.base_url + path, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    raw = response.read(MAX_ANSWER_BYTES + 1)
                if len(raw) > MAX_ANSWER_BYTES:
                    raise BackendError(f"{self.base_url}{path}: the answer is larger than {MAX_ANSWER_BYTES} bytes")
                return json.loads(raw)
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}: {exc.read(500).decode('utf-8', 'replace')}"
                if exc.code != 429 and exc.code < 500:
                    break
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = str(getattr(exc, "reason", exc))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise BackendError(f"{self.base_url}{path}: the answer is not JSON ({exc})") from None
            if wait is not None:
                time.sleep(wait)
        raise BackendError(f"{self.base_url}{path}: {last}")


def _wire_message(message: dict) -> dict:
    """A message as the OpenAI API takes it: tool-call arguments as JSON text."""
    if not message.get("tool_calls"):
        return message
    calls = [{**c, "function": {**c["function"], "arguments": c["function"]["arguments"]
                                if isinstance(c["function"]["arguments"], str)
                                else json.dumps(c["function"]["arguments"])}} for c in message["tool_calls"]]
    return {**message, "tool_calls": calls}


def _structured(content: str, wire_calls: list) -> ParsedReply:
    calls, problems = [], []
    for index, call in enumerate(wire_calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            problems.append(f"tool call {index} has no function name")
            continue
        arguments = function.get("arguments") or {}  # JSON text is read (and bad JSON reported) by the tools
        calls.append(ToolCall(function["name"], arguments, str(call.get("id") or f"call_{index}")))
    return ParsedReply(content.strip(), calls, problems)
