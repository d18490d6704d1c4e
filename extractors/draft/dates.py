"""Dates and clock times as pages write them, in English, Korean and Japanese (24-hour, AM/PM,
오전/오후, 午前/午後, 14時05分, 11시 13분), with stated zones and offsets: patterns and parsers."""

from __future__ import annotations

import re
from datetime import date

MONTHS = {
    m: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for m in names
}
TZ_HOURS = {
    "utc": 0,
    "gmt": 0,
    "z": 0,
    "kst": 9,
    "jst": 9,
    "pst": -8,
    "pdt": -7,
    "est": -5,
    "edt": -4,
    "cst": -6,
    "cdt": -5,
    "mst": -7,
    "mdt": -6,
    "cet": 1,
    "cest": 2,
    "bst": 1,
    "ist": 5.5,
    "aest": 10,
    "aedt": 11,
    "sgt": 8,
    "hkt": 8,
}
_ZONES = "UTC|GMT|KST|JST|PST|PDT|EST|EDT|CST|CDT|MST|MDT|CET|CEST|BST|IST|AEST|AEDT|SGT|HKT|Z(?![a-z])"
_TZ = rf"(?:\s*\(?\s*({_ZONES})(?:\s*([+-]\d{{1,2}})(?::?(\d{{2}}))?)?)?"
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))

DATE_PATTERNS = [
    ("ymd", re.compile(r"(?<!\d)((?:19|20)\d\d)[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")),
    ("ymd", re.compile(r"((?:19|20)\d\d)\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일]")),
    ("md", re.compile(r"(?<!\d)(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일]")),
    ("mdy", re.compile(rf"(?i)\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+((?:19|20)\d\d))?")),
    (
        "dmy",
        re.compile(
            rf"(?i)\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\b\.?(?:,?\s+((?:19|20)\d\d))?"
        ),
    ),
    # Bare month/day (11/25, 10-31): only at the head of a short line or right before a time.
    ("md_short", re.compile(r"^(\d{1,2})[/-](\d{1,2})(?=\s*(?:\(.{1,3}\)|（.{1,3}）)?\s*$)")),
    ("md_short", re.compile(r"(?<![\d/.-])(\d{1,2})[/-](\d{1,2})(?=\s+\d{1,2}:\d{2})")),
]
TIME_PATTERNS = [
    (
        "hm",
        re.compile(
            r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?(?!\d|:\d)\s*(?:(am|pm|a\.m\.|p\.m\.)(?![a-z]))?"
            + _TZ,
            re.I,
        ),
    ),
    ("h", re.compile(r"(?<![\d:.])(1[0-2]|0?[1-9])\s*(am|pm|a\.m\.|p\.m\.)(?![a-z])" + _TZ, re.I)),
    ("cjk", re.compile(r"(午前|午後|오전|오후)?\s*(\d{1,2})\s*[時시](?![間간])(?:\s*(\d{1,2})\s*[分분])?")),
]
# Stated durations: "for approximately 47 minutes", "7시간 동안", "約2時間".


# Every match of a TIME_PATTERNS entry holds one of TIME_GATE's (h:mm, a number before am/pm or
# before 時/시), and every DATE_PATTERNS match one of DATE_GATES', searched in Context.folded. The
# gates have no look-arounds, so Context.touching finds the sentences worth parsing in a scan of
# the page each (most sentences state no time or date, yet each cost ten scans).
TIME_GATE = re.compile(r"\d:\d|\d\s*[aApP]\.?[mM]|\d\s*[時시]")
# Two scans: one alternation led by letters and digits alike made the scanner try every position.
DATE_GATES = (
    re.compile(rf"\d(?:[-/.]\d|\s*[年년月월]|(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH}))"),
    re.compile(rf"(?:{_MONTH})\.?\s+\d"),
)
# Every date, time and duration pattern needs a digit: sentences without one are skipped unread.
_DIGIT = re.compile(r"\d")
_CJK_UNIT = re.compile(r"[日일時시分분]")


def _dates(text: str, default_year: int) -> list[tuple[int, int, date]]:
    out: list[tuple[int, int, date]] = []
    if not _DIGIT.search(text):
        return out
    for kind, pattern in DATE_PATTERNS:
        for m in pattern.finditer(text):
            try:
                if kind == "ymd":
                    d = date(int(m[1]), int(m[2]), int(m[3]))
                elif kind in ("md", "md_short"):
                    d = date(default_year, int(m[1]), int(m[2]))
                elif kind == "mdy":
                    d = date(int(m[3]) if m[3] else default_year, MONTHS[m[1].lower()], int(m[2]))
                else:
                    d = date(int(m[3]) if m[3] else default_year, MONTHS[m[2].lower()], int(m[1]))
            except (ValueError, KeyError):
                continue
            if any(a <= m.start() < b for a, b, _ in out):
                continue
            out.append((m.start(), m.end(), d))
    return sorted(out)


def _offset(name: str | None, sign_h: str | None, mins: str | None) -> float | None:
    if not name:
        return None
    hours = TZ_HOURS.get(name.lower(), 0)
    if sign_h:
        h = int(sign_h)
        hours += h + (int(mins or 0) / 60) * (1 if h >= 0 else -1)
    return hours


def _times(
    text: str, spans_taken: list[tuple[int, int]]
) -> list[tuple[int, int, int, int, int, float | None]]:
    """(start, end, hour, minute, second, utc offset or None) for each clock time in text."""
    out: list[tuple[int, int, int, int, int, float | None]] = []
    if not _DIGIT.search(text):
        return out
    for kind, pattern in TIME_PATTERNS:
        for m in pattern.finditer(text):
            if any(a <= m.start() < b for a, b in spans_taken) or any(a <= m.start() < b for a, b, *_ in out):
                continue
            if kind == "hm":
                h, mi, s = int(m[1]), int(m[2]), int(m[3] or 0)
                ampm, tz = (m[4] or "").lower(), _offset(m[5], m[6], m[7])
            elif kind == "h":
                h, mi, s, ampm, tz = int(m[1]), 0, 0, m[2].lower(), _offset(m[3], m[4], m[5])
            else:
                h, mi, s = int(m[2]), int(m[3] or 0), 0
                ampm = "pm" if m[1] in ("午後", "오후") else "am" if m[1] else ""
                tz = None
                if h > 24 or mi > 59:
                    continue
            if ampm.startswith("p") and h < 12:
                h += 12
            elif ampm.startswith("a") and h == 12:
                h = 0
            if h > 23:
                continue
            out.append((m.start(), m.end(), h, mi, s, tz))
    return sorted(out)


def _default_zone(times: list[list[tuple[int, int, int, int, int, float | None]]]) -> float | None:
    """The zone most of the page's explicit times use (`times`: each sentence's); naive times are
    read in it."""
    counts: dict[float, int] = {}
    for found in times:
        for *_, tz in found:
            if tz is not None:
                counts[tz] = counts.get(tz, 0) + 1
    return max(sorted(counts), key=lambda k: counts[k]) if counts else None
