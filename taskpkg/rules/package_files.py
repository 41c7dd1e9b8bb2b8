"""ARENA0xx: the package's files as a whole."""

from __future__ import annotations

from taskpkg.diagnostics import Severity
from taskpkg.rules.examples import Append, Fifo, Grow, Keep, Link, Remove, Replace, Write, example
from taskpkg.rules.rule import Category, Message, Rule, one

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
    "ARENA008", STATIC, E, "Python that is wrong: a syntax error or a bug the lint finds",
    doc="The repository lints every Python file of a package outside `environment/` with ruff and the settings in "
        "pyproject.toml's `[tool.ruff]`. A finding that means the code is wrong or hides a bug is an error: a syntax "
        "error, or a pyflakes rule other than unused and star imports and f-strings without fields (an undefined "
        "name, a variable assigned and never used, a function defined twice so the first never runs, an assert on "
        "a tuple, a broken format string). The repository's own `ruff check .` reports the same in `environments/`.",
    advice="Fix the code at the line shown; `ruff rule CODE` explains the rule.",
    messages={
        "": Message("ruff {code}: {problem}",
                    "Fix the code here (`ruff rule {code}` explains the rule); CI runs the same lint."),
        "syntax": Message("not valid Python: {problem}", "Fix the syntax at this place."),
    },
    failing=example(Append("instance/generate.py", "\n\ndef total() -> int:\n    return sum(undefined_numbers)\n")),
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

ARENA010 = Rule(
    "ARENA010", STATIC, W, "Python the repository's house style would change",
    doc="House style (import order, pyupgrade, simplifications, line length, mutable class defaults, unused "
        "imports: every other rule of pyproject.toml's `[tool.ruff]`) is a warning on a package, never a reason to "
        "reject it: contributed and imported code keeps its authors' style. `arena fix` applies ruff's safe fixes "
        "and formatter with the repository's settings; what is left is for its author to judge.",
    advice="Run `arena fix environments/<name>`; fix what it leaves by hand, or leave it.",
    messages={
        "": Message("ruff {code}: {problem}",
                    "No automatic fix: change it by hand if you agree (`ruff rule {code}` explains the rule)."),
        "fixable": Message("ruff {code}: {problem}",
                           "Run `arena fix {package}` (ruff's safe fixes and formatter, the repository's settings)."),
    },
    failing=example(Replace("instance/generate.py", "import json\n", "import json\nimport sys\n",
                            shown="import json\nimport sys  # never used\n")),
    passing=example(Keep("instance/generate.py", "import json\nimport os\n")),
)
