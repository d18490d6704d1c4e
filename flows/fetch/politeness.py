"""Per-host politeness: one request in flight per host, a minimum interval, a global cap."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class _Host:
    lock: threading.Lock = field(default_factory=threading.Lock)
    next_at: float = 0.0  # time.monotonic() before which no request to this host may start


class HostGate:
    """Shared by every thread of one Fetcher.

    The interval runs start to start: with one request in flight per host, that is at most one
    request per `interval` seconds, the bound that robots.txt Crawl-delay describes. Limits hold
    within one process; several processes on one machine each keep their own."""

    def __init__(self, concurrency: int) -> None:
        self._global = threading.BoundedSemaphore(max(1, concurrency))
        self._hosts: dict[str, _Host] = {}
        self._lock = threading.Lock()

    def _host(self, key: str) -> _Host:
        with self._lock:
            return self._hosts.setdefault(key, _Host())

    @contextmanager
    def slot(self, key: str, interval: float) -> Iterator[float]:
        """Hold the host's one request slot; yields how long we waited for politeness."""
        host = self._host(key)
        started = time.monotonic()
        with host.lock:
            delay = host.next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            with self._global:
                host.next_at = time.monotonic() + interval
                yield time.monotonic() - started

    def defer(self, key: str, seconds: float) -> None:
        """Push the host's next start out, e.g. after 429 with Retry-After, for every thread."""
        host = self._host(key)
        host.next_at = max(host.next_at, time.monotonic() + seconds)
