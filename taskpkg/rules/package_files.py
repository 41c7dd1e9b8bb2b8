"""ARENA0xx: the package's files as a whole."""

from __future__ import annotations

from taskpkg.diagnostics import Severity
from taskpkg.rules.examples import Fifo, Grow, Keep, Link, Remove, Replace, Write, example
from taskpkg.rules.model import Category, Message, Rule, one

STATIC, E, W = Category.STATIC, Severity.ERROR, Severity.WARNING

ARENA001 = Rule(
    "ARENA001", STATIC, E, "package folder missing or not a folder",
    doc="A package is a folder, `environments/<name>/`. The path given to `arena check` does not exist or is a "
        "file, so nothing else can be checked.",
    advice="Point `arena check` at `environments/<name>/`, a folder.",
    messages=one("{path} is not a folder", "Point at a package folder such as environments/<name>."),
    failing=example(Remove(".")),
    passing=example(Keep("task.md", "schema_version: 1")),
)

ARENA002 = Rule(
    "ARENA002", STATIC, E, "required file or folder missing",
    doc="Every package has `task.md`, `environment/Dockerfile`, `verifier.py` and `oracle/`; the arena cannot build, "
        "verify or prove solvable a package without them.",
    advice="Add the missing part: `task.md`, `environment/Dockerfile`, `verifier.py`, `oracle/`. `arena new` makes "
           "all of them.",
    messages=one("{path} ({kind}) is missing",
                 "Add {path}: `arena new NAME --domain D` makes every part a package needs, and docs/SPEC.md "
                 "describes them."),
    failing=example(Remove("verifier.py")),
    passing=example(Keep("verifier.py", "def score() -> dict:")),
)

ARENA003 = Rule(
    "ARENA003", STATIC, E, "symbolic link escapes the package",
    doc="A symbolic link that leads outside the package would let a pull request read (or ship) files of the "
        "machine that checks it. Links are never followed out of the package.",
    advice="Replace the link with the file itself; links may only point inside the package.",
    messages=one("{path} is a symbolic link to {target}, outside the package",
                 "Replace the link with the file itself, or remove it."),
    failing=example(Link("environment/passwd", "/etc/passwd")),
    passing=example(Write("environment/passwd", "agent:x:1000:1000::/home/agent:/bin/sh\n")),
)

ARENA004 = Rule(
    "ARENA004", STATIC, E, "package or file too large",
    doc="A package is reviewed by people and copied into every run. Large data belongs in the instance generator, "
        "which makes it per instance, not in the pull request.",
    advice="Stay under 500 files, 20 MiB in all and 5 MiB a file: generate data in the generator instead of "
           "shipping it.",
    messages={
        "package": Message(
            "the package has {files} files and {size} bytes; the limits are {max_files} files and {max_size} bytes",
            "Generate data in the instance generator instead of committing it."),
        "file": Message("{path} is {size} bytes; one file may be at most {max_size}",
                        "Generate large data at instance setup instead of committing it."),
    },
    failing=example(Grow("environment/big.txt", 6 * 2**20)),
    passing=example(Grow("environment/big.txt", 4 * 2**20)),
)

ARENA005 = Rule(
    "ARENA005", STATIC, W, "binary file in the package",
    doc="Binary files cannot be reviewed in a pull request, so nobody can see whether they hold answers. Text "
        "formats, or data made by the generator, can be.",
    advice="Generate binary data at instance setup, or say why it must be shipped in the PR description.",
    messages=one("{path} is a binary file",
                 "Prefer text formats or generating the file at instance setup; binary blobs cannot be reviewed."),
    failing=example(Write("environment/blob.bin", b"\x00\x01\x02binary")),
    passing=example(Write("environment/blob.csv", "id,value\n1,2\n")),
)

ARENA006 = Rule(
    "ARENA006", STATIC, E, "credential or private key in the package",
    doc="A pull request is public the moment it is pushed. Private keys and API tokens (AWS, GitHub, OpenAI, "
        "Anthropic, Hugging Face, Slack, Google) in any file are reported with their line.",
    advice="Remove the key or token, rotate it if it was real, and rewrite the branch so no commit holds it.",
    messages=one("{path} contains what looks like {what}",
                 "Remove it and revoke it now: it is public once pushed. Packages never need credentials."),
    failing=example(Write("environment/notes.txt", "key = AKIAABCDEFGHIJKLMNOP\n")),
    passing=example(Write("environment/notes.txt", "key = (read from the instance's files)\n")),
)

ARENA007 = Rule(
    "ARENA007", STATIC, E, "special file in the package",
    doc="A package is plain files and folders. Named pipes, sockets and device files cannot be committed "
        "meaningfully and could hang or confuse the tools that read the package.",
    advice="Remove FIFOs, sockets and device files; a package is plain files and folders.",
    messages=one("{path} is not a regular file (a device, pipe or socket)", "Remove it."),
    failing=example(Fifo("environment/pipe")),
    passing=example(Write("environment/pipe", "plain text\n")),
)

ARENA008 = Rule(
    "ARENA008", STATIC, E, "Python the repository's lint rejects",
    doc="The repository's CI lints every Python file of every package outside `environment/` with ruff and the "
        "settings in pyproject.toml's `[tool.ruff]`; a file it rejects fails the pull request's checks. The arena "
        "runs the same ruff with the same settings, so a package that passes here passes there.",
    advice="Fix what ruff reports, at the line shown: `ruff check --fix FILE` fixes many of them.",
    messages={
        "": Message("ruff {code}: {problem}",
                    "Fix it by hand (`ruff rule {code}` explains the rule); CI runs the same lint."),
        "fixable": Message("ruff {code}: {problem}",
                           "Run `ruff check --fix {path}` from the repository (same settings), or fix it by hand."),
        "syntax": Message("not valid Python: {problem}", "Fix the syntax at this place."),
    },
    failing=example(Replace("instance/generate.py", "import json\n", "import json\nimport sys\n",
                            shown="import json\nimport sys  # never used\n")),
    passing=example(Keep("instance/generate.py", "import json\nimport os\n")),
)

ARENA009 = Rule(
    "ARENA009", STATIC, E, "git attributes apply to the package",
    doc="What is trained must be byte for byte what was checked. Git attributes change files on their way out of "
        "git: `export-subst` writes commit data into a file and `export-ignore` drops it from an archive, `eol` and "
        "`filter` rewrite it on checkout. A package with a `.gitattributes`, or one the repository's own attributes "
        "apply to, could be one thing in the checked checkout and another on the GPU machine.",
    advice="Delete the package's `.gitattributes`; a package needs no git attributes.",
    messages={
        "file": Message("{path}: a package may not carry git attributes",
                        "Delete it: attributes (export-subst, export-ignore, eol, filter) change the package's "
                        "files between the checks and training."),
        "repository": Message("{path} gets the git attribute {attribute}: {value} from the repository",
                              "Remove that attribute from the repository's .gitattributes (or .git/info/"
                              "attributes) for environments/: packages are taken out of git byte for byte."),
    },
    failing=example(Write(".gitattributes", "verifier.py export-subst\n")),
    passing=example(Write("environment/notes.txt", "verifier.py export-subst\n")),
)
