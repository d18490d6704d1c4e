"""The ingest stages: fetch or read -> archive -> extract + draft (CPU, in worker processes) -> queue.

Each source ends as exactly one Outcome. I/O (fetch, archive, queue) runs in this process, in
threads; extraction and drafting, the CPU work, run in a process pool when there is enough of it.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import logging
import threading
from collections.abc import Callable, Iterable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from queue import SimpleQueue
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from flows.clock import utc_now
from flows.deadline import run_limited
from flows.pages import is_warc, read_page
from flows.pool import PageTakenBack
from flows.settings import Settings
from flows.store.audit import field_diff
from flows.store.ledger import Entry, Ledger
from flows.store.queue import QueueStore, draft_text
from schema.draft import Confidence, Draft
from schema.errors import IngestError, SkipSource

if TYPE_CHECKING:
    from flows.archive.capture import Capture
    from flows.fetch import Fetcher

log = logging.getLogger(__name__)

Status = Literal["drafted", "duplicate", "unchanged", "changed", "skipped", "failed"]
JobKind = Literal["url", "page", "warc"]
# Below this many drafts the pool's warm-up (about 1.5 s of CPU, once per process; flows/pool.py)
# costs more than it saves.
POOL_THRESHOLD = 8
# Fetched pages that may wait for an extraction worker (see Ingestor.run): enough to keep the
# workers busy between fetches.
DRAFTS_AHEAD = 16


class Job(BaseModel):
    """One source to ingest, with the curator's per-source options."""

    model_config = ConfigDict(frozen=True)

    source: str
    kind: JobKind
    url: str | None = None  # the web address of a saved page
    group: str | None = None
    language: str | None = None
    org: str | None = None
    title: str | None = None  # from the feed or index page that listed it


class Outcome(BaseModel):
    """What happened to one source: exactly one status, and why when it is not `drafted`."""

    source: str
    status: Status
    reason: str | None = None
    draft_id: str | None = None
    snapshot: str | None = None
    url: str | None = None
    previous: str | None = None  # for `changed`: the earlier draft or record
    model: str | None = Field(default=None, exclude_if=lambda v: v is None)  # model tokens, time, notes

    def line(self) -> str:
        if self.status in ("skipped", "failed") or not self.draft_id:
            # no draft to name (e.g. `unchanged` for a page skipped before): say why instead
            why = f": {self.reason}" if self.reason else ""
            return f"{self.status}  {self.source}{why}"
        extra = f"  (was {self.previous})" if self.previous else ""
        return f"{self.status}  {self.draft_id}  {self.source}{extra}"


def is_url(source: str) -> bool:
    return source.lower().startswith(("http://", "https://"))


def job_for(source: str, *, url: str | None = None) -> Job:
    if is_url(source):
        return Job(source=source, kind="url")
    if is_warc(Path(source)):
        return Job(source=source, kind="warc")
    return Job(source=source, kind="page", url=url)


@dataclass(frozen=True)
class DraftTask:
    """Everything the CPU stage needs; picklable, so it can cross into a worker process."""

    job: Job
    data: bytes
    url: str
    canonical_url: str
    content_type: str | None
    snapshot: str | None
    digest: str
    now: str


@dataclass(frozen=True)
class Drafted:
    """A draft as a worker hands it back: the text of its queue file, written in the worker, and
    what the last stage decides on. Pickling a Draft back and dumping it here cost this process
    about 0.3 ms a page; a string crosses for almost nothing."""

    draft_id: str
    verdict: bool
    reasons: tuple[str, ...]
    text: str

    @classmethod
    def of(cls, draft: Draft) -> Drafted:
        return cls(
            draft.draft_id, draft.postmortem.verdict, tuple(draft.postmortem.reasons), draft_text(draft)
        )

    def draft(self) -> Draft:
        return Draft.model_validate_json(self.text)


def draft_for_queue(task: DraftTask, limit: float = 0.0) -> Drafted:
    """draft_payload, ready for the queue (what a worker process runs), in at most `limit`
    seconds where a limit can be kept (flows/deadline.py)."""
    return run_limited(lambda: Drafted.of(draft_payload(task)), limit, "extracting and drafting this page")


