"""What one fetch produced: FetchResult, its redirect hops, and how to dispose of its body."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from flows.fetch.robots import RobotsDecision

if TYPE_CHECKING:
    from flows.archive.capture import Capture

Outcome = Literal["fetched", "unchanged"]


@dataclass(frozen=True)
class Exchange:
    """One HTTP exchange as it went over the wire, for the archive: a redirect hop or a
    robots.txt fetch. `body` is the body as sent (content-encoding intact), up to a cap;
    `truncated` when the cap cut it (the record then says WARC-Truncated: length)."""

    url: str
    status: int
    reason: str
    http_version: str
    headers: list[tuple[str, str]]
    request_line: str
    request_headers: list[tuple[str, str]]
    peer: str | None
    started_at: str  # ISO 8601 UTC
    body: bytes = b""
    truncated: bool = False


@dataclass(frozen=True)
class Hop:
    """One redirect: the URL asked for, the status it answered, where it pointed; `exchange`
    is what went over the wire, archived as a response record of its own."""

    url: str
    status: int
    location: str
    exchange: Exchange | None = field(default=None, compare=False, repr=False)

    def as_dict(self) -> dict[str, object]:
        return {"url": self.url, "status": self.status, "location": self.location}


@dataclass
class FetchResult:
    """A fetched page. The raw body (as sent, content-encoding intact) is in `body_path`, a temp
    file owned by the caller: hand it to Archive.record_fetch, then call `discard()`."""

    url: str  # as requested
    final_url: str  # after redirects
    canonical_url: str  # canonicalize_url(final_url)
    rel_canonical: str | None
    status: int
    reason: str
    http_version: str
    headers: list[tuple[str, str]]
    content_type: str | None  # the Content-Type header, untouched (charset and all)
    mime: str | None  # its media type, or what sniffing found when the header was absent
    body_path: Path | None  # None for "unchanged"
    body_size: int  # wire bytes (still content-encoded)
    decoded_size: int  # after Content-Encoding, as a browser sees it
    payload_sha256: str | None  # sha256 hex of the decoded payload
    request_line: str
    request_headers: list[tuple[str, str]]
    redirects: list[Hop]
    timings: dict[str, float]
    robots: RobotsDecision | None
    outcome: Outcome
    started_at: str  # ISO 8601 UTC
    peer_address: str | None  # the IP we connected to (WARC-IP-Address)
    attempts: int = 1
    previous: Capture | None = None  # the capture a conditional request was made against
    # robots.txt exchanges first made for this fetch (they decided it may go ahead): archived
    # with it. A host's robots.txt is fetched once per Fetcher, so only its first fetch has them.
    robots_exchanges: list[Exchange] = field(default_factory=list)
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def body(self) -> bytes:
        """The raw body, read from disk; b"" when there is none."""
        return self.body_path.read_bytes() if self.body_path else b""

    def payload(self) -> bytes | None:
        """The body as the archive's reader gives it back (read_content), when that is the raw
        body itself: no content or transfer coding to undo. None otherwise: read the archive."""
        if self.body_path is None:
            return None
        coding = (self.header("content-encoding") or "identity").strip().lower()
        if coding != "identity" or self.header("transfer-encoding"):
            return None
        return self.body_path.read_bytes()

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((v for k, v in self.headers if k.lower() == lowered), None)

    def discard(self) -> None:
        """Delete the temp body file (idempotent)."""
        if self.body_path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.body_path.unlink()
