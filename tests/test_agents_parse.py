"""Reading a model's tool calls and rendering what it is shown: no engine, no model."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.parse import parse_reply
from agents.render import RenderLimits, command_text
from agents.tools import TOOL_SCHEMAS, EpisodeTools
from sandbox.channel import CommandResult


def test_well_formed_calls_are_read_in_order_with_the_free_text() -> None:
    text = ('Let me look.\n<tool_call>\n{"name": "shell", "arguments": {"command": "ls"}}\n</tool_call>\n'
            '<tool_call>\n{"name": "end_scene", "arguments": {}}\n</tool_call>')
    reply = parse_reply(text)
    assert reply.content == "Let me look."
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("shell", {"command": "ls"}), ("end_scene", {})]
    assert reply.problems == []


@pytest.mark.parametrize(("text", "problem"), [
    ('<tool_call>{"name": "shell", "arguments": {"command": "ls"</tool_call>', "JSON inside <tool_call> is invalid"),
    ('<tool_call>{"arguments": {}}</tool_call>', 'needs a string "name"'),
    ('<tool_call>{"name": "shell", "arguments": [1]}</tool_call>', "must be a JSON object"),
    ('<tool_call>{"name": "shell", "arguments": {"command": "ls"}}', "never closed"),
])
def test_malformed_calls_become_problems_not_exceptions(text: str, problem: str) -> None:
    reply = parse_reply(text)
    assert reply.tool_calls == [] and len(reply.problems) == 1 and problem in reply.problems[0]


def test_thinking_is_not_read_as_text_or_calls() -> None:
    reply = parse_reply('<think>maybe <tool_call>{"name": "x"}</tool_call></think>\nDone.')
    assert reply.content == "Done." and reply.tool_calls == [] and reply.problems == []


@given(st.text(max_size=300))
def test_any_text_parses_without_raising(text: str) -> None:
    reply = parse_reply(text)
    assert all(isinstance(c.name, str) for c in reply.tool_calls)


@pytest.mark.slow  # imports TRL (and torch)
def test_well_formed_calls_read_the_same_as_trl_reads_them() -> None:
    from transformers import AutoTokenizer
    from trl.chat_template_utils import add_response_schema, parse_response

    from agents.models import small_model

    tokenizer = add_response_schema(AutoTokenizer.from_pretrained(small_model().path))
    text = ('<tool_call>\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "x\\ny"}}\n</tool_call>'
            '<|im_end|>')
    prefix = tokenizer.apply_chat_template([{"role": "user", "content": "go"}], add_generation_prompt=True,
                                           enable_thinking=False)["input_ids"]  # TRL parses with the prompt as prefix
    theirs = parse_response(tokenizer, tokenizer(text)["input_ids"], prefix=list(prefix))
    ours = parse_reply(text.removesuffix("<|im_end|>"))
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in theirs["tool_calls"]] == \
        [(c.name, c.arguments) for c in ours.tool_calls]


@pytest.mark.slow
def test_tool_schemas_are_what_transformers_derives_from_the_tool_methods() -> None:
    from transformers.utils import get_json_schema

    derived = [get_json_schema(getattr(EpisodeTools, name)) for name in ("shell", "write_file", "end_scene")]
    assert list(TOOL_SCHEMAS) == derived


def test_long_output_is_clipped_and_the_model_is_told() -> None:
    result = CommandResult(0, "x" * 50, "", timed_out=False, truncated=False, duration_s=0.1)
    text = command_text(result, RenderLimits(output_chars=10))
    assert "x" * 10 in text and "x" * 11 not in text and "truncated: only the first 10 characters" in text
    capped = CommandResult(0, "short", "", timed_out=False, truncated=True, duration_s=0.1)
    assert "truncated" in command_text(capped, RenderLimits())  # the sandbox's own cap is reported too
    slow = CommandResult(None, "", "", timed_out=True, truncated=False, duration_s=60.0)
    assert command_text(slow, RenderLimits()).startswith("timed out after 60 s")
