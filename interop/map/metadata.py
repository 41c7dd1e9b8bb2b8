"""Foreign metadata onto the native frontmatter: name, title, version, tags, difficulty, authors and licence.

The arena needs GitHub handles and an SPDX licence that foreign formats rarely carry: what is missing becomes a
`TODO(arena import)` comment in task.md, which the static check points at.
"""

from __future__ import annotations

import re

from interop.map.domain import slug
from interop.source_task import InteropError, SourceTask
from taskpkg.scaffold import NAME_PATTERN
from taskpkg.schema import task_schema

_SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
DIFFICULTY_WORDS = {"easy": "easy", "beginner": "easy", "trivial": "easy", "medium": "medium",
                    "intermediate": "medium", "moderate": "medium", "hard": "hard", "advanced": "hard",
                    "expert": "hard", "difficult": "hard"}
MAX_TAGS, MAX_TAG_LENGTH = 12, 32
MIN_TITLE, MAX_TITLE = 8, 120


def choose_name(source: SourceTask, requested: str | None) -> str:
    """--name when given, else the source's name (or folder) as a package slug."""
    if requested is not None:
        if not (3 <= len(requested) <= 48 and NAME_PATTERN.match(requested)):
            raise InteropError("--name", f"'{requested}' is not a valid package name",
                               "Use 3-48 lowercase letters, digits and single hyphens, starting with a letter.")
        return requested
    raw = str(source.name.value) if source.name else source.root.resolve().name
    name = slug(raw.rsplit("/", 1)[-1])
    if name and not name[0].isalpha():
        name = f"task-{name}"
    name = name[:48].rstrip("-")
    if len(name) < 3 and name:
        name = f"{name}-task"
    if not NAME_PATTERN.match(name or "-"):
        where = source.name.where if source.name else str(source.root)
        raise InteropError(where, f"'{raw}' cannot be turned into a package name", "Pass --name NAME.")
    if name != raw:
        where = source.name.where if source.name else "the folder name"
        source.mapped(where, f"package name '{name}' made from '{raw}'")
    return name


def choose_title(source: SourceTask, name: str) -> str:
    """A one-line title of 8-120 characters: the source's, else the prompt's first heading or sentence."""
    given = _one_line(str(source.title.value)) if source.title else ""
    title = given or _title_from_prompt(source.prompt or (source.turns[0].text if source.turns else ""))
    if len(title) < MIN_TITLE:
        title = f"{title or name.replace('-', ' ').capitalize()} (imported task)"
    if not given:
        source.mapped(source.prompt_where, f"title '{title}' derived from the prompt (the source has none): edit "
                    "`title:` in task.md")
    elif title != given and source.title is not None:
        source.mapped(source.title.where, f"title shortened or extended to '{title}'")
    return title


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    if len(line) <= MAX_TITLE:
        return line
    cut = line[: MAX_TITLE - 1].rsplit(" ", 1)[0]
    return cut + "…"


def _title_from_prompt(prompt: str) -> str:
    for line in prompt.split("\n"):
        stripped = line.strip()
        if stripped.startswith("#"):
            return _one_line(stripped.lstrip("#").strip().strip("*_`"))
        if stripped:
            sentence = re.split(r"(?<=[.!?])\s", stripped, maxsplit=1)[0]
            return _one_line(sentence.strip("*_`"))
    return ""


def choose_tags(source: SourceTask) -> list[str]:
    """Tags as slugs (unique, at most 12 of at most 32 characters); what cannot be kept is reported."""
    tags: list[str] = []
    for tag in source.tags:
        value = slug(str(tag.value))
        if not value or len(value) > MAX_TAG_LENGTH:
            source.lost(tag.where, f"tag '{tag.value}' is not a slug of at most {MAX_TAG_LENGTH} characters; dropped")
        elif value not in tags:
            if len(tags) == MAX_TAGS:
                source.lost(tag.where, f"tag '{tag.value}' dropped: at most {MAX_TAGS} tags")
                continue
            tags.append(value)
    return tags


