"""A small evaluator of GitHub Actions expressions, enough to run a workflow's `if:` on a real webhook payload.

Covers what the repository's filters use, with GitHub's documented semantics: literals ('string' with '' escapes,
numbers, true, false, null), property paths (github.event.comment.body; a missing property is null), `!`, `==`, `!=`,
`&&` and `||` (which return an operand, as in JavaScript), parentheses, and startsWith, endsWith and contains. String
comparisons and the three functions ignore case; falsy values are false, 0, -0, '' and null.
"""

from __future__ import annotations

import math
import re
from typing import Any

_TOKEN = re.compile(r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?\d+(?:\.\d+)?)|(?P<op>&&|\|\||==|!=|[!(),])"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*))")
_FUNCTIONS = {
    "startswith": lambda a, b: _text(a).lower().startswith(_text(b).lower()),
    "endswith": lambda a, b: _text(a).lower().endswith(_text(b).lower()),
    "contains": lambda a, b: _text(b).lower() in _text(a).lower(),
}


def truthy(value: Any) -> bool:
    return value not in (None, False, "") and not (isinstance(value, int | float) and value == 0)


def evaluate(expression: str, context: dict) -> Any:
    """The value of an expression (without `${{ }}`) in a context such as {"github": {"event": payload}}."""
    tokens = _tokenize(expression)
    value, rest = _or(tokens, context)
    if rest:
        raise ValueError(f"unexpected {rest[0]!r} in {expression!r}")
    return value


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens, at = [], 0
    text = text.strip()
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            raise ValueError(f"cannot read {text[at:]!r}")
        tokens.append(next((kind, value) for kind, value in match.groupdict().items() if value is not None))
        at = match.end()
    return tokens


def _or(tokens: list, context: dict) -> tuple[Any, list]:
    return _logical(tokens, context, "||", _and, lambda left, right: left if truthy(left) else right)


def _and(tokens: list, context: dict) -> tuple[Any, list]:
    return _logical(tokens, context, "&&", _compare, lambda left, right: right if truthy(left) else left)


def _logical(tokens: list, context: dict, op: str, operand: Any, combine: Any) -> tuple[Any, list]:
    """A left-associative chain of `op`, whose operands are read by `operand` (the next tighter level)."""
    value, tokens = operand(tokens, context)
    while tokens and tokens[0] == ("op", op):
        right, tokens = operand(tokens[1:], context)
        value = combine(value, right)
    return value, tokens


def _compare(tokens: list, context: dict) -> tuple[Any, list]:
    value, tokens = _unary(tokens, context)
    while tokens and tokens[0] in (("op", "=="), ("op", "!=")):
        operator = tokens[0][1]
        right, tokens = _unary(tokens[1:], context)
        value = _equal(value, right) == (operator == "==")
    return value, tokens


def _unary(tokens: list, context: dict) -> tuple[Any, list]:
    if tokens and tokens[0] == ("op", "!"):
        value, tokens = _unary(tokens[1:], context)
        return not truthy(value), tokens
    return _primary(tokens, context)


def _primary(tokens: list, context: dict) -> tuple[Any, list]:
    (kind, value), tokens = tokens[0], tokens[1:]
    if (kind, value) == ("op", "("):
        inner, tokens = _or(tokens, context)
        return inner, _expect(tokens, ")")
    if kind == "string":
        return value[1:-1].replace("''", "'"), tokens
    if kind == "number":
        return float(value), tokens
    if kind == "name" and tokens and tokens[0] == ("op", "("):
        function = _FUNCTIONS[value.lower()]
        first, tokens = _or(tokens[1:], context)
        second, tokens = _or(_expect(tokens, ","), context)
        return function(first, second), _expect(tokens, ")")
    if kind == "name":
        literal = {"true": True, "false": False, "null": None}
        if value in literal:
            return literal[value], tokens
        found: Any = context
        for part in value.split("."):
            found = found.get(part) if isinstance(found, dict) else None
        return found, tokens
    raise ValueError(f"unexpected {value!r}")


def _expect(tokens: list, op: str) -> list:
    if not tokens or tokens[0] != ("op", op):
        raise ValueError(f"expected {op!r}")
    return tokens[1:]


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _number(value: Any) -> float:
    if value is None or value is False:
        return 0.0
    if value is True:
        return 1.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip()) if value.strip() else 0.0
        except ValueError:
            return math.nan
    return math.nan


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        return left.lower() == right.lower()
    if left is None and right is None:
        return True
    if isinstance(left, dict | list) or isinstance(right, dict | list):
        return left is right
    return _number(left) == _number(right)
