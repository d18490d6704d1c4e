"""Dates and clock times as pages write them, in English, Korean and Japanese (24-hour, AM/PM,
오전/오후, 午前/午後, 14時05分, 11시 13분, 2시 반), with stated zones and offsets (UTC+9, +09:00, ET/PT by
the date's season) and zones a heading or note declares: patterns and parsers."""

from __future__ import annotations

import re
from datetime import date, timedelta

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
# US zones named without the season ("9:00 AM ET", "10:15 PT"): standard or daylight time by the date.
SEASONAL_US = {"et": -5, "ct": -6, "mt": -7, "pt": -8}
_ZONES = (
    "UTC|GMT|KST|JST|PST|PDT|EST|EDT|CST|CDT|MST|MDT|CET|CEST|BST|IST|AEST|AEDT|SGT|HKT|Z(?![a-z])"
    "|(?:ET|CT|MT|PT)(?![a-z])"
)
# A named zone with an optional offset ("UTC+9", "GMT+01:00"), or a bare ISO offset right after the
# time ("14:05+09:00", "14:05:00-07:00"; a minus only after seconds, as "14:05-15:00" is a range).
_TZ = (
    rf"(?:\s*\(?\s*({_ZONES})(?:\s*([+-]\d{{1,2}})(?::?(\d{{2}}))?)?"
    r"|\s?([+-])(0\d|1[0-4]):?([0-5]\d)(?!\d))?"
)
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
    # "14時05分", "오후 2시 반" / "午後2時半" (half past).
    (
        "cjk",
        re.compile(
            r"(午前|午後|오전|오후)?\s*(\d{1,2})\s*[時시](?![間간])(?:\s*(\d{1,2})\s*[分분]|\s*([半반]))?"
        ),
    ),
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


def _dates(text: str, default_year: int, published: date | None = None) -> list[tuple[int, int, date]]:
    """(start, end, date) of every date in text; a date without a year takes `default_year`, or the
    year before when that puts it after `published` (a page written in January about "Dec 31")."""
    out: list[tuple[int, int, date]] = []
    if not _DIGIT.search(text):
        return out
    for kind, pattern in DATE_PATTERNS:
        for m in pattern.finditer(text):
            try:
                d, yearless = _date_of(kind, m, default_year)
                if yearless and published is not None and d > published and d.year == published.year:
                    d = d.replace(year=d.year - 1)
            except (ValueError, KeyError):
                continue
            if any(a <= m.start() < b for a, b, _ in out):
                continue
            out.append((m.start(), m.end(), d))
    return sorted(out)


class SeasonalZone(float):
    """A US zone named without the season (ET, PT): its standard offset, and `on(day)` the one in
    force that day (daylight time from the second Sunday of March to the first Sunday of November;
    before 2007 from the first Sunday of April to the last Sunday of October)."""

    def on(self, day: date | None) -> float:
        if day is None:
            return float(self)
        if day.year >= 2007:
            begin, end = _nth_sunday(day.year, 3, 2), _nth_sunday(day.year, 11, 1)
        else:
            begin, end = _nth_sunday(day.year, 4, 1), _nth_sunday(day.year, 11, 1) - timedelta(days=7)
        return float(self) + (1 if begin <= day < end else 0)


def _nth_sunday(year: int, month: int, n: int) -> date:
    first = date(year, month, 1)
    return first + timedelta(days=(6 - first.weekday()) % 7 + 7 * (n - 1))


def _date_of(kind: str, m: re.Match[str], default_year: int) -> tuple[date, bool]:
    """The date a DATE_PATTERNS match names, and whether its year was left out."""
    if kind == "ymd":
        return date(int(m[1]), int(m[2]), int(m[3])), False
    if kind in ("md", "md_short"):
        return date(default_year, int(m[1]), int(m[2])), True
    month, day = (m[1], m[2]) if kind == "mdy" else (m[2], m[1])
    return date(int(m[3]) if m[3] else default_year, MONTHS[month.lower()], int(day)), not m[3]


