"""Evidence, confidence and the Found accumulator the field drafters fill; the page context and
cue lists live in context.py and cues.py (re-exported here for the drafters that import them so)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from extractors.draft.candidates import Candidate
from extractors.draft.context import Context, Sentence, heading_role_by_keyword, own_split_sentences
from extractors.draft.cues import cue_pattern, cues, field_cue
from extractors.sentences import trim
from schema.document import Document
from schema.draft import Alternative, Confidence, Evidence, Method

_SPACE = re.compile(r"\s")

__all__ = [
    "Context",
    "Found",
    "Sentence",
    "confidence",
    "cue_pattern",
    "cues",
    "evidence",
    "field_cue",
    "heading_role_by_keyword",
    "own_split_sentences",
    "prose",
    "sentence_evidence",
    "squeeze",
]


# Code a page shows in a paragraph ("public static void set(UserSession s) {", "x = f(); // keep")
# and footnote definitions ("[^1]: As of writing ..."): no prose tells an incident so.
_NOT_PROSE = re.compile(
    r"[{}]|\w\([^()]*\)\s*;|;\s*//|^\s*\[\^|^\s*(?:public|private|protected|def|function|import|return)\s"
)


# What every _NOT_PROSE hit holds or starts with (tested first: most sentences hold none).
_CODE_MARKS = ("{", "}", ";")
_CODE_STARTS = ("[^", "public", "private", "protected", "def", "function", "import", "return")


def prose(sentence: Sentence) -> bool:
    """Whether a sentence is prose a field may quote by cue words: not code, not a footnote."""
    text = sentence.text
    if sentence.kind == "code":
        return False
    if not any(m in text for m in _CODE_MARKS) and not text.lstrip().startswith(_CODE_STARTS):
        return True
    return not _NOT_PROSE.search(text)


def evidence(doc: Document, start: int, end: int, section: str | None = None) -> Evidence:
    """Evidence for text[start:end], trimmed; the quote is the exact slice, always."""
    start, end = trim(doc.text, max(0, start), min(len(doc.text), end))
    return Evidence(quote=doc.text[start:end], section=section, start=start, end=end)


def sentence_evidence(ctx: Context, sentence: Sentence) -> Evidence:
    return evidence(ctx.doc, sentence.start, sentence.end, sentence.heading)


def confidence(value: float, method: Method | str) -> Confidence:
    """A confidence in [0, 1]; the method is checked against the draft schema's list at runtime."""
    return Confidence.model_validate({"value": round(min(1.0, max(0.0, value)), 3), "method": method})


def squeeze(text: str) -> str:
    """Whitespace runs to one space (for values assembled from quotes; quotes stay exact)."""
    return _SPACE.sub(" ", re.sub(r"\s+", " ", text)).strip()


@dataclass
class Found:
    """What one field drafter found: record values, their evidence and confidence. Empty = not found."""

    record: dict[str, object] = field(default_factory=dict)
    evidence: dict[str, list[Evidence]] = field(default_factory=dict)
    confidence: dict[str, Confidence] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    # Runners-up per field (root cause, each vocabulary field), best first: Draft.alternatives.
    alternatives: dict[str, list[Alternative]] = field(default_factory=dict)
    # The scored candidates per field, with their features (bench/train.py and `incidents learn`
    # read them; never written into a draft).
    candidates: dict[str, list[Candidate]] = field(default_factory=dict)

    def put(
        self,
        name: str,
        value: object,
        quotes: list[Evidence] | None = None,
        conf: Confidence | None = None,
        *,
        key: str | None = None,
    ) -> None:
        """Set record field `name` (None: evidence only) and file evidence under `key` (default: name)."""
        if name and "." not in name:
            self.record[name] = value
        key = key or name
        if quotes:
            seen = self.evidence.setdefault(key, [])
            for q in quotes:
                if q.quote and all((q.start, q.end) != (s.start, s.end) for s in seen):
                    seen.append(q)
        if conf is not None:
            self.confidence[key] = conf
