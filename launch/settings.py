"""Numbers read from environment variables (repository variables in Actions), each checked against its range."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def read_numbers(env: Mapping[str, str], table: Iterable[tuple[str, str, type, float, float]],
                 error: type[ValueError]) -> dict[str, float | int]:
    """{field: value} for each (variable, field, int or float, lowest, highest) whose variable is set; `error` names
    a variable that is not a number in range."""
    values: dict[str, float | int] = {}
    for variable, field, kind, low, high in table:
        text = (env.get(variable) or "").strip()
        if not text:
            continue
        try:
            value = kind(text)
        except ValueError:
            raise error(f"{variable}={text!r}: not {'a whole number' if kind is int else 'a number'}") from None
        if value < low:
            raise error(f"{variable}={text!r}: must be at least {low:g}")
        if value > high:
            raise error(f"{variable}={text!r}: must be at most {high:g}")
        values[field] = value
    return values
