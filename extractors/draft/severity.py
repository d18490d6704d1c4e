"""Severity: only a level the source states (SEV1, P2, 심각도 2, 重大度), mapped to the vocabulary."""

from __future__ import annotations

import re

from extractors.draft.evidence import Context, Found, confidence, evidence
from schema.vocab import vocabulary

STATED = [
    re.compile(r"(?i)\bsev(?:erity)?[\s:_-]*(?:level\s*)?([0-5])\b"),
    re.compile(r"(?i)\bseverity::([1-4])\b"),
    re.compile(r"(?i)\b(?:priority|incident priority)[\s:]*P?([0-4])\b"),
    re.compile(r"(?<![\w-])P([0-4])\s+(?:incident|outage|issue|장애|障害)", re.I),
    re.compile(
        r"(?:심각도|重大度|深刻度|장애\s*등급|障害レベル)\s*[:：]?\s*(?:레벨\s*|レベル\s*|등급\s*)?([0-5])"
    ),
]
WORDS = re.compile(
    r"(?i)\b(?:severity|impact level|incident level)\s*(?:level\s*)?[:=]?\s*"
    r"(critical|high|major|medium|moderate|minor|low)\b"
    r"|(?:심각도|重大度)\s*[:：]?\s*(치명적|높음|중간|낮음|重大|高|中|低)"
)
# Every match of STATED or WORDS holds one of these (case-insensitive, as they are): one search a
# sentence instead of six.
GATE = re.compile(r"(?i)sev|priority|p[0-4]|impact level|incident level|심각도|重大度|深刻度|등급|障害レベル")
# The same, to search Context.folded: the page's text in one case-sensitive scan.
GATE_FOLDED = re.compile(GATE.pattern.removeprefix("(?i)"))
WORD_MAP = {
    "치명적": "critical",
    "높음": "high",
    "중간": "medium",
    "낮음": "low",
    "重大": "critical",
    "高": "high",
    "中": "medium",
    "低": "low",
}


# A SEV0 or P0 anywhere; the folded text keeps word boundaries, so it needs no IGNORECASE.
ZERO_TOP = re.compile(r"\bsev[\s_-]*0\b|(?<![\w-])p0\b")
ZERO_TOP_ANY_CASE = re.compile(ZERO_TOP.pattern, re.I)


def gated_sentences(ctx: Context) -> set[int] | None:
    """The sentences worth a GATE search: those a match in the whole page touches."""
    return ctx.touching(GATE_FOLDED, folded=True)


def draft_severity(ctx: Context) -> Found:
    found = Found()
    text = ctx.doc.text
    # The page's own scale decides the mapping: a SEV0 or P0 anywhere means the top level is 0.
    folded = ctx.folded
    if folded is not None:  # every match holds "sev" or "p0": most pages need no scan at all
        zero_top = ("sev" in folded or "p0" in folded) and bool(ZERO_TOP.search(folded))
    else:
        zero_top = bool(ZERO_TOP_ANY_CASE.search(text))
    scales = vocabulary("severity").extra("scales") or {}
    gated = gated_sentences(ctx)
    for i, s in enumerate(ctx.sentences):
        if s.role == "skip" or (gated is not None and i not in gated) or not GATE.search(s.text):
            continue
        for pattern in STATED:
            m = pattern.search(s.text)
            if not m:
                continue
            rank = int(m.group(1)) + (1 if zero_top else 0)
            if rank < 1:
                continue
            term: str | None = f"sev{min(rank, 4)}"
            found.put(
                "severity", term, [evidence(ctx.doc, s.start, s.end, s.heading)], confidence(0.8, "rule")
            )
            found.reasons.append(f"severity: stated {m.group(0)!r}")
            return found
        m = WORDS.search(s.text)
        if m:
            word = (m.group(1) or WORD_MAP.get(m.group(2) or "", "")).lower()
            term = (scales.get("words", {}).get("map", {}) or {}).get(word)
            if term:
                found.put(
                    "severity", term, [evidence(ctx.doc, s.start, s.end, s.heading)], confidence(0.6, "rule")
                )
                return found
    return found
