"""A pause after the endpoint failed, so the drafts after it do not each wait out the same failure."""

from __future__ import annotations

import threading
import time


class Pause:
    """Per endpoint: until when it is not asked, and why. One per process (the ingest's); a run in
    another process finds out for itself, once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._until: dict[str, tuple[float, str]] = {}

    def reason(self, url: str) -> str | None:
        """Why `url` is not to be asked now, or None."""
        with self._lock:
            until, why = self._until.get(url, (0.0, ""))
        left = until - time.monotonic()
        return f"{why} (not asked again for {left:.0f} s)" if left > 0 else None

    def start(self, url: str, why: str, seconds: float) -> None:
        if seconds > 0:
            with self._lock:
                self._until[url] = (time.monotonic() + seconds, why)

    def clear(self, url: str) -> None:
        with self._lock:
            self._until.pop(url, None)


PAUSES = Pause()
