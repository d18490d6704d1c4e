"""Check a model's answers against the source and merge what holds into the rule-based draft.

The order of the checks, for each proposed field: a field the model may set; text in the languages
asked for; every quote found in Document.text (whitespace-normalised) and located; a vocabulary
term that exists; a duration that follows from the quoted times. A proposal that fails any check
is dropped whole (the rule-based value stands) and a refusal says why, without the proposal's
text: invented quotes or terms never reach a draft."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from extractors.model.answer import (
    DURATION_FIELDS,
    ITEM_FIELDS,
    SINGLE_TERMS,
    TERM_FIELDS,
    TEXT_FIELDS,
    Answer,
    DurationAnswer,
    TermAnswer,
    TextAnswer,
)
from extractors.model.durations import derivable, parse_iso
from extractors.model.prompt import PROMPT_VERSION
from extractors.model.quotes import Folded, locate
from schema.document import Document
from schema.draft import Confidence, Draft, Evidence, ModelField, ModelNotes, ModelRefusal
from schema.record import RecordBody
from schema.types import DURATION_PATTERN, LANG_PATTERN
from schema.vocab import vocabulary

# The confidence a checked model value gets: above the cue rules (0.4) and below metadata (0.9);
# a machine translation is a reviewer's job to confirm, hence lower.
MODEL_CONFIDENCE = 0.7
TRANSLATION_CONFIDENCE = 0.5
# A field's text longer than this is not a record's summary (the seed's is ~1,500 characters).
MAX_TEXT_CHARS = 6000


@dataclass
class _State:
    doc: Document
    folded: Folded
    source_lang: str | None
    languages: tuple[str, ...]
    record: dict[str, Any]
    evidence: dict[str, list[Evidence]]
    confidence: dict[str, Confidence]
    fields: dict[str, ModelField] = field(default_factory=dict)
    refusals: list[ModelRefusal] = field(default_factory=list)
    done: set[str] = field(default_factory=set)  # single-valued fields already set by the model

    def refuse(self, name: str, reason: str) -> None:
        refusal = ModelRefusal(field=_label(name), reason=reason)
        if refusal not in self.refusals:
            self.refusals.append(refusal)

    def quotes(self, name: str, quotes: list[str]) -> list[Evidence] | None:
        """The located quotes, or None (and a refusal) unless every one of them is in the source."""
        if not quotes:
            self.refuse(name, "no quote from the source given")
            return None
        located: list[Evidence] = []
        for i, quote in enumerate(quotes, 1):
            found = locate(self.doc, self.folded, quote)
            if found is None:
                self.refuse(
                    name, f"quote {i} of {len(quotes)} is not in the source (or too short to prove anything)"
                )
                return None
            if all((found.start, found.end) != (e.start, e.end) for e in located):
                located.append(found)
        return located

    def texts(self, name: str, text: dict[str, str]) -> dict[str, str] | None:
        """The answer's text in the languages asked for (source language first), or None."""
        wanted = [self.source_lang] if self.source_lang else []
        wanted += [lang for lang in self.languages if lang not in wanted]
        out = {lang: squeeze_lines(text[lang]) for lang in wanted if isinstance(text.get(lang), str)}
        out = {lang: value for lang, value in out.items() if value and re.fullmatch(LANG_PATTERN, lang)}
        if not out:
            self.refuse(name, "no text in the languages asked for")
            return None
        if any(len(value) > MAX_TEXT_CHARS for value in out.values()):
            self.refuse(name, f"text longer than {MAX_TEXT_CHARS} characters")
            return None
        return out

    def translated(self, languages: list[str]) -> list[str]:
        return [lang for lang in languages if self.source_lang and lang != self.source_lang]


_KNOWN = re.compile(r"[a-z_]+(?:\.[a-z0-9_-]+)?(?:\[\d+\])?")


def _label(name: str) -> str:
    """A refused field's name as the draft shows it: ours, or a placeholder for one the model made
    up (in json_object mode nothing stops it), since nothing the model invents reaches a draft."""
    head = re.split(r"[.\[]", name, maxsplit=1)[0]
    known = head in RecordBody.model_fields or head == "timeline"
    return name if known and _KNOWN.fullmatch(name) else "(a field the record does not have)"


def squeeze_lines(text: str) -> str:
    """Spaces folded within lines, paragraphs kept (a written summary has several)."""
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text.strip())]
    return "\n\n".join(p for p in paragraphs if p)


def _merge_text(state: _State, answer: TextAnswer) -> None:
    name = answer.field
    if name not in TEXT_FIELDS:
        state.refuse(name, "not a text field the model may write")
        return
    if name in state.done:
        return  # an earlier chunk's answer stands
    text = state.texts(name, answer.text)
    quotes = state.quotes(name, answer.quotes) if text else None
    if text is None or quotes is None:
        return
    state.done.add(name)
    rule_text: dict[str, str] = dict(state.record.get(name) or {})
    rewritten = state.source_lang is None or state.source_lang in text
    state.record[name] = {**rule_text, **text} if not rewritten else {**text}
    if rewritten:
        state.evidence[name] = quotes
        state.confidence[name] = Confidence(value=MODEL_CONFIDENCE, method="model")
    else:
        kept = state.evidence.get(name, [])
        state.evidence[name] = kept + [q for q in quotes if all(q.start != k.start for k in kept)]
    translated = state.translated(list(text))
    for lang in translated:
        state.confidence[f"{name}.{lang}"] = Confidence(
            value=TRANSLATION_CONFIDENCE, method="machine-translation"
        )
    state.fields[name] = ModelField(
        method="model" if rewritten else "machine-translation",
        languages=list(text),
        machine_translated=translated,
    )