def draft_payload(task: DraftTask) -> Draft:
    """Extract and draft one payload: the pure CPU stage (runs in a worker process)."""
    from extractors import extract_document
    from extractors.draft import draft_document

    doc = extract_document(task.data, url=task.url, content_type=task.content_type)
    if task.job.language and not doc.language:
        # The curator's hint from sources.toml, only where the page itself did not tell.
        doc = doc.model_copy(update={"language": task.job.language})
    draft = draft_document(
        doc, source_url=task.url, snapshot=task.snapshot, snapshot_digest=task.digest, now=task.now
    )
    if task.job.org:
        draft = _override_org(draft, task.job.org)
    return draft


def _override_org(draft: Draft, org: str) -> Draft:
    from extractors.draft.identity import slugify

    slug = slugify(org) or None
    record = draft.record.model_copy(update={"org": org, "org_slug": slug})
    # The curator's word, from sources.toml: no quote to show, so say where it came from, and
    # drop the drafter's quotes for the name it had found instead.
    confidence = {k: v for k, v in draft.confidence.items() if k not in ("org", "org_slug")}
    confidence["org"] = Confidence(value=1.0, method="curator")
    evidence = {k: v for k, v in draft.evidence.items() if k not in ("org", "org_slug")}
    return draft.model_copy(update={"record": record, "confidence": confidence, "evidence": evidence})


