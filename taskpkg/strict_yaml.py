"""A strict YAML reader for frontmatter: plain data only, with the source line of every key and item.

Refused, each with the line: aliases (so no alias bomb is ever expanded), explicit tags, duplicate keys,
non-string keys, merge keys and nesting deeper than MAX_DEPTH. Values are built with PyYAML's safe constructors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from taskpkg.rules.rule import RuleViolation
from taskpkg.rules.task_file import ARENA104, ARENA105

MAX_DEPTH = 32

Path = tuple[str | int, ...]


class StrictYamlError(RuleViolation):
    """A YAML problem at a 1-based line and column of the YAML text: a case of ARENA104 (syntax) or ARENA105 (a
    feature the arena refuses), with the fields of its message."""

    @property
    def kind(self) -> str:
        """"syntax" or "feature"."""
        return "syntax" if self.rule is ARENA104 else "feature"


@dataclass
class YamlDocument:
    """Parsed data plus the line of every path (a key's line, or a list item's line)."""

    data: object
    lines: dict[Path, int] = field(default_factory=dict)

    def line_of(self, path: Path) -> int | None:
        """Return the line of path, or of its nearest ancestor that has one."""
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return None


_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PLAIN_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "timestamp"))
_SEQ, _MAP = "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"


class _AliasSeen(Exception):
    """A node was reached twice: the document uses an alias."""


def _first_alias_mark(text: str) -> yaml.Mark:
    """Where the first alias is used (the composed node only remembers where its anchor was)."""
    return next(e.start_mark for e in yaml.parse(text, Loader=_BaseLoader) if isinstance(e, yaml.AliasEvent))


def _feature(case: str, mark: yaml.Mark, **fields: object) -> StrictYamlError:
    return StrictYamlError(ARENA105, case, mark.line + 1, mark.column + 1, **fields)


def load(text: str) -> YamlDocument:
    """Parse one YAML document strictly. Raises StrictYamlError with the place of the first problem."""
    loader = _BaseLoader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or "invalid YAML"
        if exc.context:
            problem = f"{problem} ({exc.context})"
        raise StrictYamlError(ARENA104, "", mark.line + 1 if mark else None, mark.column + 1 if mark else None,
                              problem=problem) from None
    except yaml.YAMLError as exc:
        raise StrictYamlError(ARENA104, "", None, None, problem=str(exc)) from None
    except RecursionError:
        raise StrictYamlError(ARENA105, "nesting", None, None, depth=MAX_DEPTH) from None
    finally:
        loader.dispose()
    document = YamlDocument(data=None)
    if node is None:
        return document
    try:
        document.data = _build(loader, node, (), document.lines, 0, set())
    except _AliasSeen:
        raise _feature("alias", _first_alias_mark(text)) from None
    return document


def _build(loader: yaml.SafeLoader, node: Node, path: Path, lines: dict[Path, int], depth: int,
           seen: set[int]) -> object:
    if id(node) in seen:
        raise _AliasSeen
    seen.add(id(node))
    if depth > MAX_DEPTH:
        raise _feature("nesting", node.start_mark, depth=MAX_DEPTH)
    expected = _SEQ if isinstance(node, SequenceNode) else _MAP if isinstance(node, MappingNode) else None
    if (expected and node.tag != expected) or (expected is None and node.tag not in _PLAIN_TAGS):
        raise _feature("tag", node.start_mark, tag=node.tag)
    if isinstance(node, ScalarNode):
        try:
            return loader.construct_object(node, deep=True)
        except (yaml.constructor.ConstructorError, ValueError) as exc:
            raise _feature("value", node.start_mark, problem=exc) from None
    if isinstance(node, SequenceNode):
        items = []
        for index, child in enumerate(node.value):
            lines[(*path, index)] = child.start_mark.line + 1
            items.append(_build(loader, child, (*path, index), lines, depth + 1, seen))
        return items
    if isinstance(node, MappingNode):
        mapping: dict[str, object] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise _feature("merge", key_node.start_mark)
            if not isinstance(key_node, ScalarNode) or key_node.tag != "tag:yaml.org,2002:str":
                raise _feature("key", key_node.start_mark, key=repr(key_node.value))
            key = key_node.value
            if key in mapping:
                raise _feature("duplicate", key_node.start_mark, key=key)
            lines[(*path, key)] = key_node.start_mark.line + 1
            mapping[key] = _build(loader, value_node, (*path, key), lines, depth + 1, seen)
        return mapping
    raise _feature("tag", node.start_mark, tag=node.tag)  # pragma: no cover: every node kind is handled above
