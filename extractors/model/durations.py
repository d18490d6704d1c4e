"""Durations a model proposes must be derivable from the times and durations its quotes state."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

# The longest span one incident's detection or recovery may take from clock times alone: the
# rule drafter's own bound, so a model's duration is held to the same one.
from extractors.draft.timeline import MAX_SPAN

_ISO = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$")
_DATE = re.compile(r"(\d{4})[-./년年]\s*(\d{1,2})[-./월月]\s*(\d{1,2})")
_CLOCK = re.compile(
    r"(?:(오전|오후|午前|午後)\s*)?(\d{1,2})(?::(\d{2})|\s*(?:시(?!간)|時(?!間))(?:\s*(\d{1,2})\s*[분分])?)"
    r"(?::\d{2})?\s*([aApP]\.?[mM]\.?)?"
)
_STATED = re.compile(
    r"(\d+(?:\.\d+)?)\s*(days?|hours?|hrs?|h\b|minutes?|mins?|m\b|일|시간|분|日|時間|分)",
    re.IGNORECASE,
)


def parse_iso(value: str) -> timedelta | None:
    """PT2H55M, P1DT2H; None for what the record cannot hold (years, months, weeks, nothing)."""
    m = _ISO.match(value)
    if not m or not any(m.groups()) or value.endswith("T"):
        return None
    d, h, mi, s = (int(g or 0) for g in m.groups())
    return timedelta(days=d, hours=h, minutes=mi, seconds=s)


def _clock_times(text: str) -> list[tuple[date | None, int]]:
    """(the date last stated before it, minutes since midnight) for each clock time in text."""
    dates = [(m.start(), m.end(), _safe_date(m)) for m in _DATE.finditer(text)]
    out: list[tuple[date | None, int]] = []
    for m in _CLOCK.finditer(text):
        if any(a <= m.start() < b for a, b, _ in dates):
            continue
        hour, minute = int(m[2]), int(m[3] or m[4] or 0)
        if m[3] is None and m[4] is None and not m[1] and "시" not in m[0] and "時" not in m[0]:
            continue
        half = (m[1] or m[5] or "").lower()
        if half.startswith(("p", "오후", "午後")) and hour < 12:
            hour += 12
        elif half.startswith(("a", "오전", "午前")) and hour == 12:
            hour = 0
        if hour > 24 or minute > 59:
            continue
        day = next((d for a, _, d in reversed(dates) if a < m.start()), None)
        out.append((day, hour * 60 + minute))
    return out


def _safe_date(m: re.Match[str]) -> date | None:
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def _stated(text: str) -> list[timedelta]:
    out = []
    for m in _STATED.finditer(text):
        n, unit = float(m[1]), m[2].lower()
        if unit.startswith(("d", "일", "日")):
            out.append(timedelta(days=n))
        elif unit.startswith(("h", "시간", "時間")):
            out.append(timedelta(hours=n))
        else:
            out.append(timedelta(minutes=n))
    return out


def derivable(value: str, quotes: list[str]) -> bool:
    """Whether the duration `value` is stated by the quotes, or is the gap between two clock
    times they state (dated, or on consecutive days at most MAX_SPAN apart). Exact to the minute."""
    wanted = parse_iso(value)
    if wanted is None or wanted <= timedelta(0):
        return False
    text = "\n".join(quotes)
    if wanted in _stated(text):
        return True
    # "about 3 hours" with "2 hours and 55 minutes" summed: hours and minutes stated side by side
    stated = _stated(text)
    if any(a + b == wanted for i, a in enumerate(stated) for b in stated[i + 1 :]):
        return True
    times = _clock_times(text)
    for i, (day_a, a) in enumerate(times):
        for day_b, b in times[i + 1 :]:
            if day_a and day_b:
                gap = datetime.combine(day_b, datetime.min.time()) - datetime.combine(
                    day_a, datetime.min.time()
                )
                if gap + timedelta(minutes=b - a) == wanted:
                    return True
                continue
            # undated: the later time may be on a following day
            delta = timedelta(minutes=b - a)
            while delta <= MAX_SPAN:
                if delta == wanted:
                    return True
                delta += timedelta(days=1)
    return False
