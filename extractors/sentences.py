"""Sentence spans for evidence quotes: pysbd for English, Japanese and others; rules for Korean."""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

# languages pysbd 0.3 ships rules for
_PYSBD = {
    "en", "hi", "mr", "zh", "es", "am", "ar", "hy", "bg", "ur", "ru", "pl", "fa", "nl", "da",
    "fr", "my", "el", "it", "ja", "de", "kk", "sk",
}  # fmt: skip
# Korean: a sentence ends at . ! ? (or their full-width forms), after any closing quotes or
# brackets, before white space; pysbd has no Korean rules and kiwipiepy needs a 40 MB model
_KO_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f\u2026])[\"'\u201d\u2019)\]\u300d\u300f]*(?=\s)")
# ... except after these: abbreviations, single initials, list numbers, decimal numbers
_KO_NO_BREAK = re.compile(
    r"(?:\b(?:Mr|Mrs|Ms|Dr|Prof|vs|etc|e\.g|i\.e|No|Fig|approx|ver|v)\.|\b[A-Z]\.|^\s*\d{1,3}\.)$"
)
_lock = threading.Lock()


@lru_cache(maxsize=16)
def _segmenter(lang: str) -> Any:
    import pysbd

    segmenter = pysbd.Segmenter(language=lang, clean=False)
    segmenter.sentences_with_char_spans = _char_spans.__get__(segmenter)
    return segmenter


def _char_spans(self: Any, sentences: list[str]) -> list[Any]:
    r"""pysbd's Segmenter.sentences_with_char_spans, with str.find instead of a regex per sentence.

    pysbd compiles re.escape(sentence) + r"\s*" for every sentence, which thrashes the re cache
    and cost about a fifth of drafting time. Same result: the first non-overlapping occurrence
    ending past the previous span, with the white space after it.
    """
    from pysbd.utils import TextSpan

    text = self.original_text
    if any(not sent for sent in sentences):  # an empty pattern matches everywhere: leave to pysbd
        return type(self).sentences_with_char_spans(self, sentences)
    spans, prior = [], 0
    for sent in sentences:
        pos = 0
        while (at := text.find(sent, pos)) >= 0:
            end = at + len(sent)
            while end < len(text) and text[end].isspace():  # \s* on str patterns is str.isspace
                end += 1
            if end > prior:
                spans.append(TextSpan(text[at:end], at, end))
                prior = end
                break
            pos = end
    return spans


def _pysbd_spans(text: str, base: int, lang: str) -> list[tuple[int, int]]:
    with _lock:  # pysbd segmenters keep per-call state
        pieces = _segmenter(lang).segment(text)
    spans: list[tuple[int, int]] = []
    cursor = 0
    for piece in pieces:
        piece = piece.strip()
        if not piece:
            continue
        at = text.find(piece, cursor)
        if at < 0:  # pysbd changed the text (it should not with clean=False): keep what we have
            continue
        spans.append((base + at, base + at + len(piece)))
        cursor = at + len(piece)
    return spans


def _korean_spans(text: str, base: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _KO_END.finditer(text):
        end = m.end()
        if _KO_NO_BREAK.search(text[start:end]):
            continue
        spans.append((start, end))
        start = end
    spans.append((start, len(text)))
    out = []
    for s, e in spans:
        piece = text[s:e]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece.rstrip())
        if trail > lead:
            out.append((base + s + lead, base + s + trail))
    return out


def split_sentences(
    text: str, lang: str | None, start: int = 0, end: int | None = None
) -> list[tuple[int, int]]:
    """Sentences of text[start:end] as (start, end) offsets into `text`, trimmed of white space.

    Lines never join into one sentence: blocks in Document.text are separated by newlines.
    """
    end = len(text) if end is None else min(end, len(text))
    lang = (lang or "en").split("-")[0].lower()
    spans: list[tuple[int, int]] = []
    pos = max(0, start)
    for line in re.finditer(r"[^\n]+", text[pos:end]):
        chunk = line.group(0)
        if not chunk.strip():
            continue
        base = pos + line.start()
        if lang == "ko":
            spans.extend(_korean_spans(chunk, base))
        else:
            spans.extend(_pysbd_spans(chunk, base, lang if lang in _PYSBD else "en"))
    return spans
