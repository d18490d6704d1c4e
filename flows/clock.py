"""The one place flows/ reads the clock: ISO 8601 UTC timestamps as records and WARCs write them."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> str:
    """Now, as 2026-03-14T10:20:00.000000Z."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
