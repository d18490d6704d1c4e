"""Negated and hypothetical mentions: "No data was lost" names data loss but reports none."""

from __future__ import annotations

import re
from functools import cache

from extractors.draft.vocab_match import settings

# Where a clause ends: a mention's negation must sit in its own clause ("The API failed, but no data
# was lost" negates only the loss).
_CLAUSE_END = re.compile(r"[,;:.!?。！？、]|\s[—–-]\s|\bbut\b|\bhowever\b|하지만|지만|けど|が、")
_WORDS = re.compile(r"[\w']+")
LOOKBACK = 160
# A negative subject that could not do something reports an impact, not a denial: "No one could log
# in", "nobody was able to pay" (but "No data was lost", "no users were affected", "no one could
# have known" stay negated). The phrase is taken out of the clause before the negation test.
_UNABLE = re.compile(
    r"(?i)\b(?:no[ -]one|nobody|none of (?:the |our )?\w+"
    r"|no (?:users?|customers?|people|developers?|members?|clients?))"
    r"\s+(?:could(?:n't| not)?|can(?:not|'t)?|was able to|were able to|managed to)(?!\s+have\b)"
)


def _any_of(words: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern that finds any of `words` as a plain substring: for speed, one regex search in
    place of a substring test per word (`any(w in text for w in words)`); none matches nothing."""
    return re.compile("|".join(re.escape(w) for w in words) if words else r"(?!)")


@cache
def _cues() -> tuple[re.Pattern[str], re.Pattern[str], int, int, frozenset[str]]:
    n = settings()["negation"]
    before = re.compile(r"(?<![\w'])(?:" + "|".join(re.escape(w) for w in n["before"]) + r")(?![\w'])|n't")
    return before, _any_of(tuple(n["after"])), int(n["window"]), int(n["after_chars"]), frozenset(n["kinds"])


@cache
def _right_after() -> re.Pattern[str]:
    words = settings()["negation"]["right_after"]
    return re.compile(r"^\S{0,3}(?:" + "|".join(re.escape(w) for w in words) + ")")


def applies_to(kind: str) -> bool:
    return kind in _cues()[4]


def negated(text: str, start: int, end: int) -> bool:
    """Whether the mention `text[start:end]` stands in a negated or hypothetical clause: the one
    negation test of the drafter (vocabulary terms, the timeline's moments, the postmortem gate)."""
    before, after, *_ = _cues()
    if _right_after().match(text[end : end + 12]):
        return True
    return _clause_says(text, start, end, before, after, unable=True)


def _clause_says(
    text: str, start: int, end: int, before: re.Pattern[str], after: re.Pattern[str], *, unable: bool = False
) -> bool:
    """Whether the clause of the mention `text[start:end]` has a `before` cue in its last words
    before it, or an `after` cue in the characters after it (both bounded by the clause's ends).
    With `unable`, "no one could" / "unable to" is taken out first: an impact, not a denial."""
    _, _, window, after_chars, _ = _cues()
    # The clause starts after the last clause end before the mention. finditer with an end
    # position reads text[:start] without copying it; its matches come in order and never
    # overlap, so the last one's end is the greatest (a loop: cheaper than max over a generator).
    # Only the last LOOKBACK characters are read: the cues are in the clause's last `window` words,
    # and the gate asks about mentions anywhere in a whole page (a scan from 0 cost O(page) each).
    cut = max(0, start - LOOKBACK)
    for m in _CLAUSE_END.finditer(text, cut, start):
        cut = m.end()
    clause = text[cut:start]
    low = clause.lower()
    if unable and "no" in low:
        low = _UNABLE.sub(" ", clause).lower()
    words = _WORDS.findall(low)[-window:]
    if words and before.search(" ".join(words)):
        return True
    tail = text[end : end + after_chars]
    stop = _CLAUSE_END.search(tail)
    tail = (tail[: stop.start()] if stop else tail).lower()
    return after.search(tail) is not None


@cache
def _ruled_out_cues() -> tuple[re.Pattern[str], re.Pattern[str], frozenset[str]]:
    r = settings()["negation"]["ruled_out"]
    before = re.compile(r"(?<![\w'])(?:" + "|".join(re.escape(w) for w in r["before"]) + r")(?![\w'])")
    return before, _any_of(tuple(r["after"])), frozenset(r["kinds"])


def rules_out(kind: str) -> bool:
    return kind in _ruled_out_cues()[2]


def ruled_out(text: str, start: int, end: int) -> bool:
    """Whether the mention `text[start:end]` is named to be excluded: "it was not the database",
    "the database was healthy", DB는 정상이었습니다, DBは正常でした."""
    before, after, _ = _ruled_out_cues()
    return _clause_says(text, start, end, before, after)
