"""Environment images: content-hashed tags, cached reuse, builds bounded by the package's build timeout."""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass, field

import docker
from docker.errors import APIError, ImageNotFound

from sandbox.build_isolation import BuildPolicy, Isolation, IsolationError, isolated
from sandbox.engine import API_TIMEOUT_S, labels
from taskpkg.digest import tree_digest
from taskpkg.dockerfile_reader import parse
from taskpkg.package import TaskPackage

IMAGE_REPOSITORY = "posttrain-arena/env"
DOCKERFILE = "environment/Dockerfile"
_STEP = re.compile(r"^Step (\d+)/\d+ : (.*)$")
_PARSE_ERROR_LINE = re.compile(r"dockerfile parse error line (\d+)", re.IGNORECASE)
_TERMINAL_CODES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_HEREDOC_HINT = ("; the engine's builder (the classic one, which the arena uses) does not read heredocs: put the "
                 "script in a file under environment/, COPY it and RUN it")


class BuildFailed(RuntimeError):
    """The image did not build; `step` is the Dockerfile instruction that failed and `line` its line in the
    Dockerfile (None where unknown); `log` is the build's output tail, without terminal codes."""

    def __init__(self, message: str, step: str | None, log: str, timed_out: bool = False,
                 line: int | None = None) -> None:
        super().__init__(message)
        self.step = step
        self.log = log
        self.timed_out = timed_out
        self.line = line


def plain(text: str) -> str:
    """Build output as plain text: terminal colour and cursor codes removed, and of a line redrawn with carriage
    returns (a progress bar) only what was drawn last."""
    lines = _TERMINAL_CODES.sub("", text).split("\n")
    return "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines)


def failing_line(dockerfile: str, step: int | None, error: str) -> tuple[int | None, bool]:
    """The Dockerfile line of the failing step (the engine numbers instructions from 1), or the line a parse error
    names; and whether that line is inside a heredoc body."""
    parsed = parse(dockerfile)
    match = _PARSE_ERROR_LINE.search(error)
    if match:
        line = int(match.group(1))
        in_heredoc = any(h.first_line <= line < h.first_line + h.body.count("\n") + 1
                         for i in parsed.instructions for h in i.heredocs)
        return line, in_heredoc
    if step is not None and 1 <= step <= len(parsed.instructions):
        return parsed.instructions[step - 1].line, False
    return None, False


@dataclass
class BuiltImage:
    """An environment image ready for episodes."""

    tag: str
    cached: bool
    duration_s: float
    log: list[str] = field(default_factory=list)


def image_tag(package: TaskPackage) -> str:
    """The tag of the package's image: its name and the hash of its build context."""
    return f"{IMAGE_REPOSITORY}:{package.name}-{tree_digest(package.environment_dir)[:16]}"


def ensure_image(client: docker.DockerClient, package: TaskPackage, sandbox_id: str,
                 tag: str | None = None) -> BuiltImage:
    """Reuse the image if this exact context was built before, otherwise build it within the build timeout."""
    started = time.perf_counter()
    tag = tag or image_tag(package)
    try:
        client.images.get(tag)
        return BuiltImage(tag, cached=True, duration_s=time.perf_counter() - started)
    except ImageNotFound:
        pass
    log = _build(package, tag, sandbox_id)
    return BuiltImage(tag, cached=False, duration_s=time.perf_counter() - started, log=log)


def _build(package: TaskPackage, tag: str, sandbox_id: str) -> list[str]:
    """Stream a build on a dedicated connection, isolated as the machine's policy says (sandbox.build_isolation);
    closing the connection on timeout makes the engine cancel the build."""
    api = docker.APIClient(base_url=_base_url(), timeout=API_TIMEOUT_S)
    try:
        policy = BuildPolicy.from_env(os.environ)
        with isolated(api, policy, sandbox_id, package.name) as isolation:
            lines = _stream_build(api, package, tag, sandbox_id, isolation)
    except IsolationError as exc:
        api.close()
        raise BuildFailed(f"the build could not be isolated: {exc}", None, "") from None
    return lines


def _stream_build(api: docker.APIClient, package: TaskPackage, tag: str, sandbox_id: str,
                  isolation: Isolation) -> list[str]:
    lines: list[str] = []
    outcome: dict[str, object] = {}

    def consume() -> None:
        try:
            stream = api.build(path=str(package.environment_dir), tag=tag, rm=True, forcerm=True, decode=True,
                               labels=labels("env-image", sandbox_id, package.name), pull=False,
                               network_mode=isolation.network_mode, buildargs=isolation.buildargs or None,
                               container_limits=isolation.container_limits or None)
            for chunk in stream:
                if "stream" in chunk:
                    lines.extend(line for line in plain(chunk["stream"]).split("\n") if line.strip())
                if "error" in chunk:
                    outcome["error"] = plain(chunk["error"]).strip()
        except APIError as exc:  # the engine refused the build outright (a Dockerfile it cannot parse)
            outcome.setdefault("error", plain(str(exc.explanation or exc)))
        except (OSError, docker.errors.DockerException) as exc:
            outcome.setdefault("error", plain(str(exc)))

    worker = threading.Thread(target=consume, name=f"build-{package.name}", daemon=True)
    worker.start()
    worker.join(package.limits.build_timeout_s)
    timed_out = worker.is_alive()
    if timed_out:
        api.close()
        worker.join(10)
    api.close()
    found = next((m for line in reversed(lines) if (m := _STEP.match(line))), None)
    number, step = (int(found.group(1)), found.group(2)) if found else (None, None)
    tail = "\n".join(lines[-30:])
    error = str(outcome.get("error", ""))
    line, in_heredoc = failing_line(_dockerfile_text(package), number, error)
    where = f"{DOCKERFILE}:{line}" if line else DOCKERFILE
    if timed_out:
        raise BuildFailed(f"the build did not finish within limits.build_timeout_s ({package.limits.build_timeout_s}"
                          f" s); it was at {where}: {step or 'the start'}", step, tail, timed_out=True, line=line)
    if isolation.stopped:
        raise BuildFailed(f"the build was stopped at {where}: {isolation.stopped[0]} (the build's limit)", step, tail,
                          line=line)
    if "error" in outcome:
        at = f"{where} `{step}`" if step else where
        raise BuildFailed(f"the build failed at {at}: {error}{_HEREDOC_HINT if in_heredoc else ''}", step, tail,
                          line=line)
    return lines


def _dockerfile_text(package: TaskPackage) -> str:
    try:
        return (package.environment_dir / "Dockerfile").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _base_url() -> str:
    return os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
