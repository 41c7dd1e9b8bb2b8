"""A separate verifier image (`[verifier] environment_mode = "separate"`, built from tests/Dockerfile): what it adds.

The arena verifies in a fresh container made from the agent's final state, with no network, so whatever the source's
verifier image installs must already be in the agent's image. The import therefore builds it in: the image's setup
lines (RUN, ENV, ARG, WORKDIR, USER) are appended to environment/Dockerfile in a marked block, and the files it
copies from the tests folder stay verifier data, which reaches the container only at verification and is then put
where that image had it. Nothing of the tests enters the agent's image; the tools do (public packages, not answers).

What cannot be built in that way is a to-do with its file and line: a RUN line that uses the tests' own files, a
second build stage, a COPY from elsewhere, a prebuilt verifier image whose contents the import cannot read.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path, PurePosixPath

from interop.dockerfile_facts import Instruction, facts, instructions, joined_path
from interop.files import read_text, relative_to
from interop.source_task import Placement, SourceTask, VerifierImage

SETUP = frozenset({"RUN", "ENV", "ARG", "WORKDIR", "USER"})
HARMLESS_RUN = frozenset({"chmod", "chown", "ls", "mkdir", "true"})
_URL = re.compile(r"^(?:https?|ftp|git)://|^git@")


def read_verifier_image(source: SourceTask, tests_dir: Path) -> None:
    """Fill source.verifier_image from a separate verifier's Dockerfile (nothing in shared mode)."""
    if not source.verifier_separate:
        return
    root = source.root
    for name in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml"):
        if (tests_dir / name).is_file():
            where = relative_to(tests_dir / name, root)
            source.verifier_exclude |= {where}
            source.lost(where, "the separate verifier's services are not supported: the arena verifies in one "
                        "container")
    dockerfile = tests_dir / "Dockerfile"
    if not dockerfile.is_file():
        _without_dockerfile(source)
        return
    where = relative_to(dockerfile, root)
    source.verifier_exclude |= {where}
    image = VerifierImage(where)
    reader = _Reader(source, image, tests_dir)
    for item in instructions(read_text(dockerfile, root)):
        reader.take(item)
    reader.finish()
    source.verifier_image = image


def _without_dockerfile(source: SourceTask) -> None:
    if source.verifier_image_ref is not None:
        ref = source.verifier_image_ref
        source.todo("environment/Dockerfile", f"the separate verifier runs in the prebuilt image {ref.value} "
                    f"({ref.where}), whose contents the import cannot read: the arena verifies in the agent's image, "
                    f"so install there what {source.test_script} needs (pinned)")
        return
    source.mapped(str(source.verifier_separate), "a separate verifier with no image of its own runs in a fresh copy "
                  "of the task's environment; the arena's verifier container is made from the same image (with the "
                  "agent's final files), so it maps directly")