def _offset(name: str | None, sign_h: str | None, mins: str | None) -> float | None:
    if not name:
        return None
    if name.lower() in SEASONAL_US and not sign_h:
        return SeasonalZone(SEASONAL_US[name.lower()])
    hours = TZ_HOURS.get(name.lower(), 0)
    if sign_h:
        h = int(sign_h)
        hours += h + (int(mins or 0) / 60) * (1 if h >= 0 else -1)
    return hours


def _zone(m: re.Match[str], first: int, *, seconds: bool) -> float | None:
    """The offset of a time match whose _TZ groups start at `first`: a named zone ("UTC+9", "PDT"),
    or a bare offset ("+09:00"; "-07:00" only after seconds, as "14:05-15:00" is a range)."""
    sign = m[first + 3]
    if sign and (sign == "+" or seconds):
        return (int(m[first + 4]) + int(m[first + 5]) / 60) * (-1 if sign == "-" else 1)
    return _offset(m[first], m[first + 1], m[first + 2])


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
                ampm, tz = (m[4] or "").lower(), _zone(m, 5, seconds=bool(m[3]))
            elif kind == "h":
                h, mi, s, ampm, tz = int(m[1]), 0, 0, m[2].lower(), _zone(m, 3, seconds=False)
            else:
                h, mi, s = int(m[2]), 30 if m[4] else int(m[3] or 0), 0
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


# A zone a heading or a note declares for the times under it: "Timeline (all times PDT)",
# "Timeline (UTC+9)", "All times are in Pacific Time", "타임라인 (KST)", "経緯（日本時間）".
_DECLARED = re.compile(
    r"\b(UTC|GMT|KST|JST|PST|PDT|EST|EDT|CST|CDT|MST|MDT|CET|CEST|BST|AEST|AEDT|SGT|HKT|ET|PT)\b"
    r"(?:\s*([+-]\d{1,2})(?::?(\d{2}))?)?|(Pacific|Eastern|Central|Mountain) Time|(한국\s?시간|日本時間)"
)
_NAMED = {"pacific": "pt", "eastern": "et", "central": "ct", "mountain": "mt"}
_ALL_TIMES = re.compile(
    r"(?i)\ball (?:times|timestamps)\b[^.\n]{0,20}?\b(?:in|are)\s"
    r"|(?:모든\s?)?시간은\s|時刻は|時間は(?:すべて|全て)?"
    # a timeline table's header: "Time (UTC) | Event", "시각(KST) | 내용", "日時（JST）| 内容"
    r"|^\W*(?:time|timestamp|date\s*/\s*time|date and time|시간|시각|일시|時刻|日時|時間)\s*(?=[(（])"
)


# Every note _ALL_TIMES finds holds one of these (a test of a sentence costs a tenth of _ALL_TIMES's,
# and every sentence of a page is tested).
_NOTE_WORDS = ("시간", "시각", "일시", "時刻", "日時", "時間")


def _may_note(text: str) -> bool:
    return "time" in text.lower() or any(w in text for w in _NOTE_WORDS)


def declared_zone(text: str | None, *, note: bool = False) -> float | None:
    """The zone `text` declares: a heading's ("Timeline (PDT)"), or with `note` a sentence's that
    says so ("All times are in UTC")."""
    if not text:
        return None
    if note:
        if not _may_note(text):
            return None
        lead = _ALL_TIMES.search(text)
        if not lead:
            return None
        text = text[lead.end() : lead.end() + 30]
    elif len(text) > 80:
        return None
    m = _DECLARED.search(text)
    if not m:
        return None
    if m[4]:
        return _offset(_NAMED[m[4].lower()], None, None)
    if m[5]:
        return 9.0
    return _offset(m[1], m[2], m[3])


def _default_zone(times: list[list[tuple[int, int, int, int, int, float | None]]]) -> float | None:
    """The zone most of the page's explicit times use (`times`: each sentence's); naive times are
    read in it."""
    counts: dict[float, int] = {}
    for found in times:
        for *_, tz in found:
            if tz is not None:
                counts[tz] = counts.get(tz, 0) + 1
    return max(sorted(counts), key=lambda k: counts[k]) if counts else None
