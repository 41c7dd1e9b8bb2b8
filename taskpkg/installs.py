"""What a line of shell installs: the one reading of pip, uv and apt install commands.

The static check uses it for unpinned packages (ARENA403) and for the fix it offers when a verifier installs at
verification time (ARENA504); `arena import` uses it to pin a source's unpinned packages and to bake the tools a
test script installs into the image.
"""

from __future__ import annotations

import re

from taskpkg.dockerfile_reader import split_words

PIPE_TO_SHELL = re.compile(r"\b(?:curl|wget)\b[^|;&]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b")
PIP_INSTALL = re.compile(r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b(?P<args>[^;&|]*)")
APT_INSTALL = re.compile(r"\bapt(?:-get)?\s+(?:-\S+\s+)*install\b(?P<args>[^;&|]*)")
UV_TOOL = re.compile(r"(?:\buvx|\buv\s+tool\s+(?:run|install)|\b(?P<run>uv\s+run))\b(?P<args>[^;&|]*)")
# Options of pip and `uv pip install` that take a value (the next word is not a package).
PIP_OPTIONS_WITH_VALUE = frozenset({
    "-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f", "--find-links",
    "--target", "-t", "--prefix", "--root", "--src", "-e", "--editable", "--python", "-p", "--python-version",
    "--platform", "--python-platform", "--implementation", "--abi", "--trusted-host", "--index", "--default-index",
    "--index-strategy", "--keyring-provider", "--cache-dir", "--cert", "--client-cert", "--proxy", "--timeout",
    "--retries", "--log", "--progress-bar", "--upgrade-strategy", "--only-binary", "--no-binary", "--report",
    "--exists-action", "--config-settings", "-C", "--config-setting", "--override", "--build-constraint", "-b",
    "--resolution", "--prerelease", "--exclude-newer", "--link-mode", "--reinstall-package", "--upgrade-package",
    "-P", "--refresh-package", "--no-build-package", "--no-binary-package", "--only-binary-package", "--group",
    "--extra", "--torch-backend", "--directory", "--project", "--config-file",
})
# Options of uvx / `uv tool run` / `uv run` that take a value; `--with` and `--from` name packages.
UV_OPTIONS_WITH_VALUE = PIP_OPTIONS_WITH_VALUE | {"--with", "-w", "--from", "--with-requirements", "--with-editable"}
_LOCAL_SOURCE = re.compile(r"^(?:\.{1,2}(?:/|$)|/|~|file:|git\+|https?://)|\.(?:whl|tar\.gz|zip)$")
_REDIRECT = re.compile(r"^\d*[<>]")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")


def pip_arguments(arguments: str) -> tuple[list[str], list[str]]:
    """(requirements, requirements files) of the words after `pip install`, as written (`$VAR` included); options
    and their values, and everything after a redirection, are left out."""
    words = split_words(arguments)
    requirements, files = [], []
    index = 0
    while index < len(words):
        word = words[index]
        if word in PIP_OPTIONS_WITH_VALUE:
            if word in ("-r", "--requirement") and index + 1 < len(words):
                files.append(words[index + 1])
            index += 2
            continue
        if _REDIRECT.match(word):
            break
        if not word.startswith("-"):
            requirements.append(word)
        index += 1
    return requirements, files


def is_pinned(requirement: str) -> bool:
    """Whether a requirement names one exact version or source (`x==1.2`, a local path, a URL, `x @ url`)."""
    return "==" in requirement or _LOCAL_SOURCE.search(requirement) is not None or "@" in requirement


def requirement_name(requirement: str) -> str:
    """The normalised project name of a requirement (`Foo_Bar[x]>=1` → `foo-bar`), as registries compare names."""
    match = _NAME.match(requirement.strip())
    return re.sub(r"[-_.]+", "-", match.group(0)).lower() if match else ""


def python_packages(line: str) -> list[str]:
    """The Python requirements a line installs or runs with pip, `uv pip`, `uv tool` or uvx (`--with` included), as
    written."""
    found: list[str] = []
    for match in PIP_INSTALL.finditer(line):
        found += pip_arguments(match.group("args"))[0]
    for match in UV_TOOL.finditer(line):
        found += _uv_tool_requirements(split_words(match.group("args")), tool=match.group("run") is None)
    return list(dict.fromkeys(found))


def debian_packages(line: str) -> list[str]:
    """The Debian packages a line installs with apt or apt-get, as written."""
    found: list[str] = []
    for match in APT_INSTALL.finditer(line):
        for word in split_words(match.group("args")):
            if _REDIRECT.match(word):
                break  # what follows is where the output goes
            if not word.startswith("-"):
                found.append(word)
    return found


def _uv_tool_requirements(words: list[str], tool: bool) -> list[str]:
    """`--with X`, `--from X` and, where the command runs a tool (uvx, not `uv run`), the tool itself (unless
    `--from` names its package)."""
    found, source, index = [], None, 0
    while index < len(words):
        word = words[index]
        if word in UV_OPTIONS_WITH_VALUE:
            if index + 1 < len(words) and word in ("--with", "-w"):
                found += [w for w in words[index + 1].split(",") if w]
            elif index + 1 < len(words) and word == "--from":
                source = words[index + 1]
            index += 2
            continue
        if word.startswith("-"):
            index += 1
            continue
        package = source or word
        if tool and not package.startswith("$") and _NAME.match(package):
            found.append(package)
        break
    return found
