"""Timeline durations: first impact, detection and recovery times from timestamps and stated durations."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache

from extractors.draft.evidence import Context, Found, Sentence, confidence, cue_pattern, cues, evidence
from extractors.draft.lexicon import Lexicon
from schema.draft import Evidence

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
_NUM = r"(\d+(?:\.\d+)?)"
DURATION_EN = re.compile(
    rf"(?i)(?<![\d\-–~])(?:about|approximately|around|roughly|nearly|almost|over|~)?\s*{_NUM}\s*(hours?|hrs?|h|minutes?|mins?|days?)\b(?:\s*(?:and\s*)?{_NUM}\s*(minutes?|mins?))?"
)
DURATION_CJK = re.compile(
    r"(?:약|約|およそ)?\s*(?:(\d+)\s*[日일]\s*)?(?:(\d+)\s*(?:時間|시간))?\s*(?:(\d+)\s*(?:分|분))?"
)
LASTED_EN = re.compile(
    r"(?i)\b(?:for|lasted|lasting|outage of|downtime of)\s+(?:an?\s+)?(?:estimated\s+|total\s+)?"
    r"(?:time\s+of\s+|period\s+of\s+)?$"
)
IMPACT_WORDS = re.compile(
    r"(?i)outage|down\b|unavailable|failures?|failed|failing|errors?|broken|disrupt|impact|장애|중단|영향|실패|障害|停止|影響|できな"
)
# "... 12 minutes after the errors began / the outage started / the certificate expired": a
# duration measured from the first impact.
AFTER_START_EN = re.compile(
    r"(?i)\s+after\s+(?:[\w-]+\s+){0,4}?(?:errors?|outage|incident|impact|failures?|problems?|issue|"
    r"disruption|degradation|began|begun|started|start|onset|occurred|expired|expiry|went down)\b"
)
DETECT_EN = re.compile(
    r"(?i)\b(?:paged|alerted|detected|noticed|became aware|identified|discovered|notified)\b"
)
RESOLVE_EN = re.compile(r"(?i)\b(?:resolved|restored|recovered|mitigated|fixed|back online|back to normal)\b")
CJK_RESOLVE_HEAD = re.compile(r"(?:복구|해결|정상화|復旧|解消|回復)(?:까지|하는 데|되기까지|まで|までに)\s*$")
CJK_RESOLVE_TAIL = re.compile(r"^\s*(?:동안|간|にわたり|にわたって|の間|停止|ダウン|中断)")
CJK_DETECT = re.compile(r"(감지|인지|발견)(까지|하는 데)|(検知|発見|気づく)まで")


@dataclass(frozen=True)
class Moment:
    at: datetime  # naive: UTC when a zone was given or the page's default zone
    start: int  # offset of the time expression in Document.text
    end: int
    sentence: Sentence
    explicit_date: bool


@cache
def _event_patterns():
    t = cues()["timeline"]
    return {k: cue_pattern(t[k]) for k in ("start", "detect", "resolve")}, cue_pattern(t["skip_start"])


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


# A time this much earlier than the previous entry of a timeline is the next day (23:16 -> 00:28);
# smaller steps back are entries out of order (14:46 then 14:44), as real timelines have.
ROLLOVER_GAP = timedelta(hours=6)


def moments(ctx: Context) -> list[Moment]:
    """Every clock time of the page with its date: the same sentence's date, else the last one seen.

    Rules: a bare time that some other sentence gives with a full date takes that date; inside a
    timeline section a time earlier than the previous one rolls over to the next day. Worked out
    once per page: the timeline, the trigger and the verdict all read it."""
    if "moments" not in ctx.memo:
        ctx.memo["moments"] = tuple(_moments(ctx))
    return list(ctx.memo["moments"])


def gated_sentences(ctx: Context) -> tuple[set[int] | None, set[int] | None]:
    """The sentences that may state a time, and those that may state a date (None: any)."""
    found = [ctx.touching(gate, folded=True) for gate in DATE_GATES]
    dated = None if None in found else set().union(*found)  # type: ignore[arg-type]
    return ctx.touching(TIME_GATE), dated


def _moments(ctx: Context) -> list[Moment]:
    doc = ctx.doc
    year = int(doc.published[:4]) if doc.published and doc.published[:4].isdigit() else 2000
    timed, dated = gated_sentences(ctx)
    every = [_times(s.text, []) if timed is None or i in timed else [] for i, s in enumerate(ctx.sentences)]
    zone = _default_zone(every)
    full: dict[tuple[int, int], date] = {}
    parsed = []
    for i, (s, plain) in enumerate(zip(ctx.sentences, every, strict=True)):
        if s.role == "skip":
            continue
        ds = _dates(s.text, year) if dated is None or i in dated else []
        # Times inside a date are left out; with no date, or no time at all, that changes nothing.
        ts = _times(s.text, [(a, b) for a, b, _ in ds]) if ds and plain else plain
        parsed.append((s, ds, ts))
        for t in ts:
            same = [d for a, b, d in ds if b <= t[0]]
            if same:
                full.setdefault((t[2], t[3]), same[-1])
    out: list[Moment] = []
    current: date | None = None
    last: datetime | None = None
    last_role = None
    for s, ds, ts in parsed:
        pos_dates = list(ds)
        if not ts:
            if pos_dates:
                current = pos_dates[-1][2]
                last = None
            continue
        prev_end = -10
        for a, b, h, mi, sec, tz in ts:
            # Two zones for one instant ("13:14 EDT (17:14 UTC)"): the first is kept, the echo skipped.
            echo = a - prev_end <= 3 and re.fullmatch(r"[\s(（/]*", s.text[prev_end:a] or "") is not None
            prev_end = b
            if echo:
                continue
            before = [d for x, y, d in pos_dates if y <= a + 1]
            explicit = bool(before) or bool([d for x, y, d in pos_dates if x >= b and x - b < 3])
            if before:
                day = before[-1]
            elif explicit:
                day = next(d for x, y, d in pos_dates if x >= b)
            elif (h, mi) in full:
                day = full[(h, mi)]
                explicit = True  # dated by the other quote; no rollover guess
            else:
                day = current  # type: ignore[assignment]  # None: no date seen yet (day 0)
            base = datetime.combine(day or date(year, 1, 1), datetime.min.time()).replace(
                hour=h, minute=mi, second=sec
            )
            offset = tz if tz is not None else zone
            at = base - timedelta(hours=offset or 0) + timedelta(hours=zone or 0) if tz is not None else base
            if (
                not explicit
                and last is not None
                and s.role == "timeline"
                and last_role == "timeline"
                and at < last - ROLLOVER_GAP
            ):
                at += timedelta(days=1)
                day = (day or date(year, 1, 1)) + timedelta(days=1)
            out.append(Moment(at, s.start + a, s.start + b, s, explicit))
            current, last, last_role = day if day else current, at, s.role
    return out


def _events(ctx: Context, ms: list[Moment]) -> dict[str, list[Moment]]:
    pats, skip_start = _event_patterns()
    by_sentence: dict[int, list[Moment]] = {}
    for m in ms:
        by_sentence.setdefault(m.sentence.start, []).append(m)
    events: dict[str, list[Moment]] = {"start": [], "detect": [], "resolve": []}
    for group in by_sentence.values():
        s = group[0].sentence
        low = s.text.lower()
        claimed: dict[int, str] = {}
        for kind in ("resolve", "detect", "start"):
            hit = pats[kind].search(low)
            if not hit or (kind == "start" and skip_start.search(low)):
                continue
            pos = s.start + hit.start()
            nearest = min(group, key=lambda m: (abs(m.start - pos), m.start < pos))
            if nearest.start not in claimed:
                claimed[nearest.start] = kind
                events[kind].append(nearest)
    return events


def _iso(delta: timedelta) -> str | None:
    """ISO 8601 in hours and minutes, the library's style (PT54H10M rather than P2DT6H10M)."""
    secs = int(round(delta.total_seconds()))
    if secs <= 0:
        return None
    h, rest = divmod(secs, 3600)
    mi, s = divmod(rest, 60)
    return "PT" + (f"{h}H" if h else "") + (f"{mi}M" if mi else "") + (f"{s}S" if s else "")


