"""The request to the model: the page cut into chunks by section, and the chat messages for one."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from extractors.model.answer import DURATION_FIELDS, ITEM_FIELDS, TERM_FIELDS, TEXT_FIELDS
from schema.document import Document
from schema.draft import Draft
from schema.vocab import vocabulary

# Bumped whenever the messages or the answer's shape change: cached answers of another version
# are not reused, and each field the model sets records the version it was asked with.
PROMPT_VERSION = "model-draft-1"

SYSTEM = """You help curators draft incident records from public postmortems.
You get one postmortem (or a part of it), the draft our rules made from it, and the vocabularies.
Answer with one JSON object of the given shape, nothing else.

Rules:
- Every value rests on quotes: each quote is copied verbatim from the SOURCE text (a whole sentence
  or clause, exactly as written, in the source's language). Never paraphrase a quote.
- Never invent: leave out a field the source does not support. Fewer fields are better than a guess.
- Vocabulary fields take only terms from the given vocabularies, spelled exactly as listed.
- Durations are ISO 8601 (PT15M, PT2H55M) and only when they follow from times or durations your
  quotes state: detected_after from the first impact to detection, resolved_after from the first
  impact to resolution.
- Write title, summary, trigger, detection, symptoms_text, lessons, and each remediation step and
  action item in every requested language: plain, factual prose in your own words (a summary of
  two or three short paragraphs), a faithful translation for languages other than the source's.

The answer's shape (one entry per field you can support; remediation and action items one entry
per step; components, symptoms, contributing and domain one entry per term):
{"texts": [{"field": "summary", "text": {"en": "...", "ko": "..."}, "quotes": ["..."]}],
 "items": [{"field": "remediation", "text": {"en": "...", "ko": "..."}, "quotes": ["..."]}],
 "terms": [{"field": "root_cause", "term": "config-change", "quotes": ["..."]}],
 "durations": [{"field": "resolved_after", "value": "PT2H55M", "quotes": ["...", "..."]}]}
"""


@cache
def vocabularies() -> dict[str, dict[str, str]]:
    """Each vocabulary field's terms with their English label: what the model may choose from."""
    out: dict[str, dict[str, str]] = {}
    for name, kind in TERM_FIELDS.items():
        vocab = vocabulary(kind)
        out[name] = {term: t.labels.get("en", term) for term, t in vocab.terms.items()}
    return out


def chunks(doc: Document, max_chars: int) -> list[tuple[int, int]]:
    """The page as spans of whole sections, each at most `max_chars` (a longer section is cut at
    a line or space). One span for a page that fits."""
    text = doc.text
    if len(text) <= max_chars:
        return [(0, len(text))]
    cuts = sorted({0, len(text), *(s.start for s in doc.sections if 0 < s.start < len(text))})
    pieces: list[tuple[int, int]] = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        while b - a > max_chars:
            cut = max(text.rfind("\n", a, a + max_chars), text.rfind(" ", a, a + max_chars))
            cut = cut if cut > a else a + max_chars
            pieces.append((a, cut))
            a = cut
        pieces.append((a, b))
    out: list[tuple[int, int]] = []
    for a, b in pieces:
        if out and b - out[-1][0] <= max_chars:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _rule_view(draft: Draft) -> dict[str, Any]:
    """The rule-based values the model is asked to improve on (no evidence: it reads the source)."""
    record = draft.record.model_dump(mode="json")
    keep = (*TEXT_FIELDS, *ITEM_FIELDS, *TERM_FIELDS, "timeline")
    return {k: record[k] for k in keep if record.get(k) not in (None, "unknown", [], {})}


def messages(
    doc: Document,
    span: tuple[int, int],
    draft: Draft,
    languages: tuple[str, ...],
    *,
    schema: dict[str, Any] | None = None,
    part: tuple[int, int] = (1, 1),
) -> list[dict[str, str]]:
    """The chat messages for one chunk. `schema`: spelled out in the prompt, for servers that
    cannot constrain the answer to it (json_object mode)."""
    source_lang = doc.language or draft.source.language or "unknown"
    ask = {
        "languages": list(languages),
        "source_language": source_lang,
        "fields": {
            "texts": list(TEXT_FIELDS),
            "items": list(ITEM_FIELDS),
            "terms": list(TERM_FIELDS),
            "durations": list(DURATION_FIELDS),
        },
        "vocabularies": vocabularies(),
        "rule_based_draft": _rule_view(draft),
    }
    user = [
        "TASK:",
        json.dumps(ask, ensure_ascii=False),
    ]
    if schema is not None:
        user += ["ANSWER JSON SCHEMA:", json.dumps(schema, ensure_ascii=False)]
    title = f" (part {part[0]} of {part[1]})" if part[1] > 1 else ""
    user += [f"SOURCE{title}:", doc.text[span[0] : span[1]]]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(user)}]
