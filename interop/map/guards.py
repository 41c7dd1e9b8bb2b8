"""Install fallbacks behind a guard: the branch of a test script that installs its tools only when a guard says they
are missing, which `arena import` resolves by installing those tools in the image at build time.

A guard is an `if` whose condition asks either
- whether the tools are there: `command -v X`, `which X`, `type X`, `hash X`, `python3 -c "import X"`,
  `python3 -m X --version`, `X --version` (a `$VAR` set earlier in the script, `VAR="${OTHER:-pytest}"`, reads as its
  default); or
- whether a documented switch skips the installs: a variable named like `*SKIP*DEPS*` or `*SKIP*INSTALL*`
  (BenchFlow's `BENCHFLOW_SKIP_VERIFIER_DEPS`, Harbor tasks' equivalents) compared with 1, true or yes, or tested
  with `-n` / `-z`.
Terms joined by `||` that all say "ready" make the `else` branch the fallback; terms that all say "missing" (`!`,
`!=`, `-z`, joined by `&&`) make the `then` branch the fallback. The fallback must install something, and everything
it does must be something an image can do instead: apt and pip installs, uv and the tools uv runs with their `--with`
packages, uv's own installer piped into a shell (pip replaces it), PATH set-up. Anything else (another download piped
into a shell, a requirements file from the tests) leaves the fallback as it is, for the static check to report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from taskpkg.installs import PIPE_TO_SHELL, debian_packages, python_packages

SKIP_SWITCH = re.compile(r"SKIP\w*(?:DEP|INSTALL)", re.IGNORECASE)
_IF = re.compile(r"^\s*if\s+(?P<condition>.+?)\s*;\s*then\s*$")
_TOOL_GUARDS = (re.compile(r"^(?:command\s+-v|which|type|hash)\s+(?P<tool>\S+)$"),
                re.compile(r"^python3?\s+-c\s+[\"']\s*import\s+(?P<tool>[\w.]+)\s*[\"']$"),
                re.compile(r"^python3?\s+-m\s+(?P<tool>[\w.-]+)\s+--version$"),
                re.compile(r"^(?P<tool>[\w.-]+)\s+--version$"))
_COMPARE = re.compile(r"^(?:\[\[?|test)\s+(?P<left>\S+)\s+(?P<op>==?|!=)\s+(?P<right>\S+?)\s*(?:\]\]?)?$")
_SET_TEST = re.compile(r"^(?:\[\[?|test)\s+-(?P<op>[nz])\s+(?P<value>\S+?)\s*(?:\]\]?)?$")
_VARIABLE = re.compile(r"^\$\{?(?P<name>[A-Za-z_]\w*)(?::?-(?P<default>[^}]*))?\}?$")
_ASSIGN = re.compile(r"^\s*(?:export\s+|readonly\s+)?(?P<name>[A-Za-z_]\w*)=(?P<value>\S+)\s*$")
_QUIET = re.compile(r"\s*(?:[12]?>\s*/dev/null|[12]>&[12]|&>\s*/dev/null)")
_TRUE_WORDS = frozenset({"1", "true", "yes"})
_UV_INSTALLER = re.compile(r"astral\.sh/uv/|github\.com/astral-sh/uv/")
_SET_UP = re.compile(r"^(?:source|\.)\s+\S*(?:\.local/bin/env|\.cargo/env)\S*$|^export\s+PATH=")
_DOWNLOADERS = frozenset({"curl", "wget", "ca-certificates", "gnupg", "gpg"})


@dataclass(frozen=True)
class GuardedInstall:
    """A fallback branch (1-based lines, inclusive) and what resolving it needs: the switch to set (or None), the
    tools the guard asks for, and the Python and Debian packages the branch installs (as written)."""

    first: int
    last: int
    guard_line: int
    guard: str
    switch: str | None
    tools: tuple[str, ...]
    python: tuple[str, ...] = ()
    debian: tuple[str, ...] = ()
    blockers: tuple[str, ...] = field(default=())

    @property
    def resolvable(self) -> bool:
        """Whether an image can do everything the branch does."""
        return not self.blockers and bool(self.python or self.debian)


def guarded_installs(text: str) -> list[GuardedInstall]:
    """Every install fallback behind a guard in a shell script."""
    lines = text.split("\n")
    defaults = _defaults(lines)
    found = []
    for index, raw in enumerate(lines):
        match = _IF.match(raw)
        guard = _guard(match.group("condition"), defaults) if match else None
        branches = _branches(lines, index) if guard else None
        if guard is None or branches is None:
            continue
        ready, switch, tools = guard
        then_end, else_at, fi = branches
        if ready and else_at is None:
            continue  # nothing runs when the tools are missing
        first, last = (else_at + 2, fi) if ready and else_at is not None else (index + 2, then_end + 1)
        installs = _installs(lines[first - 1:last], first) if first <= last else None
        if installs is not None:
            found.append(GuardedInstall(first, last, index + 1, match.group("condition").strip(), switch, tools,
                                        *installs))
    return found


def _guard(condition: str, defaults: dict[str, str]) -> tuple[bool, str | None, tuple[str, ...]] | None:
    """(whether true means ready, the skip switch, the tools asked for) of a condition made only of guard terms that
    all say the same (ready, or missing), else None."""
    if "||" in condition and "&&" in condition:
        return None
    readings = [_term(part.strip(), defaults) for part in re.split(r"\|\||&&", condition)]
    terms = [r for r in readings if r is not None]
    if len(terms) != len(readings) or len({ready for ready, _, _ in terms}) != 1:
        return None
    switches = [switch for _, switch, _ in terms if switch]
    return terms[0][0], (switches[0] if switches else None), tuple(tool for _, _, tool in terms if tool)


def _term(term: str, defaults: dict[str, str]) -> tuple[bool, str | None, str | None] | None:
    """(true means ready, switch, tool) of one guard term, or None when it is not one."""
    negated = term.startswith("! ")
    term = _QUIET.sub("", term.removeprefix("! ")).strip()
    for pattern in _TOOL_GUARDS:
        match = pattern.match(term)
        if match:
            tool = _value(match.group("tool"), defaults).split(".")[0]
            return (not negated, None, tool) if tool else None
    compare, is_set = _COMPARE.match(term), _SET_TEST.match(term)
    if compare:
        sides = [compare.group("left"), compare.group("right")]
        variable = next((v for v in (_VARIABLE.match(s.strip("\"'")) for s in sides) if v), None)
        value = next((s.strip("\"'") for s in sides if not _VARIABLE.match(s.strip("\"'"))), "")
        if variable is None or not SKIP_SWITCH.search(variable.group("name")) or value.lower() not in _TRUE_WORDS:
            return None
        return (compare.group("op") != "!=") != negated, variable.group("name"), None
    if is_set:
        variable = _VARIABLE.match(is_set.group("value").strip("\"'"))
        if variable is None or not SKIP_SWITCH.search(variable.group("name")):
            return None
        return (is_set.group("op") == "n") != negated, variable.group("name"), None
    return None


def _value(word: str, defaults: dict[str, str]) -> str:
    """A word with a `$VAR` read as the value the script gives it (its default), else as written."""
    word = word.strip("\"'")
    variable = _VARIABLE.match(word)
    if variable is None:
        return word
    return defaults.get(variable.group("name"), variable.group("default") or "")


def _defaults(lines: list[str]) -> dict[str, str]:
    """Variables the script sets at the top level, each to its value (`${OTHER:-x}` read as x)."""
    found: dict[str, str] = {}
    for line in lines:
        match = _ASSIGN.match(line)
        if match and not line.startswith((" ", "\t")):
            value = match.group("value").strip("\"'")
            inner = _VARIABLE.match(value)
            found[match.group("name")] = (inner.group("default") or "") if inner else value
    return found


def _installs(branch: list[str], first: int) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
    """(Python packages, Debian packages, what an image cannot do instead) of a fallback branch; None when it
    installs nothing."""
    python: list[str] = []
    debian: list[str] = []
    blockers: list[str] = []
    downloads = False
    for number, line in _logical_lines(branch, first):
        if PIPE_TO_SHELL.search(line):
            downloads = True
            if not _UV_INSTALLER.search(line):
                blockers.append(f"line {number} pipes a download other than uv's installer into a shell")
            continue
        packages = python_packages(line)
        python += [p for p in packages if not p.startswith("$")]
        debian += debian_packages(line)
        if re.search(r"(?:^|\s)(?:-r|--requirement|--with-requirements)\s", line):
            blockers.append(f"line {number} installs from a requirements file of the tests")
        elif any(p.startswith("$") for p in packages):
            blockers.append(f"line {number} installs packages named by a variable")
    if not (python or debian or downloads):
        return None
    kept = [p for p in debian if not (downloads and p in _DOWNLOADERS)]
    return tuple(dict.fromkeys(python)), tuple(dict.fromkeys(kept)), tuple(blockers)


def _logical_lines(lines: list[str], first: int) -> list[tuple[int, str]]:
    """Lines with continuations joined and comments dropped, each with the number of its first line."""
    joined: list[tuple[int, str]] = []
    pending: list[str] = []
    start = first
    for offset, raw in enumerate(lines):
        line = raw.split(" #", 1)[0].strip() if not raw.strip().startswith("#") else ""
        if not pending:
            start = first + offset
        if line.endswith("\\"):
            pending.append(line[:-1])
            continue
        pending.append(line)
        text = " ".join(part.strip() for part in pending).strip()
        pending = []
        if text and not _SET_UP.match(text):
            joined.append((start, text))
    return joined


def _branches(lines: list[str], start: int) -> tuple[int, int | None, int] | None:
    """(last line of the then-branch, the else line, the fi line), 0-based, for the if at start; None if unclear."""
    depth, else_at = 0, None
    for index in range(start + 1, len(lines)):
        words = lines[index].strip().split()
        head = words[0] if words else ""
        if head == "if" and not re.search(r";\s*fi\s*$", lines[index]):
            depth += 1
        elif head == "fi" or head.startswith("fi;"):
            if depth == 0:
                return (else_at - 1 if else_at is not None else index - 1), else_at, index
            depth -= 1
        elif head == "elif" and depth == 0:
            return None
        elif head == "else" and depth == 0:
            else_at = index
    return None
