"""Moments: every clock time of a page with its date, and the incident's events among them
(first impact, detection, recovery), read from the event cue lists."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache

from extractors.draft import negation
from extractors.draft.context import Context, Sentence, entry_heading, stamp_heading
from extractors.draft.cues import cue_pattern, cues
from extractors.draft.dates import (
    DATE_GATES,
    TIME_GATE,
    SeasonalZone,
    _dates,
    _default_zone,
    _times,
    declared_zone,
)
from extractors.draft.lexicon import Lexicon

# A change that went live (past tense or completed): with a fix word, the fix is out.
FIX_LIVE = re.compile(
    r"\b(?:deployed|released|rolled out|pushed|went live|is live|was live|live on|applied)\b"
    r"|배포(?:했|되|를 완료|완료)|적용(?:했|되)|リリースし|デプロイし|適用し|反映し"
)
# Sentences about another incident, or about what would have happened, hold no moment of this
# incident's story; a duration is not this incident's in a what-if or a plan either (WHAT_IF).
OTHER_INCIDENT = re.compile(
    r"(?i)\b(?:last (?:year|month|week)|a year ago|in the past"
    r"|(?:previous|prior|earlier|similar) (?:incident|outage|postmortem|event|issue)s?)\b"
    r"|지난해|작년|지난달|이전에도|과거에|비슷한 장애|이전 장애|적이 있"
    r"|昨年|去年|先月|以前にも|過去に|前回の(?:障害|事象|インシデント)|同様の障害"
)
COUNTERFACTUAL = re.compile(
    r"(?i)\b(?:would|could|might|should)(?: not|n't)? have\b|\b(?:would|could)'ve\b|\bhypothetical"
    r"|했다면|였다면|됐다면|していたら|可能性があ"
)
WHAT_IF = re.compile(
    r"(?i)\b(?:if|would|could|might|unless|in case|will|we'll|whether)\b"
    r"|만약|경우|할 것|예정|もし|場合|予定|なら"
)


# Sections that plan or explain rather than tell what happened: their times and durations are not
# the incident's (follow-ups: "within 24 hours we will"; background: how things normally run).
NOT_THE_STORY = frozenset({"action_items", "background"})


def _story(low: str, *, durations: bool = False) -> bool:
    """Whether a sentence may tell this incident's events (not another incident's, not a what-if);
    with `durations`, whether a duration it states may be this incident's (no plan, no condition)."""
    if OTHER_INCIDENT.search(low):
        return False
    # A timeline entry may add "it should have fired earlier": the event still happened.
    return not (durations and (COUNTERFACTUAL.search(low) or WHAT_IF.search(low)))


@dataclass(frozen=True)
class Moment:
    at: datetime  # naive: UTC when a zone was given or the page's default zone
    start: int  # offset of the time expression in Document.text
    end: int
    sentence: Sentence
    explicit_date: bool
    # How many undated day changes a reader had to guess to date this time (a step back of many
    # hours in a timeline with no dates: next morning, or days later?). Durations are measured only
    # between moments with the same count.
    guessed_days: int = 0


@cache
def _event_patterns():
    t = cues()["timeline"]
    return {k: cue_pattern(t[k]) for k in ("start", "detect", "resolve")}, cue_pattern(t["skip_start"])


@cache
def response_pattern() -> Lexicon:
    """The team's own response ("began investigating", "incident declared"): never the first impact."""
    t = cues()["timeline"]
    return cue_pattern(t["response"] + t["skip_start"])


# A time this much earlier than the previous entry of a timeline is the next day (23:16 -> 00:28);
# smaller steps back are entries out of order (14:46 then 14:44), as real timelines have.
ROLLOVER_GAP = timedelta(hours=6)
# A rollover whose step forward is longer than this (14:00 then 09:00: 19 hours) may as well cross
# two days or more: the day is a guess.
SURE_ROLLOVER = timedelta(hours=12)


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


def _published(stamp: str | None) -> date | None:
    try:
        return date.fromisoformat(stamp[:10]) if stamp else None
    except ValueError:
        return None


