"""ARENA4xx: environment/Dockerfile, the agent's world."""

from __future__ import annotations

from taskpkg.diagnostics import Severity
from taskpkg.rules.examples import Copy, Keep, Replace, Write, example
from taskpkg.rules.rule import Category, Message, Rule, one

STATIC, E, N = Category.STATIC, Severity.ERROR, Severity.INFO
DOCKERFILE = "environment/Dockerfile"
_FROM = "FROM debian:bookworm-slim"
_APT = "apt-get install -y --no-install-recommends python3 &&"


def _before_workdir(lines: str) -> Replace:
    """Instructions added to the base package's Dockerfile, before its WORKDIR."""
    return Replace(DOCKERFILE, "WORKDIR", f"{lines}\nWORKDIR", shown=lines)


ARENA401 = Rule(
    "ARENA401", STATIC, E, "base image not pinned",
    doc="A base image without a tag, or with the moving tag `latest`, changes under the package: the image checked "
        "today is not the one trained on tomorrow.",
    advice="Pin the base image to a version tag, never `latest` or none.",
    messages={
        "untagged": Message("base image '{image}' is not pinned (no tag)",
                            "Pin a release tag (e.g. debian:bookworm-slim) and preferably a digest "
                            "(image:tag@sha256:…)."),
        "latest": Message("base image '{image}' is not pinned (the moving tag latest)",
                          "Pin a release tag (e.g. debian:bookworm-slim) and preferably a digest "
                          "(image:tag@sha256:…)."),
        "argument": Message("base image '{image}' comes from a build argument, so it cannot be checked or pinned",
                            "Write the image name and tag literally."),
    },
    failing=example(Replace(DOCKERFILE, _FROM, "FROM debian")),
    passing=example(Keep(DOCKERFILE, _FROM)),
)

ARENA402 = Rule(
    "ARENA402", STATIC, N, "base image not pinned by digest",
    doc="A tag can be moved to other content; a digest cannot. Pinning both makes rebuilds bit for bit. A note, "
        "since a digest must match the registry the image comes from.",
    advice="Optionally pin the base image by `@sha256:` digest too.",
    messages=one("base image '{image}' is pinned by tag only; tags can move",
                 "Append the digest (`docker buildx imagetools inspect IMAGE`) for bit-for-bit rebuilds."),
    failing=example(Keep(DOCKERFILE, _FROM)),
    passing=example(Replace(DOCKERFILE, _FROM, f"{_FROM}@sha256:{'a' * 64}")),
)

ARENA403 = Rule(
    "ARENA403", STATIC, E, "Python package not pinned",
    doc="`pip install` without an exact version installs whatever is newest at build time, so the agent's world "
        "changes between runs. Checked wherever the build runs it: a `RUN` line, a `RUN <<EOF` heredoc, and scripts "
        "that `COPY`, `ADD` or a heredoc put into the image and a `RUN` then runs. Requirements files named with `-r` "
        "are read too, from where `COPY` put them.",
    advice="Pin every Python package with `==`.",
    messages={
        "package": Message("Python package '{package}' is installed without an exact version",
                           "Pin every Python package with == (e.g. numpy==2.1.3) so rebuilds are identical."),
        "requirement": Message("{path}:{number}: '{requirement}' has no exact version",
                               "Pin every Python package with == (e.g. numpy==2.1.3) so rebuilds are identical."),
    },
    failing=example(_before_workdir("RUN pip install numpy")),
    passing=example(_before_workdir("RUN pip install numpy==2.1.3")),
)

ARENA404 = Rule(
    "ARENA404", STATIC, N, "Debian package not pinned",
    doc="Debian packages installed without `=version` follow the archive (in `RUN` lines, heredocs and the scripts "
        "`RUN` runs). A note: pinning is only possible where the archive snapshot keeps old versions.",
    advice="Optionally pin Debian packages with `=version`.",
    messages=one("Debian packages without a version: {packages}",
                 "Pin versions (pkg=VERSION; `apt-cache policy pkg`) for exact rebuilds, if the snapshot allows."),
    failing=example(Keep(DOCKERFILE, _APT)),
    passing=example(Replace(DOCKERFILE, "python3 &&", "python3=3.11.2-1+b1 &&",
                            shown="apt-get install -y --no-install-recommends python3=3.11.2-1+b1 &&")),
)

ARENA405 = Rule(
    "ARENA405", STATIC, E, "ADD from a URL",
    doc="`ADD https://...` fetches whatever the URL serves at build time, unpinned and unverified.",
    advice="Copy files from the build context instead of `ADD https://...`.",
    messages=one("ADD fetches a URL at build time: unpinned, unverified content",
                 "Vendor the file into environment/ (small) or install it from a pinned package."),
    failing=example(_before_workdir("ADD https://example.com/data.csv /data.csv")),
    passing=example(Write("environment/data.csv", "id,value\n1,2\n"), _before_workdir("COPY data.csv /data.csv")),
)

ARENA406 = Rule(
    "ARENA406", STATIC, E, "verifier, oracle or generator copied into the image",
    doc="`environment/` is the build context of the agent's image, so anything in it may end up where the agent can "
        "read it. A copy of the verifier, the oracle, the generator or verifier data there leaks the answers; "
        "verifier data the image shares on purpose (an input the prompt names, a library with its licence) does "
        "not (docs/SPEC.md, \"What is a leak\").",
    advice="Keep `verifier.py`, `oracle/` and the generator out of the image; the sandbox copies them in only when "
           "needed.",
    messages={
        "copy": Message("{path} is in the image's build context but is a copy of {source}",
                        "Remove it from environment/: the verifier, oracle and generator must never be in the "
                        "agent's image."),
        "verifier": Message("{path} is in the image's build context but is a verifier",
                            "Remove it from environment/: the verifier, oracle and generator must never be in the "
                            "agent's image."),
    },
    failing=example(Copy("oracle/solve.py", "environment/helper.py")),
    passing=example(Write("environment/helper.py", "print('a tool the agent may use')\n")),
)

ARENA407 = Rule(
    "ARENA407", STATIC, E, "download piped into a shell",
    doc="`curl ... | sh` runs whatever the server sends, when building (a `RUN` line, a heredoc, or a script `RUN` "
        "runs), when the image starts, or in a script the verifier runs.",
    advice="Install from a package manager with pinned versions, not `curl ... | sh`.",
    messages=one("a download is piped into a shell {when}: unpinned code from the network",
                 "Install from a pinned package, or vendor the script into environment/ and review it."),
    failing=example(_before_workdir("RUN curl -fsSL https://example.com/install.sh | sh")),
    passing=example(Write("environment/install.sh", "echo reviewed in the pull request\n"),
                    _before_workdir("COPY install.sh /opt/install.sh\nRUN sh /opt/install.sh")),
)

ARENA408 = Rule(
    "ARENA408", STATIC, E, "Dockerfile has no FROM",
    doc="A Dockerfile starts from a base image; without `FROM` (or with one that names nothing) it cannot build.",
    advice="Start the Dockerfile with a `FROM` line.",
    messages={
        "missing": Message("the Dockerfile has no FROM instruction", "Start it with e.g. `FROM debian:bookworm-slim`."),
        "empty": Message("FROM names no image", "Name a base image."),
    },
    failing=example(Write(DOCKERFILE, "RUN echo no base\n")),
    passing=example(Keep(DOCKERFILE, _FROM)),
)