# Durations longer than this are not one incident's detection or recovery on a timeline of clock
# times (a month-long gap means two stories); longer stated durations still pass.
MAX_SPAN = timedelta(days=14)


def _interval(ctx: Context, ms: list[Moment]) -> tuple[Moment, Moment] | None:
    """'Between 21:27 UTC and 07:27 UTC ... were running with expired certificates'."""
    for i, m in enumerate(ms[:-1]):
        n = ms[i + 1]
        if m.sentence is not n.sentence:
            continue
        low = m.sentence.text.lower()
        gap = ctx.doc.text[m.end : n.start].lower()
        opens = re.search(r"\bbetween\b|\bfrom\b|부터|から", low[: m.start - m.sentence.start + 1] + gap)
        closes = re.search(r"\band\b|\bto\b|\buntil\b|~|–|-|까지|まで", gap)
        if opens and closes and (IMPACT_WORDS.search(low) or re.search(r"running with|expired", low)):
            return m, n
    return None


def _stated(ctx: Context) -> dict[str, tuple[timedelta, Sentence, int, int]]:
    """Durations a sentence states for recovery or detection."""
    out: dict[str, tuple[timedelta, Sentence, int, int]] = {}
    for s in ctx.sentences:
        if s.role == "skip" or not _DIGIT.search(s.text):
            continue
        if re.search(r"(?i)time to (?:repair|resolve|recover|detect)", s.text):
            continue
        for m in DURATION_EN.finditer(s.text):
            # The match may open with the space before the number: "for" must still end the head.
            head = s.text[: m.start()].rstrip() + " "
            n, unit = float(m[1]), m[2].lower()
            delta = (
                timedelta(days=n)
                if unit.startswith("d")
                else timedelta(hours=n)
                if unit.startswith("h")
                else timedelta(minutes=n)
            )
            if m[3]:
                delta += timedelta(minutes=float(m[3]))
            after = AFTER_START_EN.match(s.text[m.end() :])
            if after and DETECT_EN.search(head):
                # "The on-call engineer was paged 12 minutes after the errors began."
                out.setdefault("detected_after", (delta, s, m.start(), m.end()))
            elif (
                after
                and RESOLVE_EN.search(head)
                or LASTED_EN.search(head[-40:])
                and IMPACT_WORDS.search(s.text)
            ):
                out.setdefault("resolved_after", (delta, s, m.start(), m.end()))
        # DURATION_CJK can match empty text, so finditer stops at every character: look only in
        # sentences with a unit it needs (one of 日 일 時 시 分 분), as every match we keep has one.
        for m in DURATION_CJK.finditer(s.text) if _CJK_UNIT.search(s.text) else ():
            if not (m[1] or m[2] or m[3]) or m.end() - m.start() < 2:
                continue
            tail = s.text[m.end() : m.end() + 12]
            head = s.text[max(0, m.start() - 12) : m.start()]
            delta = timedelta(days=int(m[1] or 0), hours=int(m[2] or 0), minutes=int(m[3] or 0))
            if CJK_DETECT.search(head + tail):
                out.setdefault("detected_after", (delta, s, m.start(), m.end()))
            elif (CJK_RESOLVE_HEAD.search(head) or CJK_RESOLVE_TAIL.search(tail)) and IMPACT_WORDS.search(
                s.text
            ):
                out.setdefault("resolved_after", (delta, s, m.start(), m.end()))
    return out


