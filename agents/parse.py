"""Reading tool calls out of a model's raw text, in the Qwen3 / Hermes format its chat template teaches:

    <tool_call>
    {"name": "shell", "arguments": {"command": "ls"}}
    </tool_call>

Anything malformed (bad JSON, no name, an unclosed block) becomes a `problem` the model is shown, never an exception.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

OPEN, CLOSE = "<tool_call>", "</tool_call>"
_THINK = re.compile(r"<think>.*?</think>\s*", re.DOTALL)


@dataclass(frozen=True)
class ToolCall:
    """One call: a tool name and its arguments (a dict, or the raw string when it was not a JSON object)."""

    name: str
    arguments: dict | str
    call_id: str = ""


@dataclass(frozen=True)
class ParsedReply:
    """A model's reply: its free text, the calls it made, and what was wrong with any it tried to make."""

    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def parse_reply(text: str) -> ParsedReply:
    """Split raw model text into free text, well-formed calls and problems."""
    text = _THINK.sub("", text)
    content: list[str] = []
    calls: list[ToolCall] = []
    problems: list[str] = []
    rest = text
    while OPEN in rest:
        before, _, after = rest.partition(OPEN)
        content.append(before)
        body, closed, rest = after.partition(CLOSE)
        if not closed:
            problems.append(f"a {OPEN} block was never closed with {CLOSE} (the reply may have been cut off)")
            rest = ""
        call, problem = _read_call(body.strip(), len(calls))
        if call is not None and closed:
            calls.append(call)
        elif problem and closed:
            problems.append(problem)
    content.append(rest)
    return ParsedReply("".join(content).strip(), calls, problems)


def _read_call(body: str, index: int) -> tuple[ToolCall | None, str | None]:
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        return None, (f"the JSON inside {OPEN} is invalid ({exc.msg} at character {exc.pos}); write "
                      '{"name": <tool name>, "arguments": {...}}')
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None, f'the {OPEN} object needs a string "name" and an "arguments" object'
    arguments = data.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict | str):
        return None, f'"arguments" of {data["name"]} must be a JSON object'
    return ToolCall(data["name"], arguments, f"call_{index}"), None
