"""The I/O stages of one source, in this process: read or fetch it, archive it, and, once the CPU
stage (flows/drafting.py) has drafted it, queue the draft and say what became of it."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from extractors.gate import no_article_reason as gate_says_no_article
from flows.clock import utc_now
from flows.drafting import Drafted, DraftTask
from flows.jobs import Job, Outcome, Status, or_failure, unsupported
from flows.pages import read_page
from flows.settings import Settings
from flows.store import faults
from flows.store.ledger import Entry, Ledger
from flows.store.queue import QueueStore
from flows.triage import doubtful_note
from schema.errors import IngestError, InputError

if TYPE_CHECKING:
    from flows.archive.capture import Capture
    from flows.fetch import Fetcher


@dataclass(frozen=True)
class KnownUrls:
    """What the archive and the ledger knew of a batch's URLs when it started, read in a few
    queries: a re-run's 304 then asks SQLite nothing. Two queries a source had cost a fifth of a
    re-run's time, more in GIL hand-offs between fetch threads (each query lets another take it)
    than in SQLite. A URL archived by another process meanwhile is fetched without a condition
    and found a duplicate by its bytes, as before."""

    latest: dict[str, Capture | None] = field(default_factory=dict)  # every canonical URL looked up
    entries: dict[str, Entry] = field(default_factory=dict)  # those the ledger has


class Ingestor:
    """The I/O stages for one process, over one archive, one queue and one ledger. Each stage
    returns a finished Outcome or DraftTasks for the CPU stage; flows/scheduler.py runs them."""

    def __init__(self, settings: Settings, *, gate: bool = True, fetcher: Fetcher | None = None) -> None:
        """`fetcher`: one to share (the caller closes it); by default the Ingestor opens its own."""
        from flows.archive import Archive

        self.settings = settings
        self.archive = Archive(settings)
        self.queue = QueueStore(settings.queue_dir, settings.database)
        self.ledger = Ledger(settings.raw_dir / "ledger.sqlite", settings.database)
        self.gate = gate
        self._fetcher = fetcher
        self._owns_fetcher = fetcher is None
        self._fetcher_lock = threading.Lock()
        self._known_urls = KnownUrls()

    def _fetcher_once(self) -> Fetcher:
        # Locked: the fetch threads all start at once, and each would build its own client (and
        # TLS context, ~50 ms of CPU) and leak all but the last.
        with self._fetcher_lock:
            if self._fetcher is None:
                from flows.fetch import Fetcher

                self._fetcher = Fetcher(self.settings)
            return self._fetcher

    def close(self) -> None:
        if self._fetcher is not None and self._owns_fetcher:
            self._fetcher.close()
        self.archive.close()
        self.ledger.close()
        self.queue.close()

    def _known(self, job: Job, canonical: str, digest: str) -> Outcome | None:
        """`duplicate` / `unchanged` straight from the ledger, when the bytes are the ones drafted."""
        entry = self.ledger.get(canonical)
        if entry and entry.digest == digest and entry.skipped and self.gate:
            return Outcome(source=job.source, status="skipped", reason=entry.skipped, snapshot=entry.snapshot)
        if entry and entry.digest == digest and self.queue.path_for(entry.draft_id).exists():
            # Same bytes as drafted before: `duplicate`. (`unchanged` is the server's own word: a 304.)
            return Outcome(
                source=job.source,
                status="duplicate",
                draft_id=entry.draft_id,
                snapshot=entry.snapshot,
                url=canonical,
            )
        return None

    # -- the first stage: read or fetch, and archive --

    def prepare_page(self, job: Job) -> Outcome | DraftTask:
        from flows.fetch import canonicalize_url

        why = unsupported(job.source)
        if why:
            raise InputError(why)
        page = read_page(Path(job.source))
        address = job.url or page.file_url
        canonical = canonicalize_url(address) if job.url else address
        digest = "sha256:" + hashlib.sha256(page.data).hexdigest()
        known = self._known(job, canonical, digest)
        if known:
            return known
        capture = self.archive.store_resource(
            page.data, url=address, content_type=page.content_type, source_path=job.source
        )
        return DraftTask(job, page.data, address, canonical, page.content_type, capture.id, digest, utc_now())

    def look_up(self, jobs: list[Job]) -> None:
        """Read what the archive and the ledger know of these jobs' URLs, for prepare_url."""
        from flows.fetch import canonicalize_url

        urls: set[str] = set()
        for job in jobs:
            if job.kind == "url":
                try:
                    urls.add(canonicalize_url(job.source))
                except (IngestError, ValueError):
                    continue  # prepare_url reports it
        self._known_urls = KnownUrls(self.archive.latest_many(urls), self.ledger.get_many(urls))

    def prepare_url(self, job: Job) -> Outcome | DraftTask:
        from flows.fetch import canonicalize_url
        from flows.fetch.errors import SourceGone

        known = self._known_urls
        canonical = canonicalize_url(job.source)  # remembered from look_up (lru_cache)
        looked_up = canonical in known.latest
        previous = known.latest[canonical] if looked_up else self.archive.latest(canonical)
        try:
            result = self._fetcher_once().fetch(job.source, conditional=previous)
        except SourceGone as exc:
            entry = known.entries.get(canonical) if looked_up else self.ledger.get(canonical)
            if entry is None or entry.skipped:
                raise
            # A page drafted before is gone: say so, and mark its record (never delete it).
            from flows.lifecycle import mark_gone

            marked = mark_gone(self.settings, canonical, str(exc))
            return Outcome(
                source=job.source,
                status="gone",
                draft_id=entry.draft_id,
                snapshot=previous.id if previous else None,
                url=canonical,
                reason=str(exc) + (f"; {marked} marked gone" if marked else ""),
            )
        try:
            if result.outcome == "unchanged":
                entry = known.entries.get(canonical) if looked_up else self.ledger.get(canonical)
                if (
                    previous
                    and entry
                    and previous.payload_sha256
                    and entry.digest != f"sha256:{previous.payload_sha256}"
                ):
                    # A 304 for a newer capture than the one drafted (`archive refresh` took it): draft it.
                    return self.prepare_capture(job, previous)
                return Outcome(
                    source=job.source,
                    status="unchanged",
                    draft_id=entry.draft_id if entry else None,
                    snapshot=previous.id if previous else None,
                    url=canonical,
                    reason="304 Not Modified",
                )
            digest = f"sha256:{result.payload_sha256}"
            drafted_before = self._known(job, result.canonical_url, digest)
            capture = self.archive.record_fetch(result)
            if drafted_before:
                return drafted_before.model_copy(update={"snapshot": capture.id})
            # The archived payload is these very bytes; reading them back out of the WARC (its
            # gzip member, its record) cost about 0.3 ms a page.
            data = result.payload()
        finally:
            result.discard()
        if data is None:
            data = self.archive.read_payload(capture.id)
        return DraftTask(
            job,
            data,
            result.final_url,
            result.canonical_url,
            result.content_type,
            capture.id,
            digest,
            utc_now(),
        )

    def prepare_capture(self, job: Job, capture: Capture) -> DraftTask:
        """Draft an archived capture (the newest of a URL, when it is not the one last drafted)."""
        data = self.archive.read_payload(capture.id)
        digest = f"sha256:{capture.payload_sha256}"
        return DraftTask(
            job, data, capture.url, capture.canonical_url, capture.content_type, capture.id, digest, utc_now()
        )

    def prepare_warc(self, job: Job) -> list[Outcome | DraftTask]:
        prepared: list[Outcome | DraftTask] = []
        for capture in self.archive.import_warc(Path(job.source)):
            if (capture.status or 200) != 200 or not _is_page(capture.mime):
                continue
            sub = job.model_copy(update={"source": f"{job.source}#{capture.url}"})
            digest = f"sha256:{capture.payload_sha256}"
            known = self._known(sub, capture.canonical_url, digest)
            if known:
                prepared.append(known)
                continue
            data = self.archive.read_payload(capture.id)
            prepared.append(
                DraftTask(
                    sub, data, capture.url, capture.canonical_url, capture.mime, capture.id, digest, utc_now()
                )
            )
        return prepared

    def prepare(self, job: Job) -> list[Outcome | DraftTask]:
        """Run the I/O stages of one job; every failure becomes that source's outcome."""
        prepared = or_failure(job.source, lambda: self._prepare(job))
        if isinstance(prepared, Outcome):
            return [prepared]
        # The weights `incidents learn` wrote into the data directory, when there are any.
        from dataclasses import replace

        from flows.learn import active_weights_file

        weights = active_weights_file(self.settings)
        if weights is None:
            return prepared
        return [replace(t, weights=weights) if isinstance(t, DraftTask) else t for t in prepared]

    def _prepare(self, job: Job) -> list[Outcome | DraftTask]:
        if job.kind == "url":
            return [self.prepare_url(job)]
        if job.kind == "warc":
            return self.prepare_warc(job)
        return [self.prepare_page(job)]

    # -- the last stage: queue the draft and say what it was --

    def finish(self, task: DraftTask, drafted: Drafted) -> Outcome:
        draft_id = drafted.draft_id
        if drafted.skip and (self.gate or gate_says_no_article(drafted.reasons)):
            why = "not a postmortem: " + ("; ".join(drafted.reasons[:3]) or "the drafter's verdict")
            self.ledger.put(Entry(task.canonical_url, task.digest, draft_id, task.snapshot, skipped=why))
            faults.after("ledger")
            return Outcome(
                source=task.job.source, status="skipped", reason=why, snapshot=task.snapshot, url=task.url
            )
        model_line = None
        if self.settings.llm_base_url:  # model-assisted drafting (flows/model/stage.py says why here)
            from flows.model.stage import refine_drafted

            drafted, model_line = refine_drafted(task, drafted, self.settings)
        previous = self.ledger.get(task.canonical_url)
        was = None
        if previous and previous.draft_id != draft_id and self.queue.path_for(previous.draft_id).exists():
            # The source changed: the new draft targets the earlier one's record (a diff against
            # the record as approved) or the earlier draft, which it closes (flows/lifecycle.py).
            from flows.lifecycle import redraft

            draft, was = redraft(self.settings, self.queue.get(previous.draft_id), drafted.draft())
            added = self.queue.add(draft)
            if added:  # one open draft per source: the earlier pending one is superseded
                from flows.review import Reviews

                Reviews(self.settings).supersede(previous.draft_id, newer=draft_id, by="incident-ingest")
        else:
            added = self.queue.add_text(draft_id, drafted.text)
        faults.after("queued")  # the draft is in the queue, the ledger does not know it yet
        self.ledger.put(
            Entry(url=task.canonical_url, digest=task.digest, draft_id=draft_id, snapshot=task.snapshot)
        )
        faults.after("ledger")
        status: Status = "duplicate" if not added else "changed" if was else "drafted"
        return Outcome(
            source=task.job.source,
            status=status,
            reason=doubtful_note(drafted.verdict, drafted.reasons),
            draft_id=draft_id,
            snapshot=task.snapshot,
            url=task.url,
            previous=was if added else None,
            model=model_line,
        )


def _is_page(mime: str | None) -> bool:
    return bool(mime) and any(k in mime for k in ("html", "text/plain", "markdown"))  # type: ignore[operator]
