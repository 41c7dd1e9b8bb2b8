"""Mapping foreign metadata onto the native frontmatter: domain, name, title, tags, difficulty and version."""

from __future__ import annotations

import re
from collections.abc import Callable

from interop.errors import InteropError
from interop.model import Sourced, SourceTask
from taskpkg.domains import DOMAINS
from taskpkg.scaffold import NAME_PATTERN

# Category words (normalised: lowercase, words joined by '-') and the domain each names. Documented in
# interop/README.md; a category may also be several words, each of which must point at the same domain.
DOMAIN_WORDS: dict[str, tuple[str, ...]] = {
    "finance": ("finance", "financial", "accounting", "bookkeeping", "banking", "bank", "economics", "econ", "tax",
                "taxes", "trading", "investment", "investing", "insurance", "fintech", "audit", "auditing", "payroll"),
    "healthcare": ("healthcare", "health", "medical", "medicine", "clinical", "pharmacy", "pharma", "nursing",
                   "patient", "hospital", "biomedical"),
    "law-government": ("law", "legal", "government", "gov", "govtech", "policy", "compliance", "regulation",
                       "regulatory", "public-sector", "contracts", "litigation"),
    "office-documents": ("office", "documents", "document", "docs", "spreadsheet", "spreadsheets", "excel", "word",
                         "pdf", "presentation", "presentations", "slides", "powerpoint", "docx", "xlsx", "pptx",
                         "productivity", "personal-assistant", "email", "calendar"),
    "customer-operations": ("customer", "customers", "customer-support", "customer-service", "support", "helpdesk",
                            "crm", "sales", "ecommerce", "e-commerce", "retail", "customer-operations"),
    "science-engineering": ("science", "scientific", "engineering", "physics", "chemistry", "biology",
                            "bioinformatics", "data-science", "data-analysis", "research", "scientific-computing",
                            "materials", "astronomy", "geoscience", "climate", "statistics"),
    "cybersecurity-it": ("security", "cybersecurity", "cyber", "forensics", "it", "sysadmin", "system-administration",
                         "networking", "devops", "infrastructure", "incident-response", "ctf", "malware",
                         "vulnerability", "penetration-testing", "pentest", "it-operations"),
    "math-planning": ("math", "mathematics", "maths", "planning", "scheduling", "optimization", "optimisation",
                      "logistics", "operations-research", "puzzle", "puzzles", "combinatorics", "logic"),
}
CODING_WORDS = frozenset({"software-engineering", "programming", "coding", "code", "debugging", "code-change", "swe",
                          "web-development", "frontend", "backend", "software"})
_WORD_TO_DOMAIN = {word: domain for domain, words in DOMAIN_WORDS.items() for word in words}
_NON_SLUG = re.compile(r"[^a-z0-9]+")
_SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
DIFFICULTY_WORDS = {"easy": "easy", "beginner": "easy", "trivial": "easy", "medium": "medium",
                    "intermediate": "medium", "moderate": "medium", "hard": "hard", "advanced": "hard",
                    "expert": "hard", "difficult": "hard"}
MAX_TAGS, MAX_TAG_LENGTH = 12, 32
MIN_TITLE, MAX_TITLE = 8, 120


def slug(text: str) -> str:
    """Lowercase words joined by single hyphens."""
    return _NON_SLUG.sub("-", text.lower()).strip("-")


def domain_of(value: str) -> str | None:
    """The domain a category names, or None."""
    word = slug(value)
    if word in CODING_WORDS:
        return None
    if word in _WORD_TO_DOMAIN:
        return _WORD_TO_DOMAIN[word]
    found = {_WORD_TO_DOMAIN[part] for part in word.split("-") if part in _WORD_TO_DOMAIN}
    return found.pop() if len(found) == 1 else None


def choose_domain(source: SourceTask, requested: str | None) -> str:
    """--domain when given, else the domain the source's category (or subcategory) names; else a clear error."""
    mapped = next(((c, d) for c in source.categories if (d := domain_of(str(c.value)))), None)
    if requested is not None:
        if requested not in DOMAINS:
            raise InteropError("--domain", f"'{requested}' is not one of the arena's domains",
                               f"Use one of: {', '.join(DOMAINS)}.")
        if mapped and mapped[1] != requested:
            source.notes.append(f"{mapped[0].where}: category '{mapped[0].value}' suggests domain {mapped[1]}; "
                                f"--domain {requested} was used")
        return requested
    if mapped:
        source.notes.append(f"{mapped[0].where}: domain {mapped[1]} from category '{mapped[0].value}'")
        return mapped[1]
    choices = f"Pass --domain with one of: {', '.join(DOMAINS)}"
    if not source.categories:
        raise InteropError(source.config_file, "the task declares no category, so its domain is unknown",
                           choices + ".")
    first = source.categories[0]
    file, _, line = first.where.partition(":")
    coding = any(slug(str(c.value)) in CODING_WORDS for c in source.categories)
    why = " (coding is deliberately not an arena domain)" if coding else ""
    raise InteropError(file, f"category '{first.value}' does not map to one of the arena's eight domains{why}",
                       choices + ".", int(line) if line.isdigit() else None)


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
        source.notes.append(f"{where}: package name '{name}' made from '{raw}'")
    return name


def choose_title(source: SourceTask, name: str) -> str:
    """A one-line title of 8-120 characters: the source's, else the prompt's first heading or sentence."""
    given = _one_line(str(source.title.value)) if source.title else ""
    title = given or _title_from_prompt(source.prompt or (source.turns[0].text if source.turns else ""))
    if len(title) < MIN_TITLE:
        title = f"{title or name.replace('-', ' ').capitalize()} (imported task)"
    if not given:
        source.lost(source.prompt_where, f"no title in the source; '{title}' was derived from the prompt: edit "
                    "`title:` in task.md")
    elif title != given and source.title is not None:
        source.notes.append(f"{source.title.where}: title shortened or extended to '{title}'")
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
            source.notes.append(f"{value.where}: difficulty '{value.value}' read as {mapped}")
        return mapped, None
    where = value.where if value else source.config_file
    found = f"'{value.value}' is not easy, medium or hard" if value else "no difficulty in the source"
    source.lost(where, f"{found}; medium assumed: set `difficulty:` for a strong 8B model before training")
    return "medium", "not in the source: set easy, medium or hard"


def choose_version(source: SourceTask) -> str:
    """The package version as MAJOR.MINOR.PATCH (1.0.0 when the source has none)."""
    value = source.version
    text = str(value.value).strip().lstrip("v") if value else ""
    if _SEMVER.match(text):
        return text
    if value is not None and re.fullmatch(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)", text):
        source.notes.append(f"{value.where}: version '{value.value}' written as {text}.0")
        return f"{text}.0"
    if value is not None:
        source.lost(value.where, f"version '{value.value}' is not MAJOR.MINOR.PATCH; 1.0.0 used")
    return "1.0.0"


def sourced_categories(metadata: dict, where: Callable[[str], str]) -> list[Sourced]:
    """category then subcategory of a metadata table, as Sourced values."""
    return [Sourced(metadata[key], where(key)) for key in ("category", "subcategory")
            if isinstance(metadata.get(key), str) and metadata[key].strip()]
