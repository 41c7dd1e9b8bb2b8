"""Unseeded randomness, clock reads and random ids in the generator and the verifier (ARENA301), on their syntax trees.

Looked at: the generator, the Python files beside it in its folder, verifier.py and Python files in verifier data.
Calls are recognised through the names a file imports (`import random as r`, `from uuid import uuid4`, numpy's
`np.random`). A clock read that only measures time (`time.time() - start`, where `start` is itself a clock read used
only that way) is not data.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from taskpkg.diagnostics import Diagnostic
from taskpkg.package import TaskPackage
from taskpkg.rules.generator import ARENA301
from validators.registry import Needs, check
from validators.static.files import PackageTree

SHARED_RNG = frozenset({
    "random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "uniform", "gauss", "normalvariate",
    "triangular", "betavariate", "expovariate", "gammavariate", "lognormvariate", "vonmisesvariate",
    "paretovariate", "weibullvariate", "getrandbits", "randbytes", "binomialvariate",
})
NUMPY_SHARED = SHARED_RNG | {"rand", "randn", "permutation", "integers", "normal", "bytes", "random_sample"}
GENERATORS = frozenset({"Random", "default_rng", "RandomState", "Generator"})
CLOCK = {("time", "time"), ("time", "time_ns"), ("time", "localtime"), ("time", "gmtime"), ("time", "ctime"),
         ("time", "asctime"), ("time", "strftime"), ("datetime", "now"), ("datetime", "utcnow"),
         ("datetime", "today"), ("date", "today")}
GIVEN_TIME = {"localtime": 1, "gmtime": 1, "ctime": 1, "asctime": 1, "strftime": 2}  # arguments that make them pure
UUIDS = frozenset({"uuid1", "uuid4"})
SYSTEM = {("random", "SystemRandom"), ("os", "urandom"), ("os", "getrandom")}
CALLS_BY_MODULE = {  # what scan looks for, by the module a name comes from (for the textual pre-check)
    "random": SHARED_RNG | {"SystemRandom"}, "numpy": NUMPY_SHARED, "os": {"urandom", "getrandom"},
    "time": {n for m, n in CLOCK if m == "time"}, "datetime": {n for m, n in CLOCK if m != "time"}, "uuid": UUIDS,
}
# Each pattern starts with a literal, so the regex engine skips ahead to it; what must precede is checked in Python.
_IMPORT = re.compile(r"import[ \t]+([^\n#;]+)")
_FROM = re.compile(r"from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)")
_HASH = re.compile(r"hash\s*\(")
_CANDIDATE = re.compile(rf"\.\s*({'|'.join(sorted(set().union(*CALLS_BY_MODULE.values()) | GENERATORS))})"
                        r"\s*\((\s*(?:None\s*)?\))?")  # `.shuffle(`; group 2: called without a seed


@dataclass
class _Names:
    """What a file's imports make its names mean: module aliases and imported functions."""

    modules: dict[str, str] = field(default_factory=dict)  # local name -> module (random, numpy.random, time, ...)
    functions: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (module, function)

    def add(self, node: ast.Import | ast.ImportFrom) -> None:
        """Learn the names an import statement binds."""
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.modules[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0])
        elif node.module and node.level == 0:
            for alias in node.names:
                local = alias.asname or alias.name
                if node.module in ("numpy", "datetime") and alias.name in ("random", "datetime", "date"):
                    self.modules[local] = f"{node.module}.{alias.name}"
                else:
                    self.functions[local] = (node.module, alias.name)

    def resolve(self, func: ast.expr) -> tuple[str, str] | None:
        """(module, name) a called expression stands for, or None."""
        if isinstance(func, ast.Name):
            return self.functions.get(func.id)
        if isinstance(func, ast.Attribute):
            owner = _dotted(func.value)
            if owner is None:
                return None
            head, _, tail = owner.partition(".")
            module = self.modules.get(head)
            if module is None and head in self.functions:
                module = ".".join(self.functions[head])
            if module is None:
                return None
            return (f"{module}.{tail}" if tail else module), func.attr
        return None


