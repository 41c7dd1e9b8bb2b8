"""A local OpenAI-compatible chat-completions server for tests, answering with any ChatBackend (the real small
model, or a replay of fixed replies), with faults to inject: a number of 503s first, or a garbage answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agents.backends import ChatBackend, Reply, Sampling
from agents.parse import parse_reply
from tests.support.serving import serving


@dataclass
class ReplayBackend:
    """Answers with fixed raw replies in order (then a plain 'done'): a scripted stand-in for a model's output."""

    replies: list[str]
    name: str = "replay"
    seen: list[list[dict]] = field(default_factory=list)

    def reply(self, messages: list[dict], tools: list[dict], sampling: Sampling) -> Reply:
        self.seen.append([dict(m) for m in messages])
        raw = self.replies.pop(0) if self.replies else "done"
        return Reply(parse_reply(raw), raw, max(1, len(raw) // 4), 0)


@dataclass
class Faults:
    """What the server does wrong: fail the next `unavailable` requests with 503, or answer garbage."""

    unavailable: int = 0
    garbage: bool = False
    requests: list[dict] = field(default_factory=list)


@contextmanager
def serve(backend: ChatBackend, model: str = "served-model", faults: Faults | None = None) -> Iterator[str]:
    """Serve `backend` on 127.0.0.1; yields the base URL (ending in /v1)."""
    faults = faults or Faults()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._send(200, json.dumps({"object": "list", "data": [{"id": model, "object": "model"}]}).encode())

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            faults.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **request})
            if faults.unavailable > 0:
                faults.unavailable -= 1
                self._send(503, b'{"error": "warming up"}')
                return
            if faults.garbage:
                self._send(200, b"<html>not json</html>")
                return
            sampling = Sampling(request["max_tokens"], request["temperature"], request["top_p"], request["seed"])
            tools = [{**t, "function": {**t["function"], "return": {"type": "string"}}} for t in request["tools"]]
            messages = [_internal(m) for m in request["messages"]]
            answer = backend.reply(messages, tools, sampling)
            calls = [{"id": c.call_id, "type": "function",
                      "function": {"name": c.name, "arguments": json.dumps(c.arguments)
                                   if isinstance(c.arguments, dict) else c.arguments}}
                     for c in answer.parsed.tool_calls]
            message = {"role": "assistant", "content": answer.parsed.content or None, "tool_calls": calls or None}
            self._send(200, json.dumps({"object": "chat.completion", "model": model,
                                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                                        "usage": {"completion_tokens": answer.completion_tokens,
                                                  "prompt_tokens": answer.prompt_tokens}}).encode())

    with serving(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as base:
        yield f"{base}/v1"


def _internal(message: dict) -> dict:
    """Tool-call arguments back from JSON text, as the chat template wants them."""
    if not message.get("tool_calls"):
        return message
    calls = [{**c, "function": {**c["function"], "arguments": json.loads(c["function"]["arguments"])}}
             for c in message["tool_calls"]]
    return {**message, "tool_calls": calls}
