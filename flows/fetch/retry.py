"""When to retry a request and how long to wait: backoff with jitter, Retry-After."""

from __future__ import annotations

import email.utils
import random
from datetime import UTC, datetime

# Transient by definition; every other 4xx/5xx is the server's considered answer.
RETRY_STATUSES = frozenset({429, 502, 503, 504})


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    return max(0.0, (when - now).total_seconds())


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random | None = None) -> float:
    """Exponential backoff with "equal jitter": half the step is fixed, half random.

    The fixed half guarantees the wait grows with each attempt; the random half spreads out
    clients that failed together, so they do not come back in step."""
    step = min(cap, base * (2**attempt))
    return step / 2 + (rng or random).uniform(0, step / 2)