@dataclass
class _Module:
    """The nodes of a module that matter here, gathered in one walk."""

    names: _Names = field(default_factory=_Names)
    calls: list[ast.Call] = field(default_factory=list)
    subtractions: list[ast.BinOp] = field(default_factory=list)
    assigns: list[ast.Assign] = field(default_factory=list)
    loads: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, syntax: ast.Module) -> _Module:
        found = cls()
        stack: list[ast.AST] = [syntax]
        while stack:
            node: Any = stack.pop()  # told apart by exact type below: faster than isinstance, which types would need
            kind = type(node)
            if kind is ast.Call:
                found.calls.append(node)
            elif kind is ast.Name:
                if type(node.ctx) is ast.Load:
                    found.loads[node.id] = found.loads.get(node.id, 0) + 1
                continue
            elif kind is ast.BinOp and type(node.op) is ast.Sub:
                found.subtractions.append(node)
            elif kind is ast.Assign:
                found.assigns.append(node)
            elif kind is ast.Import or kind is ast.ImportFrom:
                found.names.add(node)
                continue
            elif kind is ast.Constant:
                continue
            stack.extend(ast.iter_child_nodes(node))
        return found


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value)
        return f"{owner}.{node.attr}" if owner else None
    return None


@check(ARENA301, needs=Needs.PACKAGE)
def check_determinism(tree: PackageTree, package: TaskPackage) -> list[Diagnostic]:
    """ARENA301 for every nondeterministic call in the generator's and the verifier's Python files."""
    found: list[Diagnostic] = []
    for relative in _watched(tree, package):
        file = tree.by_path[relative]
        if file.text is None or not may_be_nondeterministic(file.text):
            continue
        try:
            syntax = file.syntax()
        except (SyntaxError, ValueError):
            continue  # ARENA501 (the verifier) and ARENA008 (any other file) report broken syntax
        found += [ARENA301.found(relative, line, case=case, call=call) for line, case, call in scan(syntax)]
    return found


def may_be_nondeterministic(text: str) -> bool:
    """A textual pre-check that never misses what `scan` finds: `hash(`, anything from `secrets`, or a call of a
    function scan looks for through a name the file imports (a module, or a name from it). Most files then need no
    syntax tree at all."""
    if any(not _after_name_or_dot(text, m.start()) for m in _HASH.finditer(text)):
        return True
    names = _imported_names(text)
    if any(module == "secrets" for module, _ in names.values()):
        return True
    # A call through a module needs the module's name, or a name of numpy's or datetime's, right before its dot.
    owners = tuple({*names, "random", "datetime", "date"})
    for match in _CANDIDATE.finditer(text):  # `.name(`: then is what comes before it an imported module?
        end = match.start()
        while end and text[end - 1] in " \t":
            end -= 1
        if not text.endswith(owners, 0, end):
            continue
        module = names.get(_head_before(text, match.start()) or "", (None, None))[0]
        name, unseeded = match.group(1), match.group(2) is not None
        if module and (name in CALLS_BY_MODULE[module] or (name in GENERATORS and unseeded)):
            return True
    bare = [re.escape(local) + (r"\s*\(" if name in CALLS_BY_MODULE[module] else r"\s*\(\s*(?:None\s*)?\)")
            for local, (module, name) in names.items() if name in CALLS_BY_MODULE[module] or name in GENERATORS]
    return bool(bare) and re.search(rf"(?<![\w.])(?:{'|'.join(bare)})", text) is not None


def _starts_statement(text: str, index: int) -> bool:
    """Whether a statement may start at index: only indentation, or a `:` or `;`, precedes it on its line."""
    before = text[text.rfind("\n", 0, index) + 1:index].rstrip(" \t")
    return not before or before.endswith((":", ";"))


def _after_name_or_dot(text: str, index: int) -> bool:
    """Whether index continues a name or an attribute (`rehash(`, `x.hash(`), so it is not the builtin."""
    return index > 0 and (text[index - 1].isalnum() or text[index - 1] in "_.")


def _head_before(text: str, end: int) -> str | None:
    """The first name of the dotted chain that ends at `end` (`np` of `np.random` before `.shuffle(`), or None."""
    head = None
    while True:
        start = end
        while start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        if start == end:
            return head
        head = text[start:end]
        before = start
        while before and text[before - 1] in " \t":
            before -= 1
        if not before or text[before - 1] != ".":
            return head
        end = before - 1
        while end and text[end - 1] in " \t":
            end -= 1


