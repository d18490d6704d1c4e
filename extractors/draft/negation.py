"""Negated and hypothetical mentions: "No data was lost" names data loss but reports none."""

from __future__ import annotations

import re
from functools import cache

from extractors.draft.vocab_match import settings

# Where a clause ends: a mention's negation must sit in its own clause ("The API failed, but no data
# was lost" negates only the loss).
_CLAUSE_END = re.compile(r"[,;:.!?。！？、]|\s[—–-]\s|\bbut\b|\bhowever\b|하지만|지만|けど|が、")
_WORDS = re.compile(r"[\w']+")


@cache
def _cues() -> tuple[re.Pattern[str], tuple[str, ...], int, int, frozenset[str]]:
    n = settings()["negation"]
    before = re.compile(r"(?<![\w'])(?:" + "|".join(re.escape(w) for w in n["before"]) + r")(?![\w'])")
    return before, tuple(n["after"]), int(n["window"]), int(n["after_chars"]), frozenset(n["kinds"])


def applies_to(kind: str) -> bool:
    return kind in _cues()[4]


def negated(text: str, start: int, end: int) -> bool:
    """Whether the mention `text[start:end]` stands in a negated or hypothetical clause."""
    before, after, window, after_chars, _ = _cues()
    head = text[:start]
    cut = max((m.end() for m in _CLAUSE_END.finditer(head)), default=0)
    words = _WORDS.findall(head[cut:].lower())[-window:]
    if words and before.search(" ".join(words)):
        return True
    tail = text[end : end + after_chars]
    stop = _CLAUSE_END.search(tail)
    tail = (tail[: stop.start()] if stop else tail).lower()
    return any(a in tail for a in after)
