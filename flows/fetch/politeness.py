"""Per-host politeness: one request in flight per host, a minimum interval, a global cap."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
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


def interleave(keys: Sequence[str | None]) -> list[int]:
    """The indices of `keys` round-robin across their distinct values, each value's in order.

    Fetch threads take jobs in this order. In the order given (a feed's entries, a sitemap's
    URLs) one host's sources come together, and with one request in flight per host every
    thread would queue on that host while the others sit idle: three feeds would take three
    times as long as they need."""
    queues: dict[str | None, deque[int]] = {}
    for index, key in enumerate(keys):
        queues.setdefault(key, deque()).append(index)
    order: list[int] = []
    rounds = list(queues.values())
    while rounds:
        for queue in rounds:
            order.append(queue.popleft())
        rounds = [queue for queue in rounds if queue]
    return order
