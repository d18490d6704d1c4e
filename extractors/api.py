"""The one-call library API: page bytes in, a draft (with the document it quotes) out."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime

from extractors.draft.linear import Weights
from extractors.extract import extract_document
from extractors.options import ExtractOptions
from schema.document import Document
from schema.draft import Draft


@dataclass(frozen=True)
class DraftResult:
    """A draft and the document its quotes point into (`quote == document.text[start:end]`)."""

    draft: Draft
    document: Document


def _iso(now: datetime | str) -> str:
    if isinstance(now, str):  # already ISO 8601 UTC, as flows/clock.py writes it
        return now
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def draft_page(
    data: bytes,
    *,
    url: str,
    content_type: str | None = None,
    now: datetime | str | None = None,
    snapshot: str | None = None,
    digest: str | None = None,
    language: str | None = None,
    extract_options: ExtractOptions | None = None,
    weights: Weights | None = None,
) -> DraftResult:
    """Extract and draft one page, as `incidents draft` and the ingest flow both do.

    `url` is the page's address (it names the draft and feeds org and date). `now` (a datetime,
    or an ISO 8601 UTC string) stamps the draft's history; when omitted, the current time (the
    only clock this package reads, and only at the caller's request). `snapshot` is the archive's
    capture id; `weights` the candidate scorer's fitted weights (default: the shipped ones,
    extractors/draft/data/weights.json); `digest` the snapshot's digest (default: the SHA-256 of
    `data`, so the same bytes give the same draft id); `language` a hint used only when the page
    does not say. The postmortem gate's verdict is `result.draft.postmortem`. Raises ExtractionError (an
    IngestError) when the page has no article.
    """
    from extractors.draft import DraftOptions, draft_document

    doc = extract_document(data, url=url, content_type=content_type, options=extract_options)
    if language and not doc.language:
        doc = doc.model_copy(update={"language": language})
    draft = draft_document(
        doc,
        source_url=url,
        snapshot=snapshot,
        snapshot_digest=digest or "sha256:" + hashlib.sha256(data).hexdigest(),
        now=_iso(now or datetime.now(UTC)),
        options=DraftOptions(weights=weights) if weights is not None else None,
    )
    return DraftResult(draft=draft, document=doc)