def _merge_items(state: _State, name: str, answers: list[TextAnswer]) -> None:
    items: list[dict[str, Any]] = []
    quotes_all: list[Evidence] = []
    languages: list[str] = []
    for i, answer in enumerate(answers, 1):
        label = f"{name}[{i}]"
        text = state.texts(label, answer.text)
        if text is None:
            continue
        if state.source_lang and state.source_lang not in text:
            state.refuse(label, f"no text in the source's language ({state.source_lang})")
            continue
        quotes = state.quotes(label, answer.quotes)
        if quotes is None:
            continue
        if any(item["text"] == text for item in items):
            continue
        items.append({"text": text})
        quotes_all += [q for q in quotes if all(q.start != k.start for k in quotes_all)]
        languages += [lang for lang in text if lang not in languages]
    if not items:
        return
    state.record[name] = items
    state.evidence[name] = quotes_all
    state.confidence[name] = Confidence(value=MODEL_CONFIDENCE, method="model")
    translated = state.translated(languages)
    for lang in translated:
        state.confidence[f"{name}.{lang}"] = Confidence(
            value=TRANSLATION_CONFIDENCE, method="machine-translation"
        )
    state.fields[name] = ModelField(method="model", languages=languages, machine_translated=translated)


def _merge_term(state: _State, answer: TermAnswer) -> None:
    name = answer.field
    kind = TERM_FIELDS.get(name)
    if kind is None:
        state.refuse(name, "not a vocabulary field the model may set")
        return
    term = answer.term.strip()
    if term == "unknown" or name in state.done:
        return  # "unknown" claims nothing; an earlier chunk's term stands
    if term not in vocabulary(kind).terms:
        state.refuse(name, f"a term outside the {kind} vocabulary")
        return
    quotes = state.quotes(f"{name}.{term}", answer.quotes)
    if quotes is None:
        return
    conf = Confidence(value=MODEL_CONFIDENCE, method="model")
    if name in SINGLE_TERMS:
        state.done.add(name)
        state.record[name] = term
        state.evidence[name] = quotes
        state.confidence[name] = conf
    else:
        terms: list[str] = list(state.record.get(name) or [])
        if term in terms:
            return  # the rules found it too: their evidence stands
        state.record[name] = [*terms, term]
        state.evidence[f"{name}.{term}"] = quotes
        state.confidence[f"{name}.{term}"] = conf
        kept = state.evidence.get(name, [])
        state.evidence[name] = kept + [q for q in quotes if all(q.start != k.start for k in kept)]
    state.fields[name] = ModelField(method="model")


def _merge_duration(state: _State, answer: DurationAnswer) -> None:
    name = f"timeline.{answer.field}"
    if answer.field not in DURATION_FIELDS:
        state.refuse(answer.field, "not a timeline field the model may set")
        return
    if name in state.done:
        return
    value = answer.value.strip()
    if not re.fullmatch(DURATION_PATTERN, value) or parse_iso(value) is None:
        state.refuse(name, "not an ISO 8601 duration in days, hours and minutes")
        return
    quotes = state.quotes(name, answer.quotes)
    if quotes is None:
        return
    if not derivable(value, [q.quote for q in quotes]):
        state.refuse(name, "the duration does not follow from the times or durations its quotes state")
        return
    state.done.add(name)
    timeline = dict(state.record.get("timeline") or {})
    timeline[answer.field] = value
    state.record["timeline"] = timeline
    state.evidence[name] = quotes
    state.confidence[name] = Confidence(value=MODEL_CONFIDENCE, method="model")
    state.fields[name] = ModelField(method="model")


def merge_answers(
    draft: Draft,
    doc: Document,
    answers: list[Answer],
    *,
    model: str,
    languages: tuple[str, ...],
    note: str | None = None,
    prompt_version: str = PROMPT_VERSION,
) -> Draft:
    """The rule-based draft with every checked field of the answers (one per chunk, in page
    order: the first chunk's value of a single-valued field stands; lists gather) merged in, and
    the model's notes. Pure and deterministic."""
    state = _State(
        doc=doc,
        folded=Folded(doc.text),
        source_lang=draft.source.language or doc.language,
        languages=languages,
        record=draft.record.model_dump(mode="json"),
        evidence=dict(draft.evidence),
        confidence=dict(draft.confidence),
    )
    for answer in answers:
        for text in answer.texts:
            _merge_text(state, text)
        for term in answer.terms:
            _merge_term(state, term)
        for duration in answer.durations:
            _merge_duration(state, duration)
    for name in ITEM_FIELDS:
        proposed = [item for answer in answers for item in answer.items if item.field == name]
        if proposed:
            _merge_items(state, name, proposed)
    for answer in answers:
        for item in answer.items:
            if item.field not in ITEM_FIELDS:
                state.refuse(item.field, "not a list field the model may write")
    notes = ModelNotes(
        model=model, prompt_version=prompt_version, fields=state.fields, refusals=state.refusals, note=note
    )
    try:
        record = RecordBody.model_validate(state.record)
    except ValidationError as exc:
        notes.fields = {}
        notes.note = (
            f"the merged record failed validation ({exc.error_count()} errors); the rule-based draft stands"
        )
        return with_notes(draft, notes)
    merged = draft.model_copy(
        update={"record": record, "evidence": state.evidence, "confidence": state.confidence, "model": notes}
    )
    return Draft.model_validate(merged.model_dump(mode="json"))


def with_notes(draft: Draft, notes: ModelNotes) -> Draft:
    """The draft unchanged but for the model's notes (an answer that could not be used)."""
    return draft.model_copy(update={"model": notes})
