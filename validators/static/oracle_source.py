"""oracle/ checks: the reference solution must compute its answer, not copy or echo one."""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

from taskpkg.diagnostics import Diagnostic
from taskpkg.dockerfile_reader import split_words
from taskpkg.package import TaskPackage
from taskpkg.rules.sources import ARENA602, ARENA603
from validators.registry import Needs, check
from validators.static.files import PLACEHOLDER, PackageFile, PackageTree

CODE_SUFFIXES = frozenset({".sh", ".py"})
DOC_SUFFIXES = frozenset({".md"})
SHELL_NO_LOGIC = frozenset({
    "cp", "mv", "cat", "echo", "printf", "install", "tee", "true", ":", "exit", "set", "cd", "mkdir", "chmod",
    "ln", "rsync", "dd", "touch", "exec",
})
PYTHON_LOGIC = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.comprehension, ast.FunctionDef, ast.AsyncFunctionDef,
                ast.Lambda, ast.BinOp, ast.Compare, ast.IfExp, ast.Try, ast.Match)
_SCRIPT_REFERENCE = re.compile(r"([\w.-]+\.(?:sh|py))\b")
# One pass over a script finds its first logic outside strings and comments: a string or comment is skipped whole;
# a word that only code with a logic node holds (`for`, `if`, `in`, `==`, ...) is logic. (A string's prefix, r, b or
# f, is left as a word; a word's start is checked in Python, which keeps the pattern's first characters few.)
CODE_LOGIC = re.compile(r"(?P<skip>#[^\n]*|'{3}(?:\\[\s\S]|[^\\])*?'{3}|\"{3}(?:\\[\s\S]|[^\\])*?\"{3}"
                        r"|'(?:\\[\s\S]|[^\\'\n])*'|\"(?:\\[\s\S]|[^\\\"\n])*\")"
                        r"|(?:for|while|if|def|lambda|try|in|is)\b|[=!<>]=")


@check(ARENA602, ARENA603, needs=Needs.PACKAGE)
def check_oracle(tree: PackageTree, package: TaskPackage) -> list[Diagnostic]:
    """Flag an oracle with no logic of its own, and data files shipped in oracle/."""
    oracle_files = {f.relative.removeprefix("oracle/"): f for f in tree.files if f.relative.startswith("oracle/")}
    found: list[Diagnostic] = []
    entry = package.oracle_entrypoint
    if entry in oracle_files and not _is_placeholder(oracle_files[entry]) and _is_trivial(entry, oracle_files, set()):
        found.append(ARENA602.found(f"oracle/{entry}", 1, entry=entry))
    for name, file in sorted(oracle_files.items()):
        suffix = PurePosixPath(name).suffix
        if suffix not in CODE_SUFFIXES and suffix not in DOC_SUFFIXES:
            found.append(ARENA603.found(file.relative, name=name))
    return found


def _is_placeholder(file: PackageFile) -> bool:
    """An entrypoint still holding a placeholder: ARENA202 reports it, the one finding for a missing oracle."""
    return PLACEHOLDER.search(file.text or "") is not None


def _is_trivial(name: str, oracle_files: dict[str, PackageFile], visiting: set[str]) -> bool:
    """Whether the script, and every oracle script it runs, has no logic beyond copying and printing."""
    if name in visiting:
        return True
    visiting.add(name)
    text = oracle_files[name].text or ""
    if name.endswith(".py"):
        return _python_is_trivial(oracle_files[name], text)
    for command in _shell_commands(text):
        words = split_words(command)
        if not words:
            continue
        called = [PurePosixPath(m).name for m in _SCRIPT_REFERENCE.findall(command)]
        local = [c for c in called if c in oracle_files and c != name]
        if local:
            if not all(_is_trivial(c, oracle_files, visiting) for c in local):
                return False
            continue
        if words[0] not in SHELL_NO_LOGIC:
            return False
    return True


def _shell_commands(text: str) -> list[str]:
    commands = []
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        commands.extend(part.strip() for part in re.split(r"&&|\|\||;|\|", stripped) if part.strip())
    return commands


def has_logic_in_code(text: str) -> bool:
    """Whether Python source has a logic keyword or comparison outside its strings and comments (then it certainly
    has a logic node; without one, only its syntax tree can tell)."""
    for match in CODE_LOGIC.finditer(text):
        start = match.start()
        if match.group("skip") is None and (start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "_.")
                                             or match.group(0)[0] in "=!<>"):
            return True
    return False


def _python_is_trivial(file: PackageFile, text: str) -> bool:
    """Whether a Python script has no logic node. Logic keywords or comparisons in its code (outside strings and
    comments) settle it without a syntax tree; otherwise the file's one tree decides."""
    if has_logic_in_code(text):
        return False
    try:
        tree = file.syntax()
    except (SyntaxError, ValueError):
        return False
    return not any(isinstance(node, PYTHON_LOGIC) for node in ast.walk(tree))
