"""The ingest stages for one source: fetch or read -> archive -> extract -> draft -> queue."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from flows.pages import is_warc, read_page
from flows.review import utc_now
from flows.settings import Settings
from flows.store.queue import QueueStore
from schema.errors import IngestError, SkipSource

log = logging.getLogger(__name__)

Status = Literal["drafted", "duplicate", "unchanged", "changed", "skipped", "failed"]


class Outcome(BaseModel):
    """What happened to one source: exactly one status, and why when it is not `drafted`."""

    source: str
    status: Status
    reason: str | None = None
    draft_id: str | None = None
    snapshot: str | None = None
    url: str | None = None

    def line(self) -> str:
        if self.status in ("skipped", "failed"):
            return f"{self.status}  {self.source}: {self.reason}"
        return f"{self.status}  {self.draft_id}  {self.source}"


def is_url(source: str) -> bool:
    return source.lower().startswith(("http://", "https://"))


class Ingestor:
    """The stages for one process: plain functions over one archive and one queue."""

    def __init__(self, settings: Settings) -> None:
        from flows.archive import Archive

        self.settings = settings
        self.archive = Archive(settings)
        self.queue = QueueStore(settings.queue_dir)

    def draft_and_queue(
        self, data: bytes, *, source: str, url: str, content_type: str | None, snapshot: str, digest: str
    ) -> Outcome:
        from extractors import extract_document
        from extractors.draft import draft_document

        doc = extract_document(data, url=url, content_type=content_type)
        draft = draft_document(doc, source_url=url, snapshot=snapshot, snapshot_digest=digest, now=utc_now())
        status: Status = "drafted" if self.queue.add(draft) else "duplicate"
        return Outcome(source=source, status=status, draft_id=draft.draft_id, snapshot=snapshot, url=url)

    def ingest_page(self, path: Path, *, url: str | None) -> Outcome:
        page = read_page(path)
        address = url or page.file_url
        capture = self.archive.store_resource(
            page.data, url=address, content_type=page.content_type, source_path=str(path)
        )
        return self.draft_and_queue(
            page.data,
            source=str(path),
            url=address,
            content_type=page.content_type,
            snapshot=capture.id,
            digest="sha256:" + hashlib.sha256(page.data).hexdigest(),
        )

    def ingest_url(self, address: str) -> Outcome:
        from flows.fetch import Fetcher

        with Fetcher(self.settings) as fetcher:
            result = fetcher.fetch(address)
        capture = self.archive.record_fetch(result)
        data = self.archive.read_payload(capture.id)
        return self.draft_and_queue(
            data,
            source=address,
            url=result.final_url,
            content_type=result.content_type,
            snapshot=capture.id,
            digest="sha256:" + capture.payload_sha256,
        )

    def ingest_warc(self, path: Path) -> list[Outcome]:
        outcomes = []
        for capture in self.archive.import_warc(path):
            if capture.status not in (None, 200) or "html" not in (capture.mime or ""):
                continue
            outcomes.append(
                self.guard(
                    f"{path}#{capture.url}",
                    lambda c=capture: self.draft_and_queue(
                        self.archive.read_payload(c.id),
                        source=f"{path}#{c.url}",
                        url=c.url,
                        content_type=c.mime,
                        snapshot=c.id,
                        digest="sha256:" + c.payload_sha256,
                    ),
                )
            )
        return outcomes

    def guard(self, source: str, stage) -> Outcome:  # type: ignore[no-untyped-def]
        """Run one source's stages; whatever goes wrong becomes its outcome, never the run's."""
        try:
            return stage()
        except SkipSource as exc:
            return Outcome(source=source, status="skipped", reason=str(exc))
        except IngestError as exc:
            return Outcome(source=source, status="failed", reason=str(exc))
        except Exception as exc:  # a bug must not stop the other sources; the reason names it
            log.exception("unexpected error on %s", source)
            return Outcome(
                source=source, status="failed", reason=f"internal error: {type(exc).__name__}: {exc}"
            )

    def ingest(self, source: str, *, url: str | None = None) -> list[Outcome]:
        if is_url(source):
            return [self.guard(source, lambda: self.ingest_url(source))]
        path = Path(source)
        if is_warc(path):
            try:
                return self.ingest_warc(path)
            except IngestError as exc:
                return [Outcome(source=source, status="failed", reason=str(exc))]
        return [self.guard(source, lambda: self.ingest_page(path, url=url))]


def ingest_sources(sources: list[str], *, settings: Settings, url: str | None = None) -> list[Outcome]:
    """The plain function behind the flow: every source, in order, one outcome (or more) each."""
    ingestor = Ingestor(settings)
    outcomes: list[Outcome] = []
    for source in sources:
        outcomes += ingestor.ingest(source, url=url)
    return outcomes