def choose_difficulty(source: SourceTask) -> tuple[str, str | None]:
    """easy, medium or hard, with a YAML comment when it was not given as such."""
    value = source.difficulty
    if value is not None and str(value.value).strip().lower() in DIFFICULTY_WORDS:
        mapped = DIFFICULTY_WORDS[str(value.value).strip().lower()]
        if mapped != value.value:
            source.mapped(value.where, f"difficulty '{value.value}' read as {mapped}")
        return mapped, None
    where = value.where if value else source.config_file
    found = f"'{value.value}' is not easy, medium or hard" if value else "no difficulty in the source"
    source.todo("task.md", f"{found} ({where}); medium assumed: set `difficulty:` for a strong 8B model before "
                "training")
    return "medium", "not in the source: set easy, medium or hard"


def choose_version(source: SourceTask) -> str:
    """The package version as MAJOR.MINOR.PATCH (1.0.0 when the source has none)."""
    value = source.version
    text = str(value.value).strip().lstrip("v") if value else ""
    if _SEMVER.match(text):
        return text
    if value is not None and re.fullmatch(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)", text):
        source.mapped(value.where, f"version '{value.value}' written as {text}.0")
        return f"{text}.0"
    if value is not None:
        source.lost(value.where, f"version '{value.value}' is not MAJOR.MINOR.PATCH; 1.0.0 used")
    return "1.0.0"


_PROPS = task_schema()["properties"]
HANDLE = re.compile(_PROPS["authors"]["items"]["properties"]["github"]["pattern"])
LICENSE = re.compile(_PROPS["license"]["pattern"])
PLACEHOLDER_NAME, PLACEHOLDER_HANDLE, DEFAULT_LICENSE = "Your Name", "your-github-handle", "Apache-2.0"
PLACEHOLDER = "TODO(arena import)"
Comments = dict[tuple[str | int, ...], str]


def choose_authors(source: SourceTask, github: str | None, comments: Comments) -> list[dict]:
    """Authors with handles: given by the source, the name itself when it is a handle, else --github for the first."""
    if github is not None and not HANDLE.fullmatch(github):
        raise InteropError("--github", f"'{github}' is not a GitHub handle", "Give the handle without the @.")
    authors: list[dict] = []
    for author in source.authors:
        if any(a["name"] == author.name for a in authors) or len(authors) == 20:
            continue
        handle = author.github if author.github and HANDLE.fullmatch(author.github) else None
        if handle is None and HANDLE.fullmatch(author.name):
            handle = author.name
            source.mapped(author.where, f"author '{author.name}' taken to be a GitHub handle")
        if handle is None and github is not None:
            handle, github = github, None
        if handle is None:
            comments[("authors", len(authors), "github")] = (
                f"{PLACEHOLDER}: the source gives no GitHub handle for {author.name} ({author.where}); put theirs "
                "here (or import with --github HANDLE)")
        authors.append({"name": author.name[:100], "github": handle or PLACEHOLDER_HANDLE})
    if not authors:
        if github is not None:
            return [{"name": github, "github": github}]
        comments[("authors", 0, "name")] = f"{PLACEHOLDER}: the source names no author; put yours here"
        comments[("authors", 0, "github")] = (f"{PLACEHOLDER}: your GitHub handle, without the @ (or import with "
                                              "--github HANDLE)")
        return [{"name": PLACEHOLDER_NAME, "github": PLACEHOLDER_HANDLE}]
    return authors


def choose_license(source: SourceTask, requested: str | None, comments: Comments) -> str:
    """--license, else the source's SPDX id, else Apache-2.0 marked for the author to confirm."""
    if requested is not None:
        if not LICENSE.fullmatch(requested):
            raise InteropError("--license", f"'{requested}' is not an SPDX licence expression",
                               "Use an SPDX id such as Apache-2.0, MIT or CC-BY-4.0.")
        return requested
    given = str(source.license.value).strip() if source.license else ""
    if LICENSE.fullmatch(given):
        return given
    where = source.license.where if source.license else source.config_file
    what = f"licence '{given}' is not an SPDX id" if given else "no licence in the source"
    comments[("license",)] = (f"{PLACEHOLDER}: {what} ({where}); confirm or change this SPDX id (or import with "
                              "--license SPDX-ID)")
    return DEFAULT_LICENSE
