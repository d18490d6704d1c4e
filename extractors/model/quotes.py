"""Quote checking: find a model's quote in Document.text, whitespace-normalised, and locate it."""

from __future__ import annotations

import re
import unicodedata

from schema.document import Document
from schema.draft import Evidence

_SPACE = re.compile(r"\s+")
# Shorter quotes prove nothing: "the outage" is on every page. Counted without spaces; a CJK
# character carries about as much as a Latin word, hence the lower bar for those scripts.
MIN_QUOTE_CHARS = 12
MIN_QUOTE_CHARS_CJK = 6
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


class Folded:
    """A text with whitespace runs folded to one space, and the map back to the original offsets."""

    def __init__(self, text: str) -> None:
        out: list[str] = []
        index: list[int] = []
        previous_space = False
        for i, ch in enumerate(text):
            if ch.isspace():
                if previous_space:
                    continue
                previous_space = True
                out.append(" ")
            else:
                previous_space = False
                out.append(ch)
            index.append(i)
        self.text = "".join(out)
        self.index = index


def fold(quote: str) -> str:
    """A quote as the model might have typed it, normalised like the document: NFC, folded spaces."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", quote)).strip()


def long_enough(quote: str) -> bool:
    bare = _SPACE.sub("", quote)
    least = MIN_QUOTE_CHARS_CJK if _CJK.search(bare) else MIN_QUOTE_CHARS
    return len(bare) >= least


def locate(doc: Document, folded: Folded, quote: str) -> Evidence | None:
    """Evidence for `quote` where the document says it (the first place), or None when it does not.
    The evidence's quote is the document's own slice, so `quote == text[start:end]` holds."""
    wanted = fold(quote)
    if not wanted or not long_enough(wanted):
        return None
    at = folded.text.find(wanted)
    if at < 0:
        return None
    start = folded.index[at]
    end = folded.index[at + len(wanted) - 1] + 1
    section = doc.section_at(start)
    return Evidence(
        quote=doc.text[start:end], section=section.heading if section else None, start=start, end=end
    )