def _moments(ctx: Context) -> list[Moment]:
    doc = ctx.doc
    year = int(doc.published[:4]) if doc.published and doc.published[:4].isdigit() else 2000
    published = _published(doc.published)
    timed, dated = gated_sentences(ctx)
    every = [_times(s.text, []) if timed is None or i in timed else [] for i, s in enumerate(ctx.sentences)]
    # A zone the page declares for its times ("All times are in UTC"), else per section heading
    # ("Timeline (PDT)"). Times are read in the zone most explicit times name, else the declared one.
    noted = next((z for s in ctx.sentences if (z := declared_zone(s.text, note=True)) is not None), None)
    headed = {h: declared_zone(h) for h in {s.heading for s in ctx.sentences}}
    zone = _default_zone(every)
    if zone is None:
        zone = noted if noted is not None else next((z for z in headed.values() if z is not None), None)
    full: dict[tuple[int, int], date] = {}
    parsed = []
    for i, (s, plain) in enumerate(zip(ctx.sentences, every, strict=True)):
        if s.role == "skip":
            continue
        ds = _dates(s.text, year, published) if dated is None or i in dated else []
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
    guessed = 0
    for s, ds, ts in parsed:
        pos_dates = list(ds)
        if not ts:
            if pos_dates:
                current = pos_dates[-1][2]
                last = None
                guessed = 0
            continue
        prev_end = -10
        naive = headed[s.heading] if headed[s.heading] is not None else noted
        for a, b, h, mi, sec, tz in ts:
            tz = naive if tz is None else tz
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
            at = (
                base - timedelta(hours=_on(tz, day)) + timedelta(hours=_on(zone, day))
                if tz is not None
                else base
            )
            if (
                not explicit
                and last is not None
                and s.role == "timeline"
                and last_role == "timeline"
                and at < last - ROLLOVER_GAP
            ):
                at += timedelta(days=1)
                day = (day or date(year, 1, 1)) + timedelta(days=1)
                guessed += at - last > SURE_ROLLOVER
            if explicit:
                guessed = 0
            out.append(Moment(at, s.start + a, s.start + b, s, explicit, guessed))
            current, last, last_role = day if day else current, at, s.role
    return out


def _on(zone: float | None, day: date | None) -> float:
    """The offset of `zone` in hours on `day` (a season-less US zone's depends on the date)."""
    return zone.on(day) if isinstance(zone, SeasonalZone) else zone or 0


def _events(ctx: Context, ms: list[Moment]) -> dict[str, list[Moment]]:
    """The start, detect and resolve events among the moments `ms` (worked out once per page for
    the page's own moments: the timeline and the trigger both ask)."""
    memo = ctx.memo.setdefault("events", {})
    key = tuple(m.start for m in ms)
    if key not in memo:
        told = {m.sentence.start: ctx.doc.text[m.sentence.start : entry_end(ctx, m.sentence)] for m in ms}
        memo[key] = _find_events(ms, {start: text.lower() for start, text in told.items()})
    return {kind: list(found) for kind, found in memo[key].items()}


# The most sentences a time standing alone ("### 09:40", "**09:40**") dates after it.
ENTRY_SENTENCES = 4


def entry_end(ctx: Context, s: Sentence) -> int:
    """Where the event told at s's time ends. Mostly s's own end; but a timeline entry whose time
    stands alone, as a heading ("### 2021-03-04 09:40", which opens s) or a paragraph of its own
    ("**09:40**"), goes on over the untimed sentences after it, up to the next time or heading:
    "09:40 / A user reports that jobs are stuck. The on-call engineer starts investigating."."""
    ends = ctx.memo.get("entry_ends")
    if ends is None:
        ends = ctx.memo["entry_ends"] = _entry_ends(ctx)
    return int(ends.get(s.start, s.end))


