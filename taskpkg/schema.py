"""The frontmatter JSON Schema: loading it, and turning its validation errors into actionable diagnostics."""

from __future__ import annotations

import difflib
import json
from functools import cache
from importlib import resources

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from taskpkg.checks import check
from taskpkg.diagnostics import Diagnostic
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
    found: list[Diagnostic] = []
    data = document.data
    if isinstance(data, dict) and "schema_version" in data and data["schema_version"] != SCHEMA_VERSION:
        found.append(check("ARENA120").found(
            f"schema_version is {_short(data['schema_version'])}; this arena reads version {SCHEMA_VERSION}",
            f"Set `schema_version: {SCHEMA_VERSION}` (see `arena schema`).", file,
            document.line_of(("schema_version",))))
        return found
    errors = sorted(_validator().iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    for error in errors:
        found.extend(_translate(error, document, file))
    return found


def _translate(error: ValidationError, document: YamlDocument, file: str) -> list[Diagnostic]:
    path = tuple(error.absolute_path)
    line = document.line_of(path)
    where = dotted(path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        out = []
        for key in sorted(set(error.instance) - set(allowed)):
            guess = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
            hint = f"Did you mean '{guess[0]}'?" if guess else f"Allowed here: {', '.join(allowed)}."
            out.append(check("ARENA110").found(
                f"unknown key '{dotted((*path, key))}'", f"{hint} Unknown keys are errors, never ignored.",
                file, document.line_of((*path, key))))
        return out
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        described = error.schema.get("properties", {}).get(missing, {}).get("description", "")
        return [check("ARENA111").found(
            f"required key '{dotted((*path, missing))}' is missing",
            f"Add `{missing}:` under {where}. {described}".strip(), file, line)]
    if path == ("domain",) and error.validator == "enum":
        domains = error.schema["enum"]
        guess = difflib.get_close_matches(str(error.instance), domains, n=1, cutoff=0.5)
        hint = f"Did you mean '{guess[0]}'? " if guess else ""
        return [check("ARENA114").found(
            f"domain {_short(error.instance)} is not one of the arena's eight domains",
            f"{hint}Choose one of: {', '.join(domains)}.", file, line)]
    if error.validator == "enum":
        return [check("ARENA112").found(
            f"{where} is {_short(error.instance)}; it must be one of {', '.join(map(str, error.schema['enum']))}",
            "Use one of the listed values.", file, line)]
    if error.validator == "const":
        return [check("ARENA112").found(
            f"{where} is {_short(error.instance)}; it must be {_short(error.schema['const'])}",
            error.schema.get("description", "See `arena schema`."), file, line)]
    description = error.schema.get("description") or _parent_description(path)
    fix = description or "See `arena schema` for the expected form."
    if error.validator == "type":
        wanted = error.validator_value if isinstance(error.validator_value, str) else " or ".join(error.validator_value)
        fix = f"Write {_ARTICLE.get(wanted, 'a value of type ' + wanted)} here (quote text, leave numbers bare). {fix}"
    return [check("ARENA112").found(f"{where}: {_describe(error)}", fix, file, line)]


_ARTICLE = {"string": "text", "integer": "a whole number", "number": "a number", "array": "a list",
            "object": "a mapping of keys to values", "boolean": "true or false"}


def _describe(error: ValidationError) -> str:
    value = _short(error.instance)
    match error.validator:
        case "type":
            return f"{value} is not of type {error.validator_value}"
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
