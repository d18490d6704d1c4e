"""Queue filters and the draft page's view of fields, evidence and related records (no I/O)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import ValidationError

from flows.related import Related, rank_related
from flows.web.forms import (
    GROUPS,
    FieldSpec,
    languages_of,
    local_language,
    show_duration,
    term_label,
    vocab_options,
)
from flows.web.services import LOW_CONFIDENCE, Summary
from schema.document import Document
from schema.draft import Draft
from schema.record import Record, RecordBody

SORTS = ("age", "-age", "score", "-score", "confidence")


@dataclass
class QueueFilter:
    status: str = "pending"
    org: str = ""
    lang: str = ""
    host: str = ""
    low: bool = False
    q: str = ""
    sort: str = "age"
    lane: str = ""  # "doubtful" or "postmortem" (flows/triage.py); "" for both

    def apply(self, rows: list[Summary]) -> list[Summary]:
        q = self.q.casefold().strip()
        out = [
            r
            for r in rows
            if (not self.status or self.status == "all" or r.status == self.status)
            and (not self.org or (r.org or "").casefold() == self.org.casefold())
            and (not self.lang or r.language == self.lang)
            and (not self.host or r.host == self.host)
            and (not self.low or r.low)
            and (not self.lane or r.lane == self.lane)
            and (not q or q in f"{r.title} {r.org or ''} {r.host} {r.draft_id}".casefold())
        ]
        keys = {
            "age": lambda r: (r.drafted_at, r.draft_id),
            "-age": lambda r: (r.drafted_at, r.draft_id),
            "score": lambda r: (-r.score, r.draft_id),
            "-score": lambda r: (r.score, r.draft_id),
            "confidence": lambda r: (r.lowest if r.lowest is not None else 2.0, r.draft_id),
        }
        out.sort(key=keys.get(self.sort, keys["age"]), reverse=self.sort == "-age")
        return out

    def query(self) -> str:
        from urllib.parse import urlencode

        pairs = {k: v for k, v in vars(self).items() if v not in ("", False)}
        if pairs.get("low"):
            pairs["low"] = "1"
        return urlencode(pairs)


@dataclass
class EvidenceView:
    quote: str
    section: str | None
    start: int | None  # None: the quote is not in the archived text (shown, not clickable)
    end: int | None
    label: str | None = None  # the term or sub-field the quote supports


@dataclass
class FieldView:
    spec: FieldSpec
    value: Any
    evidence: list[EvidenceView] = field(default_factory=list)
    confidence: float | None = None
    method: str | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        value = self.value
        if isinstance(value, dict):
            return not any(v not in (None, "", "unknown") for v in value.values())
        return value in (None, "", "unknown", [], {})

    @property
    def low(self) -> bool:
        return self.confidence is not None and self.confidence < LOW_CONFIDENCE


def locate(doc: Document | None, quote: str, start: int, end: int) -> tuple[int | None, int | None]:
    """Where a quote is in the document's text: its own offsets when they hold, else its first
    occurrence, else nowhere (the archived page and the draft disagree)."""
    if doc is None:
        return None, None
    if doc.text[start:end] == quote:
        return start, end
    at = doc.text.find(quote)
    return (at, at + len(quote)) if at >= 0 else (None, None)


def field_views(
    draft: Draft, values: dict[str, Any], doc: Document | None, problems: list[tuple[str, str]]
) -> list[tuple[str, list[FieldView]]]:
    groups = []
    for title, specs in GROUPS:
        views = []
        for spec in specs:
            evidence = []
            seen: set[tuple[str | None, int, int]] = set()
            # Per-term quotes first ("symptoms.queue-backlog"), labelled; the field's own list
            # ("symptoms") repeats them, so only quotes not shown yet are added from it.
            keys = sorted(
                (
                    k
                    for k in draft.evidence
                    if k.split(".")[0] == spec.name or (spec.name == "org" and k == "org_slug")
                ),
                key=lambda k: ("." not in k, k),
            )
            for key in keys:
                label = key.split(".", 1)[1] if "." in key else None
                if label and spec.vocab:
                    label = term_label(spec.vocab, label, draft.source.language)
                elif label:
                    label = label.replace("_", " ")
                for ev in draft.evidence[key]:
                    if (label, ev.start, ev.end) in seen or (
                        label is None and any(s[1:] == (ev.start, ev.end) for s in seen)
                    ):
                        continue
                    seen.add((label, ev.start, ev.end))
                    start, end = locate(doc, ev.quote, ev.start, ev.end)
                    evidence.append(EvidenceView(ev.quote, ev.section, start, end, label))
            conf = draft.confidence.get(spec.name)
            errors = [
                why
                for f, why in problems
                if f.split(".")[0] == spec.name
                # a whole-record rule ("an approved record needs org, title") shows at each field it names
                or (f == "(record)" and re.search(rf"\b{spec.name}\b", why))
            ]
            views.append(
                FieldView(
                    spec,
                    values.get(spec.name),
                    evidence,
                    conf.value if conf else None,
                    conf.method if conf else None,
                    errors,
                )
            )
        groups.append((title, views))
    return groups


def text_blocks(doc: Document | None) -> list[dict[str, Any]]:
    """The extracted text as blocks (heading levels kept) with their offsets, for the left pane."""
    if doc is None:
        return []
    if not doc.blocks:
        return [{"kind": "paragraph", "level": 0, "start": 0, "end": len(doc.text), "text": doc.text}]
    return [
        {"kind": b.kind, "level": b.level, "start": b.start, "end": b.end, "text": doc.block_text(b)}
        for b in doc.blocks
    ]


def suggestions(draft: Draft, values: dict[str, Any], records: list[Record]) -> list[Related]:
    """Ranked from the record as the reviewer has it now; a field that does not validate yet counts
    as the draft had it."""
    data = {k: v for k, v in values.items() if k in RecordBody.model_fields}
    machine = draft.record.model_dump(mode="json")
    for _ in range(len(data)):
        try:
            subject = RecordBody.model_validate(data)
            break
        except ValidationError as exc:
            for err in exc.errors():
                top = str(err["loc"][0]) if err["loc"] else ""
                data[top] = machine.get(top)
    else:
        subject = draft.record
    return rank_related(subject, records, limit=8)


@cache
def pickers(lang: str | None = None) -> dict[str, list[dict[str, Any]]]:
    return {
        kind: vocab_options(kind, local_language(lang))
        for kind in ("symptoms", "root_causes", "contributing", "components", "domains", "severity")
    }


TEMPLATE_HELPERS = {
    "show_duration": show_duration,
    "term_label": term_label,
    "languages_of": languages_of,
}
