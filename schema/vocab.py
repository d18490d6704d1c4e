"""Controlled vocabularies (root causes, symptoms, components, ...) read from schema/vocab/*.json."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

VOCAB_DIR = Path(__file__).parent / "vocab"

Kind = Literal["root_causes", "contributing", "symptoms", "components", "domains", "severity", "source_kinds"]
KINDS: tuple[Kind, ...] = (
    "root_causes",
    "contributing",
    "symptoms",
    "components",
    "domains",
    "severity",
    "source_kinds",
)


class Term(BaseModel):
    """One vocabulary term: a kebab-case key, a definition, labels and surface forms per language."""

    model_config = ConfigDict(extra="allow", frozen=True)

    definition: str
    labels: dict[str, str]
    aliases: dict[str, list[str]] = Field(default_factory=dict)


class Vocabulary(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    kind: str
    description: str = ""
    terms: dict[str, Term]

    def __contains__(self, term: object) -> bool:
        return term in self.terms

    def extra(self, key: str) -> Any:
        return (self.model_extra or {}).get(key)


@cache
def vocabulary(kind: Kind) -> Vocabulary:
    """The vocabulary of one kind, read once from its data file."""
    path = VOCAB_DIR / f"{kind}.json"
    return Vocabulary.model_validate(json.loads(path.read_text(encoding="utf-8")))


def nearest_terms(kind: Kind, term: str, n: int = 5) -> list[str]:
    """The valid terms closest to `term`: by spelling (difflib), then those sharing a word with
    it ("certificate-expired" -> "expired-certificate")."""
    import difflib

    terms = sorted(vocabulary(kind).terms)
    close = difflib.get_close_matches(term, terms, n=n, cutoff=0.6)
    words = set(term.lower().replace("_", "-").split("-"))
    close += [t for t in terms if words & set(t.split("-")) and t not in close]
    return close[:n]


def check_term(kind: Kind, term: str) -> str:
    """Return `term` if `kind` knows it; else raise ValueError naming close alternatives."""
    vocab = vocabulary(kind)
    if term in vocab:
        return term
    close = nearest_terms(kind, term)
    if close:
        hint = f" (did you mean {', '.join(close)}?)"
    else:
        terms = sorted(vocab.terms)
        more = f", ... ({len(terms)} in all: `incidents schema record` lists them)" if len(terms) > 12 else ""
        hint = f" (valid terms: {', '.join(terms[:12])}{more})"
    raise ValueError(f"{term!r} is not a term of the {kind} vocabulary{hint}")


LABEL_LANGUAGES = ("en", "ko", "ja")


def label(kind: Kind, term: str, lang: str = "en") -> str:
    """The label of a term in `lang` (en, ko or ja: every term has all three), else its English
    label; a term the vocabulary lacks is shown as it is."""
    found = vocabulary(kind).terms.get(term)
    if found is None:
        return term
    return found.labels.get(lang) or found.labels.get("en") or term