class Ingestor:
    """The stages for one process, over one archive, one queue and one ledger."""

    def __init__(
        self,
        settings: Settings,
        *,
        pool: cf.Executor | None = None,
        gate: bool = True,
        fetcher: Fetcher | None = None,
    ) -> None:
        """`fetcher`: one to share (the caller closes it); by default the Ingestor opens its own."""
        from flows.archive import Archive

        self.settings = settings
        self.archive = Archive(settings)
        self.queue = QueueStore(settings.queue_dir)
        self.ledger = Ledger(settings.raw_dir / "ledger.sqlite")
        self.pool = pool
        self.gate = gate
        self._fetcher = fetcher
        self._owns_fetcher = fetcher is None
        self._fetcher_lock = threading.Lock()
        self._known_urls = KnownUrls()

    # -- the I/O stages: each returns a finished Outcome or DraftTasks for the CPU stage --

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

    def prepare_page(self, job: Job) -> Outcome | DraftTask:
        from flows.fetch import canonicalize_url

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

        known = self._known_urls
        canonical = canonicalize_url(job.source)  # remembered from look_up (lru_cache)
        looked_up = canonical in known.latest
        previous = known.latest[canonical] if looked_up else self.archive.latest(canonical)
        result = self._fetcher_once().fetch(job.source, conditional=previous)
        try:
            if result.outcome == "unchanged":
                entry = known.entries.get(canonical) if looked_up else self.ledger.get(canonical)
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
        try:
            if job.kind == "url":
                return [self.prepare_url(job)]
            if job.kind == "warc":
                return self.prepare_warc(job)
            return [self.prepare_page(job)]
        except Exception as exc:
            return [failure(job.source, exc)]

    # -- the last stage: queue the draft and say what it was --

    def finish(self, task: DraftTask, drafted: Drafted) -> Outcome:
        draft_id = drafted.draft_id
        if self.gate and not drafted.verdict:
            why = "not a postmortem: " + ("; ".join(drafted.reasons[:3]) or "the drafter's verdict")
            self.ledger.put(Entry(task.canonical_url, task.digest, draft_id, task.snapshot, skipped=why))
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
            # The source changed: the new draft links the earlier one and shows what changed.
            draft = drafted.draft()
            earlier = self.queue.get(previous.draft_id)
            was = next((h.record_id for h in earlier.history if h.record_id), None) or earlier.draft_id
            draft = draft.model_copy(
                update={
                    "supersedes": was,
                    "changes": field_diff(
                        earlier.record.model_dump(mode="json"), draft.record.model_dump(mode="json")
                    ),
                }
            )
            added = self.queue.add(draft)
        else:
            added = self.queue.add_text(draft_id, drafted.text)
        self.ledger.put(
            Entry(url=task.canonical_url, digest=task.digest, draft_id=draft_id, snapshot=task.snapshot)
        )
        if not added:
            return Outcome(
                source=task.job.source,
                status="duplicate",
                draft_id=draft_id,
                snapshot=task.snapshot,
                url=task.url,
                model=model_line,
            )
        status: Status = "changed" if was else "drafted"
        return Outcome(
            source=task.job.source,
            status=status,
            draft_id=draft_id,
            snapshot=task.snapshot,
            url=task.url,
            previous=was,
            model=model_line,
        )

    def run(
        self, jobs: Iterable[Job], *, on_outcome: Callable[[Outcome], None] | None = None
    ) -> list[list[Outcome]]:
        """All jobs through all stages: each job's outcomes (a WARC file has one a page), in job
        order, each reported as it ends. Fetched hosts in turn (fetch_order)."""
        jobs = list(jobs)
        slots: list[list[Outcome]] = [[] for _ in jobs]
        if not jobs:
            return slots
        self.look_up(jobs)
        lock = threading.Lock()  # outcomes are reported from the fetch threads and this one

        def done(index: int, outcome: Outcome) -> None:
            with lock:
                slots[index].append(outcome)
                if on_outcome:
                    on_outcome(outcome)

        # What this thread is handed, in the order things end: a job's pages to draft (from a
        # fetch thread), a finished draft (from the pool), an error, or the end of the run; a
        # draft is queued as soon as its worker is done rather than after the last fetch. A job
        # that ends at its fetch (unchanged, duplicate, failed) is reported by its fetch thread:
        # waking this thread for each one cost GIL hand-offs, a third of a re-run's CPU with one
        # fetch thread (1.2-1.5 ms a 304, now 0.9-1.0), less with many (which contend anyway).
        inbox: SimpleQueue[_Drafts | cf.Future[Drafted] | BaseException | None] = SimpleQueue()
        drafting: dict[cf.Future[Drafted], tuple[int, DraftTask]] = {}
        # No more threads than can fetch at once: one request is in flight per host, so a thread
        # beyond the hosts would only wait on a host's turn, and cost GIL hand-offs meanwhile
        # (4 hosts, loopback: 8 threads gave 2-6% fewer pages a second than 4).
        threads = max(1, min(self.settings.concurrency, len(jobs), lanes(jobs)))
        # Fetching outruns drafting, so without a bound every fetched page of the batch would wait
        # in memory for a worker. A job takes room before it is fetched and gives it back once its
        # last draft is queued: pages held stay under threads + DRAFTS_AHEAD, whatever the batch.
        room = threading.Semaphore(threads + DRAFTS_AHEAD)
        stop = threading.Event()
        unfinished = [1] * len(jobs)  # each job's parts not yet ended: its fetch, then its drafts
        left = [len(jobs)]

        def settled(index: int) -> None:
            with lock:
                unfinished[index] -= 1
                if unfinished[index]:
                    return
                left[0] -= 1
                last = not left[0]
            room.release()
            if last:
                inbox.put(None)

        def fetch(index: int) -> None:
            room.acquire()
            if stop.is_set():
                return
            try:
                items = self.prepare(jobs[index])
                tasks = [item for item in items if isinstance(item, DraftTask)]
                with lock:
                    unfinished[index] += len(tasks)
                for item in items:
                    if isinstance(item, Outcome):
                        done(index, item)
                if tasks:
                    inbox.put(_Drafts(index, tasks))
                settled(index)
            except BaseException as exc:  # a bug, not a bad source (prepare reports those): end the run
                inbox.put(exc)

        with cf.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="fetch") as io:
            try:
                for i in fetch_order(jobs):
                    io.submit(fetch, i)
                while (item := inbox.get()) is not None:
                    if isinstance(item, BaseException):
                        raise item
                    if isinstance(item, cf.Future):
                        index, task = drafting.pop(item)
                        done(index, self._finish_drafted(task, item))
                        settled(index)
                        continue
                    for task in item.tasks:
                        submitted = self._submit(task)
                        if submitted is None:
                            done(item.index, self._finish_inline(task))
                            settled(item.index)
                        else:
                            drafting[submitted] = (item.index, task)
                            submitted.add_done_callback(inbox.put)
            finally:
                stop.set()
                for _ in jobs:  # never leave a fetch thread waiting for room, even on an error
                    room.release()
        return slots

    def _finish_drafted(self, task: DraftTask, future: cf.Future[Drafted]) -> Outcome:
        try:
            drafted = future.result()
        except PageTakenBack as exc:
            # Held too long on a Dask cluster: drafted here, where the time limit holds. The pool
            # stays: the cluster itself is fine.
            log.warning("%s: %s; drafting it in this process", task.job.source, exc)
            return self._finish_inline(task)
        except (BrokenProcessPool, cf.CancelledError):
            # A worker died (killed, out of memory), or a Dask cluster went away with the page:
            # the pool is gone, the source is not.
            log.warning("extraction worker died; drafting %s in this process", task.job.source)
            self.pool = None
            return self._finish_inline(task)
        except Exception as exc:
            return failure(task.job.source, exc)
        try:
            return self.finish(task, drafted)
        except Exception as exc:
            return failure(task.job.source, exc)

    def _submit(self, task: DraftTask) -> cf.Future[Drafted] | None:
        """Hand the CPU stage to the pool; None when there is no (working) pool."""
        if self.pool is None:
            return None
        try:
            return self.pool.submit(draft_for_queue, task, self.settings.draft_timeout)
        except (BrokenProcessPool, RuntimeError):  # broken, or shut down
            self.pool = None
            return None

    def _finish_inline(self, task: DraftTask) -> Outcome:
        try:
            return self.finish(task, draft_for_queue(task, self.settings.draft_timeout))
        except Exception as exc:
            return failure(task.job.source, exc)


