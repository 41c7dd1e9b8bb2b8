"""Authors and licence: the arena needs GitHub handles and an SPDX licence that foreign formats rarely carry."""

from __future__ import annotations

import re

from interop.errors import InteropError
from interop.model import SourceTask
from taskpkg.schema import task_schema

_PROPS = task_schema()["properties"]
HANDLE = re.compile(_PROPS["authors"]["items"]["properties"]["github"]["pattern"])
LICENSE = re.compile(_PROPS["license"]["pattern"])
PLACEHOLDER_NAME, PLACEHOLDER_HANDLE, DEFAULT_LICENSE = "Your Name", "your-github-handle", "Apache-2.0"
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
            source.notes.append(f"{author.where}: author '{author.name}' taken to be a GitHub handle")
        if handle is None and github is not None:
            handle, github = github, None
        if handle is None:
            comments[("authors", len(authors), "github")] = (
                f"TODO(arena): the source gives no GitHub handle for {author.name}; put theirs here")
            source.lost(author.where, f"no GitHub handle for author {author.name}: fill it in task.md "
                        "(or import with --github HANDLE)")
        authors.append({"name": author.name[:100], "github": handle or PLACEHOLDER_HANDLE})
    if not authors:
        if github is not None:
            return [{"name": github, "github": github}]
        comments[("authors", 0, "name")] = "TODO(arena): the source names no author; put yours here"
        comments[("authors", 0, "github")] = "TODO(arena): your GitHub handle, without the @"
        source.lost(source.config_file, "no author in the source: fill `authors:` in task.md (or import with "
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
    comments[("license",)] = f"TODO(arena): {what}; confirm or change this SPDX id"
    source.lost(where, f"{what}: confirm the licence in task.md (or import with --license SPDX-ID)")
    return DEFAULT_LICENSE
