"""The timeline drafter: detected_after and resolved_after from the first impact, each with the
quotes it rests on; null when the page does not fix them. Clock times: dates.py; events: moments.py."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import timedelta

from extractors.draft import linear
from extractors.draft.candidates import Candidate
from extractors.draft.context import Context, Sentence
from extractors.draft.dates import _CJK_UNIT, _DIGIT, _dates
from extractors.draft.evidence import Found, confidence, evidence
from extractors.draft.linear import Weights, score
from extractors.draft.moments import (
    NOT_THE_STORY,
    Moment,
    _change_pattern,
    _events,
    _fix_pattern,
    _story,
    entry_end,
    first_impact,
    gated_sentences,
    moments,
    response_pattern,
)
from schema.draft import Evidence

__all__ = ["draft_timeline", "first_impact", "gated_sentences", "moments", "_dates"]

_NUM = r"(\d+(?:\.\d+)?)"
DURATION_EN = re.compile(
    rf"(?i)(?<![\d\-–~])(?:about|approximately|around|roughly|nearly|almost|over|~)?\s*{_NUM}\s*(hours?|hrs?|h|minutes?|mins?|days?)\b(?:\s*(?:and\s*)?{_NUM}\s*(minutes?|mins?|m\b))?"
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
# "... after we started investigating": the clock starts with the team, not the impact.
RESPONDERS = re.compile(r"(?i)\b(?:we|us|our|the team|engineers?|on-?call|investigat\w*|respond\w*)\b")
UNNOTICED_EN = re.compile(
    r"(?i)\b(?:went|go|gone|remained|was|were|stayed|been)\s+(?:unnoticed|undetected)\s+for\s+(?:an?\s+)?$"
)
# "it took us 40 minutes to notice", "it took 1 hour and 31 minutes from the start of the incident
# to the deploy of the fix".
TOOK_EN = re.compile(r"(?i)\btook\s+(?:us\s+|them\s+|the team\s+|our team\s+)?(?:an?\s+)?$")
TO_NOTICE_EN = re.compile(
    r"(?i)\s*(?:for (?:us|them|anyone) )?to "
    r"(?:notice|detect|discover|become aware|be alerted|realise|realize)\b"
)
FROM_START_TO_FIX_EN = re.compile(
    r"(?i)\s*from the (?:start|beginning|onset) of the (?:incident|outage|impact|problem|issue|errors)\s+"
    r"(?:to|until)\s+(?:the\s+)?"
    r"(?:deploy(?:ment)? of the fix|fix|recovery|resolution|mitigation|restor\w*|resolv\w*)"
)
DETECT_EN = re.compile(
    r"(?i)\b(?:paged|alerted|detected|noticed|became aware|identified|discovered|notified)\b"
)
RESOLVE_EN = re.compile(r"(?i)\b(?:resolved|restored|recovered|mitigated|fixed|back online|back to normal)\b")
CJK_RESOLVE_HEAD = re.compile(r"(?:복구|해결|정상화|復旧|解消|回復)(?:까지|하는 데|되기까지|まで|までに)\s*$")
CJK_RESOLVE_TAIL = re.compile(
    r"^\s*(?:동안|간|지속|にわたり|にわたって|の間|停止|ダウン|中断|発生し|継続|続き|続い)"
)
# "장애 발생 15분 후 알림으로 인지했습니다", "障害発生から15分後にアラートで検知しました": a duration
# after the start, then the detection in the same sentence.
CJK_AFTER = re.compile(r"^\s*(?:후|뒤|만에|後|あと|で)")
CJK_FROM_START = re.compile(r"(?:발생|시작|発生|開始)\s*(?:から|부터|이후)?\s*$")
CJK_DETECT_LATER = re.compile(r"감지|인지|발견|알림|알람|検知|発見|気づ|アラート|通知")
CJK_DETECT = re.compile(r"(감지|인지|발견)(?:하기)?(까지|하는 데)|(検知|発見|気づ[くい])(?:する)?まで")


def _iso(delta: timedelta, *, zero: bool = False) -> str | None:
    """ISO 8601 in hours and minutes, the library's style (PT54H10M rather than P2DT6H10M); with
    `zero`, no time at all is "PT0S" (detected at the moment of impact), else None."""
    secs = int(round(delta.total_seconds()))
    if secs == 0 and zero:
        return "PT0S"
    if secs <= 0:
        return None
    h, rest = divmod(secs, 3600)
    mi, s = divmod(rest, 60)
    return "PT" + (f"{h}H" if h else "") + (f"{mi}M" if mi else "") + (f"{s}S" if s else "")


# Durations longer than this are not one incident's detection or recovery on a timeline of clock
# times (a month-long gap means two stories); longer stated durations still pass, and so do spans
# between two times that each carry their full date (an intrusion found 58 days after it began).
MAX_SPAN = timedelta(days=14)
MAX_DATED_SPAN = timedelta(days=3 * 366)


def _own_part(ctx: Context, m: Moment, ms: list[Moment]) -> str:
    """The lower-cased part of m's sentence that tells m: from the time before it in the sentence
    to the time after it ("14시 5분 오류 발생 이후 14시 20분 ... 15시에 복구": the fix is 15시's)."""
    s = m.sentence
    before = max((n.end for n in ms if n.sentence is s and n.end <= m.start), default=s.start)
    after = min((n.start for n in ms if n.sentence is s and n.start >= m.end), default=entry_end(ctx, s))
    return ctx.doc.text[before:after].lower()


def _fixed(a: Moment, b: Moment) -> bool:
    """Whether the page fixes the span from a to b: one incident's length, and no guessed day between."""
    longest = MAX_DATED_SPAN if a.explicit_date and b.explicit_date else MAX_SPAN
    return b.at - a.at <= longest and a.guessed_days == b.guessed_days


def _interval(ctx: Context, ms: list[Moment]) -> tuple[Moment, Moment] | None:
    """'Between 21:27 UTC and 07:27 UTC ... were running with expired certificates'."""
    for i, m in enumerate(ms[:-1]):
        n = ms[i + 1]
        if m.sentence is not n.sentence:
            continue
        low = m.sentence.text.lower()
        if m.sentence.role in NOT_THE_STORY or not _story(low, durations=True):
            continue  # "between 10:00 and 11:00 the service will be unavailable": a plan
        gap = ctx.doc.text[m.end : n.start].lower()
        opens = re.search(r"\bbetween\b|\bfrom\b|부터|から", low[: m.start - m.sentence.start + 1] + gap)
        closes = re.search(r"\band\b|\bto\b|\buntil\b|~|–|-|까지|まで", gap)
        if opens and closes and (IMPACT_WORDS.search(low) or re.search(r"running with|expired", low)):
            return m, n
    return None


# Where a clause ends: a duration belongs to the clause it stands in.
CLAUSE_END = re.compile(
    r"(?i)[;:,.()、，。；：]|\s(?:but|which|while|before|after|when|because|so|until|and then)\s"
)
# Work, not impact: "we spent 2 days reproducing the failure", "the failed job was retried for 2 hours".
ACTIVITY = re.compile(
    r"(?i)\b(?:spent|spend|took|takes|investigat\w*|debugg\w*|reproduc\w*|work(?:ed|ing)?\s+on|writ\w+"
    r"|migrat\w*|tried|trying|retr(?:y|ied|ies|ying)|ran|runs|wait\w*|monitor\w*|watch\w*)\b"
)

# The same in Korean and Japanese: meetings, investigation, analysis, work, migration, writing.
ACTIVITY_CJK = re.compile(
    r"회의|논의|조사|분석|작업|마이그레이션|작성|검토|대응|会議|議論|調査|分析|作業|移行|作成|検討|対応"
)


def _impact_lasted(text: str, m: re.Match[str]) -> bool:
    """Whether the clause of the duration `m` says the impact lasted it ("the API was down for 2
    hours"), not some work or something else ("we monitored for 2 hours", "under load for 2 hours")."""
    ends = [x.end() for x in CLAUSE_END.finditer(text, 0, m.start())]
    after = CLAUSE_END.search(text, m.end())
    clause = text[(ends[-1] if ends else 0) : after.start() if after else len(text)]
    return (
        bool(IMPACT_WORDS.search(clause)) and not ACTIVITY.search(clause) and not ACTIVITY_CJK.search(clause)
    )


# "Time to repair: 5h", "time to detect": measured from something other than the first impact.
TIME_TO = re.compile(r"(?i)time to (?:repair|resolve|recover|detect)")


def _stated(ctx: Context) -> dict[str, tuple[timedelta, Sentence, int, int]]:
    """Durations a sentence states for recovery or detection."""
    out: dict[str, tuple[timedelta, Sentence, int, int]] = {}
    for s in ctx.sentences:
        if s.role == "skip" or s.role in NOT_THE_STORY or not _DIGIT.search(s.text):
            continue
        if not _story(s.text.lower(), durations=True) or TIME_TO.search(s.text):
            continue  # judged first: finding durations costs more than these tests
        for key, delta, a, b in _durations_in(s.text):
            out.setdefault(key, (delta, s, a, b))
    return out


def _durations_in(text: str) -> list[tuple[str, timedelta, int, int]]:
    """The recovery and detection durations `text` states: (key, length, start, end)."""
    if (lasted := _key_duration(text)) is not None:
        return [("resolved_after", lasted, 0, len(text))]
    found = [(key, _delta_en(m), m.start(), m.end()) for key, m in _stated_en(text)]
    # DURATION_CJK can match empty text, so finditer stops at every character: look only in
    # sentences with a unit it needs (one of 日 일 時 시 分 분), as every match we keep has one.
    if _CJK_UNIT.search(text):
        for key, m in _stated_cjk(text):
            delta = timedelta(days=int(m[1] or 0), hours=int(m[2] or 0), minutes=int(m[3] or 0))
            found.append((key, delta, m.start(), m.end()))
    return found


# A template's field that is the impact's length and nothing else: "Duration: 2h 15m", "Total
# downtime: 47 minutes", "장애 시간: 약 2시간", "影響時間：約3時間".
KEY_DURATION = re.compile(
    r"(?i)^\W*(?:total\s+)?(?:duration|downtime|(?:outage|impact|incident)\s+duration|duration of (?:the )?"
    r"(?:outage|impact|incident)|장애\s?(?:지속\s?)?시간|영향\s?시간|다운타임|影響時間|障害時間|停止時間|ダウンタイム)"
    r"\W*[:：]\s*(?:about|approximately|approx\.?|around|roughly|~|약|約|およそ)?\s*"
    r"(?:(\d+)\s*(?:days?|d|일|日)\s*)?(?:(\d+)\s*(?:hours?|hrs?|h|시간|時間)\s*)?(?:(\d+)\s*(?:minutes?|mins?|m|분|分))?"
    r"\s*(?:\([^)]*\))?\W*$"
)


def _key_duration(text: str) -> timedelta | None:
    m = KEY_DURATION.match(text) if len(text) < 80 else None
    if not m or not (m[1] or m[2] or m[3]):
        return None
    return timedelta(days=int(m[1] or 0), hours=int(m[2] or 0), minutes=int(m[3] or 0))


def _delta_en(m: re.Match[str]) -> timedelta:
    n, unit = float(m[1]), m[2].lower()
    delta = (
        timedelta(days=n)
        if unit.startswith("d")
        else timedelta(hours=n)
        if unit.startswith("h")
        else timedelta(minutes=n)
    )
    return delta + timedelta(minutes=float(m[3])) if m[3] else delta


def _stated_en(text: str) -> list[tuple[str, re.Match[str]]]:
    """The English durations of a sentence that say how long after the first impact it was detected
    or resolved: "paged 12 minutes after the errors began", "went unnoticed for 2 hours", "it took
    us 40 minutes to notice", "the API was down for 3 hours"."""
    found = []
    for m in DURATION_EN.finditer(text):
        # The match may open with the space before the number: "for" must still end the head.
        head = text[: m.start()].rstrip() + " "
        rest = text[m.end() :]
        after = AFTER_START_EN.match(rest)
        if after and RESPONDERS.search(after.group()):
            after = None  # "2 hours after we started investigating": not from the first impact
        if (
            after
            and DETECT_EN.search(head)
            or UNNOTICED_EN.search(head[-40:])
            or (TOOK_EN.search(head[-30:]) and TO_NOTICE_EN.match(rest))
        ):
            found.append(("detected_after", m))
        elif (
            after
            and RESOLVE_EN.search(head)
            or LASTED_EN.search(head[-40:])
            and _impact_lasted(text, m)
            or TOOK_EN.search(head[-30:])
            and FROM_START_TO_FIX_EN.match(rest)
        ):
            found.append(("resolved_after", m))
    return found


def _stated_cjk(text: str) -> list[tuple[str, re.Match[str]]]:
    """The same in Korean and Japanese: "장애 발생 15분 후 알림으로 인지", "복구까지 3시간",
    "約2時間にわたり停止"."""
    found = []
    for m in DURATION_CJK.finditer(text):
        if not (m[1] or m[2] or m[3]) or m.end() - m.start() < 2:
            continue
        tail = text[m.end() : m.end() + 12]
        head = text[max(0, m.start() - 12) : m.start()]
        if CJK_DETECT.search(head + tail) or (
            CJK_AFTER.match(tail) and CJK_FROM_START.search(head) and CJK_DETECT_LATER.search(text[m.end() :])
        ):
            found.append(("detected_after", m))
        elif (
            CJK_RESOLVE_HEAD.search(head)
            and IMPACT_WORDS.search(text)
            or (CJK_RESOLVE_TAIL.search(tail) and _impact_lasted(text, m))
        ):
            found.append(("resolved_after", m))
    return found


def _rules(
    ctx: Context, ms: list[Moment], events: dict[str, list[Moment]]
) -> tuple[Moment | None, tuple[Moment, Moment] | None, dict[str, tuple[str, list[Moment]]]]:
    """The rules' first impact, stated window, and (detected_after, resolved_after) pairs."""
    # A deploy of the fix is not the first impact; and the first impact precedes any detection.
    fix = _fix_pattern()
    starts = sorted((m for m in events["start"] if not fix.search(_own_part(ctx, m, ms))), key=lambda m: m.at)
    first_detect = min((m.at for m in events["detect"]), default=None)
    if first_detect is not None:
        starts = [m for m in starts if m.at <= first_detect]
    # The impact itself ("errors began") outranks the change that caused it ("deployed"), which may
    # have gone out long before the impact began.
    change = _change_pattern()
    impact = [m for m in starts if not change.search(m.sentence.text.lower())]
    start = impact[0] if impact else starts[0] if starts else None
    if start is None:
        # A timeline section whose first entry is neither detection nor recovery opens with the
        # first impact (or the change that caused it).
        tl = [m for m in ms if m.sentence.role == "timeline"]
        claimed = {m.start for k in ("detect", "resolve") for m in events[k]}
        if (
            tl
            and tl[0].start not in claimed
            and not response_pattern().search(tl[0].sentence.text.lower())
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
        if (
            detects
            and (iso := _iso(detects[0].at - start.at, zero=detects[0].sentence is not start.sentence))
            and _fixed(start, detects[0])
        ):
            result["detected_after"] = (iso, [start, detects[0]])
        if interval is not None:
            resolves = [interval[1]]
        if resolves:
            end = resolves[-1]
            if _fixed(start, end) and (iso := _iso(end.at - start.at)):
                result["resolved_after"] = (iso, [start, end])
    if (
        "resolved_after" not in result
        and interval
        and _fixed(*interval)
        and (iso := _iso(interval[1].at - interval[0].at))
    ):
        result["resolved_after"] = (iso, list(interval))
    return start, interval, result


@dataclass
class Proposal:
    """One value a timeline key may take: the candidate (its value as `term`, its features), the
    quotes it rests on and the confidence the draft records."""

    candidate: Candidate
    quotes: list[Evidence]
    confidence: float


# The most first-impact moments paired with each detection or recovery as candidates.
MAX_STARTS = 4


def proposals(ctx: Context) -> dict[str, list[Proposal]]:
    """Every value the page's stated times support for each timeline key, the rules' own first,
    each with the features of linear.TIMELINE_FEATURES (worked out once per page)."""
    if "timeline_proposals" in ctx.memo:
        return dict(ctx.memo["timeline_proposals"])
    ms = moments(ctx)
    events = _events(ctx, ms)
    rule_start, interval, result = _rules(ctx, ms, events)
    stated = _stated(ctx)
    fix, change = _fix_pattern(), _change_pattern()
    timeline_ms = [m for m in ms if m.sentence.role == "timeline"]
    first_entry = timeline_ms[0] if timeline_ms else None
    start_events = sorted(
        (m for m in events["start"] if not fix.search(_own_part(ctx, m, ms))), key=lambda m: (m.at, m.start)
    )
    starts: list[Moment] = []
    for m in [*([rule_start] if rule_start else []), *start_events, *([first_entry] if first_entry else [])]:
        if all(m is not n for n in starts):
            starts.append(m)
    starts = starts[:MAX_STARTS]
    start_ids = {m.start for m in events["start"]}
    n_starts = round(math.log1p(len(start_events)), 6)

    def quotes_of(pair: list[Moment]) -> list[Evidence]:
        out: list[Evidence] = []
        for m in pair:
            q = evidence(ctx.doc, m.sentence.start, entry_end(ctx, m.sentence), m.sentence.heading)
            if all(q.start != x.start for x in out):
                out.append(q)
        return out

    out: dict[str, list[Proposal]] = {}
    for key, kind in (("detected_after", "detect"), ("resolved_after", "resolve")):
        props: list[Proposal] = []
        seen: set[str] = set()

        rule = result.get(key)
        rule_iso = rule[0] if rule else None
        if rule is None and key in stated and (iso := _iso(stated[key][0])):
            rule_iso = iso
        ends = sorted(events[kind], key=lambda m: (m.at, m.start))
        if key == "resolved_after" and interval is not None:
            ends = sorted([*ends, interval[1]], key=lambda m: (m.at, m.start))
        if key in stated and (iso := _iso(stated[key][0])) and rule is None:
            _add(props, seen, _stated_proposal(ctx, stated[key], iso, rule_iso, n_starts))
        pairs: list[tuple[Moment, Moment]] = []
        if rule is not None:
            pairs.append((rule[1][0], rule[1][-1]))
        for a in starts:
            later = [e for e in ends if e is not a and (e.at >= a.at if kind == "detect" else e.at > a.at)]
            for e in later:
                pairs.append((a, e))
        for a, e in pairs:
            if not _fixed(a, e):
                continue
            iso = _iso(e.at - a.at, zero=kind == "detect" and e.sentence is not a.sentence)
            if iso is None:
                continue
            later = [x for x in ends if x is not a and x.at >= a.at]
            span = (e.at - a.at).total_seconds()
            f = {
                "rule": float(iso == rule_iso),
                "start_event": float(a.start in start_ids),
                "start_change": float(bool(change.search(a.sentence.text.lower()))),
                "start_first": float(a is first_entry),
                "start_interval": float(interval is not None and a is interval[0]),
                "start_timeline": float(a.sentence.role == "timeline"),
                "end_timeline": float(e.sentence.role == "timeline"),
                "end_first": float(bool(later) and e is later[0]),
                "end_last": float(bool(later) and e is later[-1]),
                "same_sentence": float(a.sentence is e.sentence),
                "both_dated": float(a.explicit_date and e.explicit_date),
                "days": round(math.log1p(span / 86400), 6),
                "hours": round(math.log1p(span / 3600), 6),
                "zero": float(span == 0),
                "starts": n_starts,
            }
            cand = Candidate(iso, f["rule"], {k: v for k, v in f.items() if v})
            _add(props, seen, Proposal(cand, quotes_of([a, e]), 0.6))
        if key in stated and (iso := _iso(stated[key][0])):
            _add(props, seen, _stated_proposal(ctx, stated[key], iso, rule_iso, n_starts))
        # The rules' value first (ties keep the rules' choice), then the others as found.
        props.sort(key=lambda p: -p.candidate.rule_value)
        out[key] = props
    ctx.memo["timeline_proposals"] = out
    return dict(out)


def _add(props: list[Proposal], seen: set[str], p: Proposal) -> None:
    """`p` unless a proposal of the same value came first."""
    if p.candidate.term not in seen:
        seen.add(p.candidate.term)
        props.append(p)


def _stated_proposal(
    ctx: Context, stated: tuple[timedelta, Sentence, int, int], iso: str, rule_iso: str | None, n: float
) -> Proposal:
    delta, sent, _a, _b = stated
    hours = delta.total_seconds() / 3600
    f = {
        "rule": float(iso == rule_iso),
        "stated": 1.0,
        "days": round(math.log1p(hours / 24), 6),
        "hours": round(math.log1p(hours), 6),
        "starts": n,
    }
    cand = Candidate(iso, f["rule"], {k: v for k, v in f.items() if v})
    return Proposal(cand, [evidence(ctx.doc, sent.start, sent.end, sent.heading)], 0.5)


def draft_timeline(ctx: Context, weights: Weights | None = None) -> Found:
    """Each key's best proposal by the fitted model of `weights` (the shipped ones when None) when
    its probability reaches the model's threshold; a key without a fitted model takes the rules'
    value. Null when nothing is fixed."""
    found = Found()
    models = (weights or linear.shipped()).text.timeline
    timeline: dict[str, str | None] = {"detected_after": None, "resolved_after": None}
    for key, props in proposals(ctx).items():
        model = models.get(key)  # type: ignore[call-overload]
        if model is None:
            chosen = next((p for p in props if p.candidate.rule_value), None)
        else:
            for p in props:
                p.candidate.p = score(p.candidate.features, model)
            ranked = sorted(props, key=lambda p: -p.candidate.p)
            chosen = ranked[0] if ranked and ranked[0].candidate.p >= model.threshold else None
        if chosen is None:
            continue
        timeline[key] = chosen.candidate.term
        found.put(f"timeline.{key}", None, chosen.quotes, confidence(chosen.confidence, "rule"))
    found.put("timeline", timeline)
    return found
