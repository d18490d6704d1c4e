"""`archive refresh`: conditional re-fetch of archived URLs; unchanged, changed or gone."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from flows.archive.capture import Capture
from flows.archive.store import Archive
from flows.fetch.client import Fetcher
from flows.fetch.errors import SourceGone
from flows.fetch.urls import canonicalize_url
from schema.errors import FetchError, SkipSource

Result = Literal["unchanged", "changed", "gone", "failed", "skipped"]


@dataclass(frozen=True)
class Refreshed:
    url: str
    result: Result
    previous: Capture | None
    capture: Capture | None  # the new capture, for changed / unchanged
    detail: str
    first_gone_at: str | None = None

    def line(self) -> str:
        if self.result == "changed":
            was = self.previous.id if self.previous else "nothing"
            new = self.capture.id if self.capture else "?"
            return f"changed {self.url} {new} (was {was}): re-review its draft or record"
        if self.result == "gone":
            return f"gone {self.url} ({self.detail}; first seen gone {self.first_gone_at})"
        if self.result == "unchanged":
            return f"unchanged {self.url} ({self.detail})"
        return f"{self.result} {self.url}: {self.detail}"

    def as_dict(self) -> dict[str, object]:
        return {
            "url": self.url,
            "result": self.result,
            "previous": self.previous.id if self.previous else None,
            "capture": self.capture.id if self.capture else None,
            "detail": self.detail,
            "first_gone_at": self.first_gone_at,
        }


def refreshable(archive: Archive) -> list[str]:
    """Every http(s) URL with a capture, once each, canonical form."""
    urls: dict[str, None] = {}
    for capture in archive.captures():
        if capture.canonical_url.startswith(("http://", "https://")):
            urls.setdefault(capture.canonical_url, None)
    return list(urls)


def refresh(archive: Archive, fetcher: Fetcher, urls: Iterable[str]) -> Iterator[Refreshed]:
    for url in urls:
        yield refresh_one(archive, fetcher, url)


def refresh_one(archive: Archive, fetcher: Fetcher, url: str) -> Refreshed:
    canonical = canonicalize_url(url)
    previous = archive.latest(canonical)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        result = fetcher.fetch(previous.url if previous else url, conditional=previous)
    except SourceGone as exc:
        first = archive.index.record_check(canonical, now, "gone", str(exc))
        return Refreshed(url, "gone", previous, None, _gone_detail(exc), first)
    except SkipSource as exc:
        archive.index.record_check(canonical, now, "skipped", str(exc))
        return Refreshed(url, "skipped", previous, None, str(exc))
    except FetchError as exc:
        archive.index.record_check(canonical, now, "failed", str(exc))
        return Refreshed(url, "failed", previous, None, str(exc))
    try:
        capture = archive.record_fetch(result)
    finally:
        result.discard()
    if result.outcome == "unchanged":
        outcome: Result = "unchanged"
        detail = "304 Not Modified"
    elif previous is not None and capture.payload_sha256 == previous.payload_sha256:
        outcome, detail = "unchanged", "same payload"
    else:
        outcome, detail = "changed", "new payload"
    archive.index.record_check(canonical, now, outcome, detail)
    return Refreshed(url, outcome, previous, capture, detail)


def _gone_detail(exc: SourceGone) -> str:
    return f"HTTP {exc.status}" if exc.status else "host name does not resolve"