def _entry_ends(ctx: Context) -> dict[int, int]:
    timed = {m.sentence.start for m in moments(ctx)}
    sentences = ctx.sentences
    ends: dict[int, int] = {}
    for i, s in enumerate(sentences):
        if s.start not in timed:
            continue
        # A time alone ("**09:40**"), or a heading that opens with one and was folded into s
        # ("### 21:00 - Team alerted" over the entry's first sentence).
        head, *rest = s.text.split("\n\n", 1)
        if not (stamp_heading(head) or rest and entry_heading(head)):
            continue
        end = s.end
        for nxt in sentences[i + 1 : i + 1 + ENTRY_SENTENCES]:
            if nxt.start in timed or nxt.heading != s.heading or nxt.role != s.role:
                break
            end = nxt.end
        ends[s.start] = end
    return ends


def _affirmed(lexicon: Lexicon, low: str) -> tuple[int, int] | None:
    """The first span of `lexicon` in `low` that is not negated ("could not be resolved", "no
    alert fired", 복구되지 않았, 復旧せず: the drafter's one negation test, negation.py)."""
    for a, b in lexicon.spans(low):
        if not negation.negated(low, a, b):
            return a, b
    return None


# A template's key line that names its event: "Start (UTC): 2023-05-09T14:02:11Z", "Detected:
# 14:20", "End time (UTC): ...", "Impact started: ...". The time on it is that event.
KEY_EVENT = re.compile(
    r"(?i)^\W*(?:(?:incident|impact|outage)\s+)?(?:(start(?:ed)?|began|begin)|(detected|detection|identified"
    r"|noticed)|(end(?:ed)?|resolved|recovered|mitigated))(?:\s+(?:time|at))?\s*(?:\([^)]{0,12}\))?\s*[:：]"
)
_KEY_KINDS = ("start", "detect", "resolve")


def _key_event(low: str) -> str | None:
    m = KEY_EVENT.match(low) if len(low) < 120 else None
    if m is None:
        return None
    return next(k for k, g in zip(_KEY_KINDS, m.groups(), strict=True) if g)


def _find_events(ms: list[Moment], told: dict[int, str]) -> dict[str, list[Moment]]:
    """`told`: the lower-cased text that tells the event at each timed sentence (entry_end)."""
    pats, skip_start = _event_patterns()
    by_sentence: dict[int, list[Moment]] = {}
    for m in ms:
        by_sentence.setdefault(m.sentence.start, []).append(m)
    events: dict[str, list[Moment]] = {"start": [], "detect": [], "resolve": []}
    for group in by_sentence.values():
        s = group[0].sentence
        low = told[s.start]
        claimed: dict[int, str] = {}
        if s.role in NOT_THE_STORY or not _story(low):
            continue
        key = _key_event(low)
        if key is not None:
            events[key].append(group[0])
            continue
        # An entry that goes on over the sentences its time heads: the event its own sentence tells
        # ("15:00 Dip noticed via grafana") outranks what the later ones add ("it appears to have
        # recovered").
        own = low[: s.end - s.start]
        if len(own) < len(low) and any(_affirmed(pats[k], own) for k in pats):
            low = own
        for kind in ("resolve", "detect", "start"):
            hit = _affirmed(pats[kind], low)
            if not hit or (kind == "start" and skip_start.search(low)):
                continue
            if kind == "start" and _fix_pattern().search(low) and FIX_LIVE.search(low):
                # "22:48 Fix deployed on production": the fix going live is the recovery, not a start.
                if "resolve" in claimed.values():
                    continue
                kind = "resolve"
            pos = s.start + hit[0]
            # The nearest time not yet another event's ("14시 5분 오류 발생 이후 14시 20분 ... 인지").
            free = [m for m in group if m.start not in claimed]
            if free:
                nearest = min(free, key=lambda m: (abs(m.start - pos), m.start < pos))
                claimed[nearest.start] = kind
                events[kind].append(nearest)
    return events


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
def _change_pattern() -> Lexicon:
    """Start cues that name a change (a deploy, a release) rather than the impact."""
    return cue_pattern(cues()["timeline"]["change"])


@cache
def _fix_pattern() -> Lexicon:
    return cue_pattern(cues()["timeline"].get("fix_words", []))
