"""What a contaminating contributor would do to hide a copy of the held-out suite (substitute words of a prompt, rename
a program's names and change its literals), and honest text unrelated to any task. Used by the gate's tests and its
accuracy benchmark."""

from __future__ import annotations

import ast
import builtins
import io
import keyword
import random
import re
import tokenize
from importlib import metadata
from pathlib import Path

from scoring.contamination import Document

ROOT = Path(__file__).resolve().parent.parent.parent

# Words no suite text is about: substitutes for a paraphrase (the hardest case: nothing of the original word is left).
_SUBSTITUTE_TEXT = ("amber basil cobalt dune ember fable garnet harbor indigo jasper kettle lantern meadow nectar opal "
               "pebble quartz raven saffron thistle umber velvet willow yarrow zephyr acorn bramble cinder dapple "
               "fennel glade hazel ivory juniper kelp lichen marlin nutmeg oriole plume quill russet sorrel tansy "
               "urchin vireo wren")
SUBSTITUTES = tuple(_SUBSTITUTE_TEXT.split())
_WORD = re.compile(r"[A-Za-z]+")


def paraphrase(text: str, every: int = 3, seed: int = 0, substitutes: tuple[str, ...] | list[str] = SUBSTITUTES) -> str:
    """The text with one word in `every` (chosen at random, letters only) replaced by an unrelated word."""
    rng = random.Random(seed)
    spans = [m.span() for m in _WORD.finditer(text)]
    chosen = sorted(rng.sample(range(len(spans)), len(spans) // every))
    parts, last = [], 0
    for index in chosen:
        start, end = spans[index]
        parts += [text[last:start], rng.choice(substitutes)]
        last = end
    return "".join(parts) + text[last:]


def rename_code(source: str) -> str:
    """A Python program with every name it binds itself renamed (consistently, so it still runs: imported names,
    builtins and names an outside callee or object also uses are kept), every comment dropped and every docstring
    replaced: what a copier does so that no line of the original is left."""
    tree = ast.parse(source)
    names, fields = _own_names(tree)
    renamed = {name: f"q{index}_{len(name)}z" for index, name in enumerate(sorted(names | fields))}
    at = _name_positions(tree, names, fields)
    out = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            token = token._replace(string="")
        elif token.type == tokenize.NAME and token.start in at:
            token = token._replace(string=renamed[token.string])
        elif token.type == tokenize.STRING and token.string.startswith(('"""', "'''")):
            token = token._replace(string='"""Made from scratch, honestly."""')
        out.append(token)
    return tokenize.untokenize(out)


def _own_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names the program binds itself (variables, functions, classes, parameters) and its classes' fields and
    methods, less names it imports, names inside f-strings (one token to the tokenizer) and names it also uses with
    code it did not write (keyword arguments of outside calls, attributes of outside objects)."""
    bound, fields, outside = set(), set(), set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)) or isinstance(node, ast.arg):
            bound.add(node.id if isinstance(node, ast.Name) else node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            outside.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.JoinedStr):
            outside.update(n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
                           if isinstance(n, ast.Name | ast.Attribute))
        if isinstance(node, ast.ClassDef):
            fields.update(_class_members(node))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and _is_self(node.value):
            fields.add(node.attr)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in bound):
            outside.update(k.arg for k in node.keywords if k.arg)
        elif isinstance(node, ast.Attribute) and (node.attr not in fields or _names_one_of(node.value, outside)):
            outside.add(node.attr)
    reserved = {*keyword.kwlist, *keyword.softkwlist, *dir(builtins), "self", "cls"}
    keep = outside | reserved
    return ({n for n in bound - keep if not n.startswith("__")}, {n for n in fields - keep if not n.startswith("__")})


def _class_members(node: ast.ClassDef) -> set[str]:
    members = set()
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            members.add(statement.target.id)
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            members.add(statement.name)
    return members


def _is_self(node: ast.AST) -> bool:
    return _names_one_of(node, {"self"})


def _names_one_of(node: ast.AST, names: set[str]) -> bool:
    return isinstance(node, ast.Name) and node.id in names


def _name_positions(tree: ast.AST, names: set[str], fields: set[str]) -> set[tuple[int, int]]:
    """Where (line, column) each occurrence of the names starts: variables, parameters, definitions and keyword
    arguments; and of the fields as attributes."""
    found = set()
    for node in ast.walk(tree):
        if _names_one_of(node, names) or (isinstance(node, ast.arg | ast.keyword) and node.arg in names | fields):
            found.add((node.lineno, node.col_offset))
        elif isinstance(node, ast.Attribute) and node.attr in fields:
            found.add((node.end_lineno, node.end_col_offset - len(node.attr)))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name in names | fields:
            keyword_length = {"ClassDef": 6, "FunctionDef": 4, "AsyncFunctionDef": 10}[type(node).__name__]
            found.add((node.lineno, node.col_offset + keyword_length))
    return found


def unrelated_texts() -> list[Document]:
    """Text that has nothing to do with any task: licences (the system's and installed distributions') and generic
    configuration files (this repository's, and /etc/*.conf)."""
    paths = sorted(Path("/usr/share/common-licenses").glob("*"))
    for distribution in metadata.distributions():
        paths += [Path(str(distribution.locate_file(f))) for f in distribution.files or ()
                  if Path(str(f)).name.upper().startswith(("LICENSE", "LICENCE", "COPYING"))]
    paths += [ROOT / "pyproject.toml", ROOT / ".gitignore", *sorted((ROOT / ".github" / "workflows").glob("*.yml")),
              *sorted(ROOT.glob("environments/*/environment/Dockerfile")), *sorted((ROOT / "docs").glob("*.md")),
              *sorted((ROOT / "scoring" / "schema").glob("*.json")), *sorted(Path("/etc").glob("*.conf"))]
    documents = []
    for path in dict.fromkeys(paths):
        try:
            documents.append(Document(str(path), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return documents
