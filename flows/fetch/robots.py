"""robots.txt through protego: fetched once per host and cached, with Crawl-delay."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from protego import Protego

from flows.fetch.urls import host_key, path_of

# robots.txt larger than this is cut, as RFC 9309 allows (it asks crawlers to read at least 500 KiB).
ROBOTS_MAX_BYTES = 512 * 1024


@dataclass(frozen=True)
class RobotsDecision:
    """What robots.txt said about one URL, kept in the capture's metadata record."""

    robots_url: str
    allowed: bool
    crawl_delay: float | None
    reason: str  # e.g. "allowed by robots.txt", "no robots.txt (HTTP 404)"

    def as_dict(self) -> dict[str, object]:
        return {
            "robots_url": self.robots_url,
            "allowed": self.allowed,
            "crawl_delay": self.crawl_delay,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class _Rules:
    parser: Protego | None  # None: no rules apply
    allow_all: bool
    note: str


# robots_url -> (status, body); raises FetchError when the host cannot be reached at all.
RobotsLoader = Callable[[str], tuple[int, bytes]]


class RobotsCache:
    """One parsed robots.txt per scheme://host:port, for the life of the Fetcher."""

    def __init__(self, loader: RobotsLoader, user_agent: str) -> None:
        self._load = loader
        self._agent = user_agent.split("/")[0]
        self._rules: dict[str, _Rules] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def _rules_for(self, key: str) -> _Rules:
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # one fetch per host even when many threads ask at once
            if key not in self._rules:
                self._rules[key] = self._fetch(key)
            return self._rules[key]

    def _fetch(self, key: str) -> _Rules:
        status, body = self._load(f"{key}/robots.txt")
        if 200 <= status < 300:
            text = body[:ROBOTS_MAX_BYTES].decode("utf-8", "replace")
            return _Rules(Protego.parse(text), False, "robots.txt")
        if 400 <= status < 500:
            # RFC 9309 2.3.1.3: an unavailable robots.txt means no restrictions.
            return _Rules(None, True, f"no robots.txt (HTTP {status})")
        # RFC 9309 2.3.1.4: an unreachable robots.txt (5xx) means complete disallow.
        return _Rules(None, False, f"robots.txt unreachable (HTTP {status}), so everything is disallowed")

    def decide(self, url: str) -> RobotsDecision:
        key = host_key(url)
        robots_url = f"{key}/robots.txt"
        rules = self._rules_for(key)
        if rules.parser is None:
            return RobotsDecision(robots_url, rules.allow_all, None, rules.note)
        allowed = rules.parser.can_fetch(url, self._agent)
        delay = rules.parser.crawl_delay(self._agent)
        reason = "allowed by robots.txt" if allowed else f"robots.txt disallows {path_of(url)}"
        return RobotsDecision(robots_url, bool(allowed), float(delay) if delay else None, reason)
