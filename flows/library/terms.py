"""What the library reads from a record (terms, languages, texts, list item); vocabulary lookups."""

from __future__ import annotations

from flows.library.models import TOPIC_KINDS, Brief, SourceLink, Vocab, VocabTerm
from schema.errors import InputError
from schema.record import Record
from schema.vocab import check_term, vocabulary

# Localized fields searched as the body, in the order a reader meets them on the record page.
_BODY_FIELDS = ("summary", "trigger", "detection", "symptoms_text", "lessons")
_ITEM_FIELDS = ("remediation", "action_items")


def check_terms(kind: str, terms: tuple[str, ...]) -> None:
    """Raise InputError naming the first term its vocabulary does not know (with close alternatives)."""
    vocab_kind = TOPIC_KINDS[kind][0]
    for term in terms:
        try:
            check_term(vocab_kind, term)
        except ValueError as exc:
            raise InputError(f"{kind}: {exc}") from None


def topic_kind(kind: str) -> str:
    """The API's name of a topic kind; the vocabulary's and the record field's names are accepted too."""
    if kind in TOPIC_KINDS:
        return kind
    for name, (vocab_kind, field) in TOPIC_KINDS.items():
        if kind in (vocab_kind, field):
            return name
    raise InputError(f"unknown topic kind {kind!r}: use one of {', '.join(TOPIC_KINDS)}")


def labels(kind: str, term: str) -> dict[str, str]:
    """The English and Korean labels of a vocabulary term ({} for a term the vocabulary lacks)."""
    found = vocabulary(TOPIC_KINDS[kind][0]).terms.get(term)
    return dict(found.labels) if found else {}


def vocab(kind: str | None = None) -> Vocab:
    """The vocabularies (or one), each term with its labels, definition and aliases."""
    kinds = [topic_kind(kind)] if kind else list(TOPIC_KINDS)
    return Vocab(
        kinds={
            name: [
                VocabTerm(term=key, labels=dict(t.labels), definition=t.definition, aliases=dict(t.aliases))
                for key, t in sorted(vocabulary(TOPIC_KINDS[name][0]).terms.items())
            ]
            for name in kinds
        }
    )


def record_terms(record: Record) -> list[tuple[str, str]]:
    """(kind, term) pairs a record can be filtered and faceted by."""
    pairs: list[tuple[str, str]] = []
    for kind, (_, field) in TOPIC_KINDS.items():
        value = getattr(record, field)
        for term in [value] if isinstance(value, str) else value:
            pairs.append((kind, term))
    pairs.append(("org", record.org_slug or (record.org or "").casefold()))
    pairs += [("lang", lang) for lang in languages(record)]
    if record.date:
        pairs.append(("year", record.date[:4]))
    return list(dict.fromkeys(pairs))


def languages(record: Record) -> list[str]:
    """Every language the record has text in, title's first."""
    found: dict[str, None] = dict.fromkeys(record.title)
    for field in _BODY_FIELDS:
        found.update(dict.fromkeys(getattr(record, field)))
    for field in _ITEM_FIELDS:
        for item in getattr(record, field):
            found.update(dict.fromkeys(item.text))
    return list(found)


def texts(record: Record) -> list[tuple[str, str, str]]:
    """(lang, title, body) per language: the rows the full-text index holds for a record."""
    rows = []
    for lang in languages(record):
        body = [getattr(record, field).get(lang, "") for field in _BODY_FIELDS]
        for field in _ITEM_FIELDS:
            body += [item.text.get(lang, "") for item in getattr(record, field)]
        rows.append((lang, record.title.get(lang, ""), "\n".join(part for part in body if part)))
    return rows


def brief(record: Record) -> Brief:
    return Brief(
        id=record.id,
        org=record.org or "",
        org_slug=record.org_slug,
        date=record.date,
        title=dict(record.title),
        summary=dict(record.summary),
        root_cause=record.root_cause,
        severity=record.severity,
        components=list(record.components),
        contributing=list(record.contributing),
        symptoms=list(record.symptoms),
        domain=list(record.domain),
        languages=languages(record),
        sources=[SourceLink(url=s.url, kind=s.kind, archived=s.archived) for s in record.sources],
        url=record.url,
    )
