"""The scheduler: one batch of jobs through the stages, fetching in threads (hosts in turn) while
the CPU stage drafts in a pool, each draft queued as soon as it is done."""

from __future__ import annotations

import concurrent.futures as cf
import logging
import threading
from collections.abc import Callable, Iterable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from queue import SimpleQueue
from typing import TYPE_CHECKING

from flows.drafting import Drafted, DraftTask, draft_for_queue
from flows.jobs import Job, Outcome, failure, or_failure
from flows.pool import PageTakenBack, wait_warm
from flows.settings import Settings
from flows.stages import Ingestor

if TYPE_CHECKING:
    from flows.fetch import Fetcher

log = logging.getLogger(__name__)

# Below this many drafts the pool's warm-up (about 1.5 s of CPU, once per process; flows/pool.py)
# costs more than it saves.
POOL_THRESHOLD = 8
# Fetched pages that may wait for an extraction worker (see Scheduler): enough to keep the
# workers busy between fetches.
DRAFTS_AHEAD = 16


@dataclass(frozen=True)
class _Drafts:
    """A fetched job's pages to draft, handed from its fetch thread to the scheduler's loop."""

    index: int
    tasks: list[DraftTask]


Inbox = SimpleQueue[_Drafts | cf.Future[Drafted] | BaseException | None]


class Scheduler:
    """One run of `jobs` through `stages`: each job's outcomes (a WARC file has one a page), in
    job order, each reported as it ends.

    What the calling thread is handed (`inbox`), in the order things end: a job's pages to draft
    (from a fetch thread), a finished draft (from the pool), an error, or the end of the run; a
    draft is queued as soon as its worker is done rather than after the last fetch. A job that
    ends at its fetch (unchanged, duplicate, failed) is reported by its fetch thread: waking this
    thread for each one cost GIL hand-offs, a third of a re-run's CPU with one fetch thread
    (1.2-1.5 ms a 304, now 0.9-1.0), less with many (which contend anyway)."""

    def __init__(
        self,
        stages: Ingestor,
        jobs: Iterable[Job],
        *,
        pool: cf.Executor | None = None,
        on_outcome: Callable[[Outcome], None] | None = None,
    ) -> None:
        self.stages = stages
        self.jobs = list(jobs)
        self.pool = pool  # None: the CPU stage runs in this thread (also once the pool breaks)
        self.on_outcome = on_outcome
        self.slots: list[list[Outcome]] = [[] for _ in self.jobs]
        self.lock = threading.Lock()  # outcomes are reported from the fetch threads and this one
        self.inbox: Inbox = SimpleQueue()
        self.drafting: dict[cf.Future[Drafted], tuple[int, DraftTask]] = {}
        # No more threads than can fetch at once: one request is in flight per host, so a thread
        # beyond the hosts would only wait on a host's turn, and cost GIL hand-offs meanwhile
        # (4 hosts, loopback: 8 threads gave 2-6% fewer pages a second than 4).
        self.threads = max(1, min(stages.settings.concurrency, len(self.jobs), lanes(self.jobs)))
        # Fetching outruns drafting, so without a bound every fetched page of the batch would wait
        # in memory for a worker. A job takes room before it is fetched and gives it back once its
        # last draft is queued: pages held stay under threads + DRAFTS_AHEAD, whatever the batch.
        self.room = threading.Semaphore(self.threads + DRAFTS_AHEAD)
        self.stop = threading.Event()
        self.unfinished = [1] * len(self.jobs)  # each job's parts not yet ended: its fetch, then its drafts
        self.left = len(self.jobs)

    def run(self) -> list[list[Outcome]]:
        if not self.jobs:
            return self.slots
        self.stages.look_up(self.jobs)
        with cf.ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="fetch") as io:
            try:
                for i in fetch_order(self.jobs):
                    io.submit(self._fetch, i)
                while (item := self.inbox.get()) is not None:
                    if isinstance(item, BaseException):
                        raise item
                    if isinstance(item, cf.Future):
                        index, task = self.drafting.pop(item)
                        self._done(index, self._finish_drafted(task, item))
                        self._settled(index)
                    else:
                        self._hand_over(item)
            finally:
                self.stop.set()
                for _ in self.jobs:  # never leave a fetch thread waiting for room, even on an error
                    self.room.release()
        return self.slots

    def _done(self, index: int, outcome: Outcome) -> None:
        with self.lock:
            self.slots[index].append(outcome)
            if self.on_outcome:
                self.on_outcome(outcome)

    def _settled(self, index: int) -> None:
        """One part of a job has ended; its last gives its room back, and the run's last ends it."""
        with self.lock:
            self.unfinished[index] -= 1
            if self.unfinished[index]:
                return
            self.left -= 1
            last = not self.left
        self.room.release()
        if last:
            self.inbox.put(None)

    def _fetch(self, index: int) -> None:
        """A fetch thread's work for one job (the I/O stages report a bad source as its outcome)."""
        self.room.acquire()
        if self.stop.is_set():
            return
        try:
            items = self.stages.prepare(self.jobs[index])
            tasks = [item for item in items if isinstance(item, DraftTask)]
            with self.lock:
                self.unfinished[index] += len(tasks)
            for item in items:
                if isinstance(item, Outcome):
                    self._done(index, item)
            if tasks:
                self.inbox.put(_Drafts(index, tasks))
            self._settled(index)
        except BaseException as exc:  # noqa: BLE001 - a bug, not a bad source: handed over to end the run
            self.inbox.put(exc)

    def _hand_over(self, drafts: _Drafts) -> None:
        """A job's pages to the pool, or drafted here when there is no (working) pool."""
        for task in drafts.tasks:
            submitted = self._submit(task)
            if submitted is None:
                self._done(drafts.index, self._finish_inline(task))
                self._settled(drafts.index)
            else:
                self.drafting[submitted] = (drafts.index, task)
                submitted.add_done_callback(self.inbox.put)

    def _submit(self, task: DraftTask) -> cf.Future[Drafted] | None:
        """Hand the CPU stage to the pool; None when there is no (working) pool."""
        if self.pool is None:
            return None
        try:
            return self.pool.submit(draft_for_queue, task, self.stages.settings.draft_timeout)
        except (BrokenProcessPool, RuntimeError):  # broken, or shut down
            self.pool = None
            return None

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
        except Exception as exc:  # noqa: BLE001 - the page's own error, raised in the worker: its outcome
            return failure(task.job.source, exc)
        return or_failure(task.job.source, lambda: self.stages.finish(task, drafted))

    def _finish_inline(self, task: DraftTask) -> Outcome:
        wait_warm()
        timeout = self.stages.settings.draft_timeout
        return or_failure(task.job.source, lambda: self.stages.finish(task, draft_for_queue(task, timeout)))


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
    stages = Ingestor(settings, gate=gate, fetcher=fetcher)
    try:
        return Scheduler(stages, jobs, pool=pool, on_outcome=on_outcome).run()
    finally:
        stages.close()


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