def _is_page(mime: str | None) -> bool:
    return bool(mime) and any(k in mime for k in ("html", "text/plain", "markdown"))  # type: ignore[operator]


@dataclass(frozen=True)
class KnownUrls:
    """What the archive and the ledger knew of a batch's URLs when it started, read in a few
    queries: a re-run's 304 then asks SQLite nothing. Two queries a source had cost a fifth of a
    re-run's time, more in GIL hand-offs between fetch threads (each query lets another take it)
    than in SQLite. A URL archived by another process meanwhile is fetched without a condition
    and found a duplicate by its bytes, as before."""

    latest: dict[str, Capture | None] = field(default_factory=dict)  # every canonical URL looked up
    entries: dict[str, Entry] = field(default_factory=dict)  # those the ledger has


@dataclass(frozen=True)
class _Drafts:
    """A fetched job's pages to draft, handed from its fetch thread to Ingestor.run's loop."""

    index: int
    tasks: list[DraftTask]


def lanes(jobs: list[Job]) -> int:
    """How many of the jobs can be fetched at once: one per host, and every local source (saved
    pages and WARC files wait for no host; several at once also share the archive's fsyncs)."""
    from flows.fetch.urls import host_key

    hosts = {host_key(job.source) for job in jobs if job.kind == "url"}
    return len(hosts) + sum(job.kind != "url" for job in jobs)


def fetch_order(jobs: list[Job]) -> list[int]:
    """The jobs' indices in the order to fetch them: their hosts in turn (see interleave)."""
    from flows.fetch.politeness import interleave
    from flows.fetch.urls import host_key

    return interleave([host_key(job.source) if job.kind == "url" else None for job in jobs])


def failure(source: str, exc: BaseException) -> Outcome:
    """A failed or skipped outcome whose reason a person can act on."""
    if isinstance(exc, SkipSource):
        return Outcome(source=source, status="skipped", reason=str(exc))
    if isinstance(exc, IngestError):
        return Outcome(source=source, status="failed", reason=str(exc))
    # A bug must not stop the other sources; the reason names it so it can be reported.
    log.error("unexpected error on %s", source, exc_info=exc)
    return Outcome(source=source, status="failed", reason=f"internal error: {type(exc).__name__}: {exc}")


def ingest_each(
    jobs: list[Job],
    *,
    settings: Settings,
    pool: cf.Executor | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
    gate: bool = True,
    fetcher: Fetcher | None = None,
) -> list[list[Outcome]]:
    """The plain function behind the flow's batch task: each job's outcomes, in job order."""
    ingestor = Ingestor(settings, pool=pool, gate=gate, fetcher=fetcher)
    try:
        return ingestor.run(jobs, on_outcome=on_outcome)
    finally:
        ingestor.close()


def ingest_jobs(
    jobs: list[Job],
    *,
    settings: Settings,
    pool: cf.Executor | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
    gate: bool = True,
) -> list[Outcome]:
    """Every outcome of `jobs`, in job order."""
    each = ingest_each(jobs, settings=settings, pool=pool, on_outcome=on_outcome, gate=gate)
    return [outcome for outcomes in each for outcome in outcomes]
