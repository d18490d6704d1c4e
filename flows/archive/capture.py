"""A capture: one archived snapshot of one URL, as the index knows it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

# response: fetched by us; revisit: fetched, payload identical to `revisit_of`; unchanged: 304;
# resource: a saved page handed to `ingest`; imported: a record from a WARC made elsewhere;
# redirect: a 3xx hop on the way to a fetched page (its own response record, as wget writes it).
Kind = Literal["response", "revisit", "unchanged", "resource", "imported", "redirect"]


@dataclass(frozen=True)
class Capture:
    """`id` is what drafts put in `sources[].archived`; `warc_file` is relative to raw/."""

    id: str
    url: str
    canonical_url: str
    captured_at: str  # ISO 8601 UTC, the WARC-Date
    status: int | None  # HTTP status; None for resource records
    mime: str | None
    payload_sha256: str | None  # sha256 hex of the decoded payload (what read_payload returns)
    payload_digest: str | None  # WARC-Payload-Digest as written (sha1 base32, over the stored bytes)
    warc_file: str
    offset: int
    length: int
    revisit_of: str | None
    kind: Kind
    record_id: str  # WARC-Record-ID
    content_type: str | None = None  # the Content-Type header as served
    etag: str | None = None
    last_modified: str | None = None
    source_path: str | None = None
    requested_url: str | None = None  # canonical form of the URL asked for, when redirects led elsewhere

    def as_dict(self) -> dict[str, object]:
        return asdict(self)
