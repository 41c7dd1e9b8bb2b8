"""The domain: proposed from the task's own metadata, naming the field it came from; `--domain` only when nothing maps.

Tried in order: `domain`, `category`, `subcategory`, `field`, `subfield` (wherever the format keeps them), then the
tags and keywords, where the domain most tags point at wins (the first such tag on a tie). A value maps when it is
one of the words below, or when the words it is made of point at one domain only. Coding words never map: coding is
deliberately not an arena domain.
"""

from __future__ import annotations

import re

from interop.source_task import InteropError, Sourced, SourceTask
from taskpkg.domains import DOMAINS

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
                         "productivity", "personal-assistant", "email", "calendar", "media", "publishing",
                         "subtitles", "captions", "editing"),
    "customer-operations": ("customer", "customers", "customer-support", "customer-service", "support", "helpdesk",
                            "crm", "sales", "ecommerce", "e-commerce", "retail", "customer-operations"),
    "science-engineering": ("science", "scientific", "engineering", "physics", "chemistry", "biology",
                            "bioinformatics", "data-science", "data-analysis", "research", "scientific-computing",
                            "materials", "astronomy", "geoscience", "geology", "climate", "statistics", "sciences",
                            "genomics", "epidemiology", "neuroscience", "ecology", "mechanical", "electrical",
                            "industrial", "physical", "manufacturing", "energy"),
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


def propose(source: SourceTask) -> tuple[str, str, Sourced] | None:
    """(domain, the field it came from, its value): the first metadata field that maps, else the tags' majority."""
    for label, hint in source.domain_hints:
        domain = domain_of(str(hint.value))
        if domain:
            return domain, label, hint
    votes: dict[str, list[Sourced]] = {}
    for tag in source.tags:
        domain = domain_of(str(tag.value))
        if domain:
            votes.setdefault(domain, []).append(tag)
    if not votes:
        return None
    domain, tags = max(votes.items(), key=lambda item: len(item[1]))
    return domain, "tag", tags[0]


def choose_domain(source: SourceTask, requested: str | None) -> str:
    """--domain when given, else the domain proposed from the source's metadata; else an error asking for --domain."""
    proposal = propose(source)
    if requested is not None:
        if requested not in DOMAINS:
            raise InteropError("--domain", f"'{requested}' is not one of the arena's domains",
                               f"Use one of: {', '.join(DOMAINS)}.")
        said = f" ({proposal[1]} '{proposal[2].value}' at {proposal[2].where} suggests {proposal[0]})" \
            if proposal and proposal[0] != requested else ""
        source.mapped("--domain", f"domain {requested}{said}")
        return requested
    if proposal:
        domain, label, value = proposal
        source.mapped(value.where, f"domain {domain} from {label} '{value.value}'")
        return domain
    choices = f"Pass --domain with one of: {', '.join(DOMAINS)}"
    looked = [f"{label} '{hint.value}'" for label, hint in source.domain_hints] + \
        [f"tag '{tag.value}'" for tag in source.tags[:6]]
    if not looked:
        raise InteropError(source.config_file, "the task declares no domain, category, field or tags, so its "
                           "domain is unknown", choices + ".")
    first = (source.domain_hints[0][1] if source.domain_hints else source.tags[0]).where
    file, _, line = first.partition(":")
    values = [str(hint.value) for _, hint in source.domain_hints] + [str(tag.value) for tag in source.tags]
    coding = any(slug(v) in CODING_WORDS for v in values)
    why = " (coding is deliberately not an arena domain)" if coding else ""
    raise InteropError(file, f"none of {', '.join(looked)} maps to one of the arena's eight domains{why}",
                       choices + ".", int(line) if line.isdigit() else None)