def draft_timeline(ctx: Context) -> Found:
    found = Found()
    ms = moments(ctx)
    events = _events(ctx, ms)
    # A deploy of the fix is not the first impact; and the first impact precedes any detection.
    fix = _fix_pattern()
    starts = sorted(
        (m for m in events["start"] if not fix.search(m.sentence.text.lower())), key=lambda m: m.at
    )
    first_detect = min((m.at for m in events["detect"]), default=None)
    start = starts[0] if starts else None
    if start is not None and first_detect is not None and start.at > first_detect:
        start = None
    method = "rule"
    if start is None:
        # A timeline section whose first entry is neither detection nor recovery opens with the
        # first impact (or the change that caused it).
        tl = [m for m in ms if m.sentence.role == "timeline"]
        claimed = {m.start for k in ("detect", "resolve") for m in events[k]}
        if (
            tl
            and tl[0].start not in claimed
            and any(m.start in claimed for m in tl[1:])
            and (first_detect is None or tl[0].at <= first_detect)
        ):
            start = tl[0]
    result: dict[str, tuple[str, list[Moment]]] = {}
    interval = _interval(ctx, ms)
    if interval is not None:
        # "Between 12:17 and 12:30 UTC downloads were broken": the page states the impact window
        # itself, which outranks reading it off event cues.
        start = interval[0]
    if start is not None:
        detects = sorted(
            (m for m in events["detect"] if m.at >= start.at and m is not start), key=lambda m: m.at
        )
        resolves = sorted((m for m in events["resolve"] if m.at > start.at), key=lambda m: m.at)
        if detects and (iso := _iso(detects[0].at - start.at)) and detects[0].at - start.at <= MAX_SPAN:
            result["detected_after"] = (iso, [start, detects[0]])
        if interval is not None:
            resolves = [interval[1]]
        if resolves:
            end = resolves[-1]
            if end.at - start.at <= MAX_SPAN and (iso := _iso(end.at - start.at)):
                result["resolved_after"] = (iso, [start, end])
    span = interval[1].at - interval[0].at if interval else None
    if (
        "resolved_after" not in result
        and interval
        and span is not None
        and span <= MAX_SPAN
        and (iso := _iso(span))
    ):
        result["resolved_after"] = (iso, list(interval))
    timeline: dict[str, str | None] = {"detected_after": None, "resolved_after": None}
    for key, (iso, pair) in result.items():
        timeline[key] = iso
        quotes: list[Evidence] = []
        for m in pair:
            q = evidence(ctx.doc, m.sentence.start, m.sentence.end, m.sentence.heading)
            if all(q.start != x.start for x in quotes):
                quotes.append(q)
        found.put(f"timeline.{key}", None, quotes, confidence(0.6, method))
    for key, (delta, s, _a, _b) in _stated(ctx).items():
        if timeline.get(key) is None and (iso := _iso(delta)):
            timeline[key] = iso
            found.put(
                f"timeline.{key}",
                None,
                [evidence(ctx.doc, s.start, s.end, s.heading)],
                confidence(0.5, "rule"),
            )
    found.put("timeline", timeline)
    return found


def first_impact(ctx: Context) -> Sentence | None:
    """The sentence of the first start event in a timeline section, if the page has one."""
    ms = moments(ctx)
    events = _events(ctx, ms)
    fix = _fix_pattern()
    starts = sorted(
        (
            m
            for m in events["start"]
            if m.sentence.role == "timeline" and not fix.search(m.sentence.text.lower())
        ),
        key=lambda m: m.at,
    )
    # Order in time: what happened after the incident was noticed is the response, not the trigger.
    noticed = min((m.at for m in events["detect"] if m.sentence.role == "timeline"), default=None)
    if noticed is not None:
        starts = [m for m in starts if m.at <= noticed]
    return starts[0].sentence if starts else None


@cache
def _fix_pattern() -> Lexicon:
    return cue_pattern(cues()["timeline"].get("fix_words", []))
