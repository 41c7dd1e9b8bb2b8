"""The frontmatter JSON Schema: loading it, and turning its validation errors into actionable diagnostics."""

from __future__ import annotations

import difflib
import json
from functools import cache
from importlib import resources

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from taskpkg.diagnostics import Diagnostic
from taskpkg.rules.task_file import ARENA110, ARENA111, ARENA112, ARENA114, ARENA120
from taskpkg.strict_yaml import YamlDocument

SCHEMA_VERSION = 1
SCHEMA_RESOURCE = "schema/task-v1.schema.json"


def schema_text() -> str:
    """Return the published schema file's text, exactly as shipped."""
    return resources.files("taskpkg").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")


@cache
def task_schema() -> dict:
    """Return the frontmatter schema as a dict."""
    return json.loads(schema_text())


@cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(task_schema())


@cache
def _fast_validator() -> jsonschema_rs.Draft202012Validator:
    """A compiled validator: a valid frontmatter (the common case) passes it alone; jsonschema explains the rest."""
    return jsonschema_rs.Draft202012Validator(task_schema())


def dotted(path: tuple) -> str:
    """Render a JSON path like `limits.cpus` or `authors[0].github`."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _short(value: object, limit: int = 60) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def validate_frontmatter(document: YamlDocument, file: str) -> list[Diagnostic]:
    """Validate parsed frontmatter against the schema; every error names the key, its line and a fix."""
    data = document.data
    if isinstance(data, dict) and "schema_version" in data and data["schema_version"] != SCHEMA_VERSION:
        return [ARENA120.found(file, document.line_of(("schema_version",)), value=_short(data["schema_version"]),
                               version=SCHEMA_VERSION)]
    if _fast_validator().is_valid(data):
        return []
    errors = sorted(_validator().iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    found: list[Diagnostic] = []
    for error in errors:
        found.extend(d for d in _translate(error, document, file) if d not in found)
    return found


def _translate(error: ValidationError, document: YamlDocument, file: str) -> list[Diagnostic]:
    """Diagnostics for one validation error, read from its structured fields (never from its message text)."""
    path = tuple(error.absolute_path)
    line = document.line_of(path)
    where = dotted(path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        return [_unknown_key(key, path, allowed, document, file) for key in sorted(set(error.instance) - set(allowed))]
    if error.validator == "required":
        # One error per missing key, all alike but for their text: each reports every key missing here, and
        # validate_frontmatter drops the repeats.
        properties = error.schema.get("properties", {})
        return [ARENA111.found(file, line, key=dotted((*path, key)), name=key, where=where,
                               description=properties.get(key, {}).get("description") or "See `arena schema`.")
                for key in error.validator_value if key not in error.instance]
    if path == ("domain",) and error.validator == "enum":
        domains = error.schema["enum"]
        guess = difflib.get_close_matches(str(error.instance), domains, n=1, cutoff=0.5)
        fields = {"value": _short(error.instance), "domains": ", ".join(domains)}
        return [ARENA114.found(file, line, case="guess", guess=guess[0], **fields) if guess
                else ARENA114.found(file, line, **fields)]
    value = _short(error.instance)
    if error.validator == "enum":
        return [ARENA112.found(file, line, case="enum", where=where, value=value,
                               allowed=", ".join(map(str, error.schema["enum"])))]
    description = (error.schema.get("description") or _parent_description(path)
                   or "See `arena schema` for the expected form.")
    if error.validator == "const":
        return [ARENA112.found(file, line, case="const", where=where, value=value,
                               expected=_short(error.schema["const"]), description=description)]
    if error.validator == "type":
        wanted = error.validator_value if isinstance(error.validator_value, str) else " or ".join(error.validator_value)
        return [ARENA112.found(file, line, case="type", where=where, value=value, wanted=wanted,
                               kind=_ARTICLE.get(wanted, "a value of type " + wanted), description=description)]
    return [ARENA112.found(file, line, case="form", where=where, problem=_describe(error), description=description)]


def _unknown_key(key: str, path: tuple, allowed: list[str], document: YamlDocument, file: str) -> Diagnostic:
    line = document.line_of((*path, key))
    guess = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    if guess:
        return ARENA110.found(file, line, case="guess", key=dotted((*path, key)), guess=guess[0])
    return ARENA110.found(file, line, key=dotted((*path, key)), allowed=", ".join(allowed))


_ARTICLE = {"string": "text", "integer": "a whole number", "number": "a number", "array": "a list",
            "object": "a mapping of keys to values", "boolean": "true or false"}


def _describe(error: ValidationError) -> str:
    value = _short(error.instance)
    match error.validator:
        case "pattern":
            return f"{value} does not have the required form"
        case "minimum" | "exclusiveMinimum":
            return f"{value} is too small (minimum {error.validator_value})"
        case "maximum":
            return f"{value} is too large (maximum {error.validator_value})"
        case "minLength":
            return f"{value} is too short (at least {error.validator_value} characters)"
        case "maxLength":
            return f"{value} is too long (at most {error.validator_value} characters)"
        case "minItems":
            return f"needs at least {error.validator_value} item(s)"
        case "maxItems":
            return f"has more than {error.validator_value} items"
        case "uniqueItems":
            return "has duplicate items"
    return error.message if len(error.message) <= 200 else error.message[:199] + "…"


def _parent_description(path: tuple) -> str:
    node: dict = task_schema()
    for part in path:
        node = node.get("items", {}) if isinstance(part, int) else node.get("properties", {}).get(part, {})
    return node.get("description", "")