def _imported_names(text: str) -> dict[str, tuple[str, str | None]]:
    """Local name -> (module, imported name or None for the module itself), for every import of a module scan knows,
    read from the text."""
    names: dict[str, tuple[str, str | None]] = {}
    for match in _IMPORT.finditer(text):
        if not _starts_statement(text, match.start()):
            continue
        for part in match.group(1).split(","):
            module, _, alias = part.strip().partition(" as ")
            top = module.split(".")[0].strip()
            if top in CALLS_BY_MODULE or top == "secrets":
                names[alias.strip() or top] = (top, None)
    for match in _FROM.finditer(text):
        if not _starts_statement(text, match.start()):
            continue
        top = match.group(1).split(".")[0]
        if top in CALLS_BY_MODULE or top == "secrets":
            for part in match.group(2).strip("()").split(","):
                name, _, alias = (item.strip() for item in part.partition(" as "))
                if name:
                    names[alias or name] = (top, name)
    return names


def _watched(tree: PackageTree, package: TaskPackage) -> list[str]:
    """The generator, the Python files of its folder, verifier.py and Python files in verifier data."""
    folder = PurePosixPath(package.generator).parent.as_posix()
    roots = tuple(d.rstrip("/") for d in package.verifier_data) + ((folder,) if folder != "." else ())
    watched = {package.generator, "verifier.py"}
    watched |= {f.relative for f in tree.files if f.relative.endswith(".py")
                and any(f.relative == r or f.relative.startswith(r + "/") for r in roots)}
    return sorted(w for w in watched if w in tree.by_path)


def scan(syntax: ast.Module) -> list[tuple[int, str, str]]:
    """(line, case, call) of every nondeterministic call in a module."""
    module = _Module.of(syntax)
    names = module.names
    seeded = any(isinstance(node.func, ast.Attribute) and node.func.attr == "seed" and (node.args or node.keywords)
                 for node in module.calls)  # random.seed(x) or rng.seed(x): whatever is drawn later is repeatable
    durations = _duration_calls(module)
    found = []
    for node in module.calls:
        if isinstance(node.func, ast.Name) and node.func.id == "hash" and "hash" not in names.functions:
            found.append((node.lineno, "hash", "hash()"))
            continue
        target = names.resolve(node.func)
        case = _case(node, target, seeded, id(node) in durations) if target else None
        if case and target:
            found.append((node.lineno, case, f"{target[0]}.{target[1]}()"))
    return sorted(found)


def _case(node: ast.Call, target: tuple[str, str], seeded: bool, measures_time: bool) -> str | None:
    module, name = target
    no_seed = (not node.args and not node.keywords) or (
        len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and node.args[0].value is None)
    if (module, name) in SYSTEM or module == "secrets":
        return "system"
    if module in ("random", "numpy.random") and name in GENERATORS:
        return "unseeded" if no_seed and not seeded else None
    if (module == "random" and name in SHARED_RNG) or (module == "numpy.random" and name in NUMPY_SHARED):
        return None if seeded else "global"
    short = module.rsplit(".", 1)[-1]
    if (short, name) in CLOCK and not measures_time:
        return "clock" if len(node.args) < GIVEN_TIME.get(name, 99) else None
    if module == "uuid" and name in UUIDS:
        return "uuid"
    return None


def _duration_calls(module: _Module) -> set[int]:
    """ids of calls that only measure time: operands of a subtraction, or assigned to a name that is only ever
    subtracted."""
    subtracted: set[int] = set()
    uses_in_subtractions: dict[str, int] = {}
    for node in module.subtractions:
        for side in (node.left, node.right):
            if isinstance(side, ast.Call):
                subtracted.add(id(side))
            elif isinstance(side, ast.Name):
                uses_in_subtractions[side.id] = uses_in_subtractions.get(side.id, 0) + 1
    timers = {name for name, count in uses_in_subtractions.items() if module.loads.get(name, 0) == count}
    for node in module.assigns:
        if isinstance(node.value, ast.Call) and all(isinstance(t, ast.Name) and t.id in timers for t in node.targets):
            subtracted.add(id(node.value))
    return subtracted