class _Reader:
    """Walks the verifier Dockerfile's instructions, sorting each into the block, a placement, or the report."""

    def __init__(self, source: SourceTask, image: VerifierImage, tests_dir: Path) -> None:
        self.source, self.image, self.tests_dir = source, image, tests_dir
        self.copied: list[str] = []
        self.stages = 0
        self.base: str | None = None

    def at(self, item: Instruction) -> str:
        return f"{self.image.dockerfile}:{item.line}"

    def take(self, item: Instruction) -> None:
        if item.keyword == "FROM":
            self.stages += 1
            words = [w for w in item.arguments.split() if not w.startswith("--")]
            self.base = words[0] if words else None
            if self.stages == 2:
                self.source.todo(self.at(item), "a verifier image built in several stages cannot be merged into the "
                                 "agent's image: only its last stage's setup lines were appended; add what the "
                                 "earlier stages build to environment/Dockerfile")
            self.image.lines.clear()
            self.image.placements.clear()
            self.image.workdir = None
        elif item.keyword in ("COPY", "ADD"):
            self._copy(item)
        elif item.keyword == "RUN" and self._uses_tests(item.arguments):
            self._run_with_tests(item)
        elif item.keyword in SETUP:
            self.image.lines.append(f"{item.keyword} {item.arguments}")
            if item.keyword == "WORKDIR":
                self.image.workdir = joined_path(self.image.workdir, item.arguments)
            elif item.keyword == "ENV":
                self.image.env.update(_env_pairs(item.arguments))
        else:
            self.source.lost(self.at(item), f"{item.keyword} in the verifier image has no meaning for the arena's "
                             "verifier (it runs verifier.py); ignored")

    def _copy(self, item: Instruction) -> None:
        words = _split(item.arguments)
        options = [w for w in words if w.startswith("--")]
        paths = [w for w in words if not w.startswith("--")]
        if any(o.startswith("--from") for o in options) or len(paths) < 2 or any(_URL.match(p) for p in paths):
            self.source.todo(self.at(item), f"`{item.keyword} {item.arguments}` copies from another stage, image or "
                             "URL, which the import cannot build in: add what it provides to environment/Dockerfile")
            return
        *sources, target = paths
        destination = joined_path(self.image.workdir, target)
        into_folder = target.endswith("/") or len(sources) > 1
        for raw in sources:
            relative = re.sub(r"^(?:\./)+", "", PurePosixPath(raw.strip("\"'")).as_posix()) or "."
            local = self.tests_dir / relative
            if relative != "." and not local.exists():
                self.source.todo(self.at(item), f"copies {raw}, which the tests folder does not hold")
                continue
            placed = f"{destination.rstrip('/')}/{PurePosixPath(relative).name}" \
                if into_folder and not local.is_dir() else destination
            self.copied += [placed, relative]
            mounted = f"{self.source.verifier_mount.rstrip('/')}/{relative}".rstrip("/.")
            if placed.rstrip("/") != mounted.rstrip("/"):
                self.image.placements.append(Placement(relative, placed))

    def _uses_tests(self, command: str) -> bool:
        return any(path != "." and re.search(rf"(?<![\w.-]){re.escape(path)}(?![\w.-])", command)
                   for path in self.copied)

    def _run_with_tests(self, item: Instruction) -> None:
        commands = [c.strip() for c in re.split(r"&&|;|\|\|", item.arguments) if c.strip()]
        if all(_split(c)[:1] and _split(c)[0] in HARMLESS_RUN for c in commands):
            self.source.mapped(self.at(item), f"`RUN {item.arguments[:80]}` prepares the test files; not needed: "
                               "the verifier puts them in place at verification time")
            return
        self.source.todo(self.at(item), f"`RUN {_short(item.arguments)}` uses the tests' own files, which never "
                         "enter the agent's image: install what it installs in environment/Dockerfile (pinned), "
                         "without the test files")

    def finish(self) -> None:
        source, image = self.source, self.image
        agent = source.environment_dir / "Dockerfile" if source.environment_dir else None
        agent_base = facts(read_text(agent, source.root)).base if agent and agent.is_file() else None
        if self.base and agent_base and self.base != agent_base:
            source.todo("environment/Dockerfile", f"the separate verifier image is built FROM {self.base}, the "
                        f"agent's FROM {agent_base}: its setup lines were appended to the agent's image (the arena "
                        "verifies there); check that they work on that base")
        setup = sum(1 for line in image.lines if not line.startswith(("WORKDIR", "USER")))
        parts = [f"{setup} setup line(s) appended to environment/Dockerfile in a marked block (the agent can use "
                 "what they install)"] if setup else []
        parts += [f"{p.source} put at {p.target} at verification" for p in image.placements]
        if image.env:
            parts.append(f"its environment ({', '.join(sorted(image.env))}) set for the test script")
        if image.workdir:
            parts.append(f"the tests run in {image.workdir}, its WORKDIR")
        source.mapped(image.dockerfile, "the separate verifier image is built into the package: "
                      + ("; ".join(parts) if parts else "it adds nothing the agent's image lacks"))


def _env_pairs(arguments: str) -> dict[str, str]:
    words = _split(arguments)
    if words and "=" not in words[0]:
        return {words[0]: " ".join(words[1:])}
    return dict(word.split("=", 1) for word in words if "=" in word)


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _short(text: str, limit: int = 80) -> str:
    """text cut at a word boundary, marked when cut."""
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"
