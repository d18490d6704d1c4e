"""The extraction workers: a process pool whose workers start warm.

Why a fork server: a spawned worker imports the extractors and pays the drafter's first call
(regex compilation, language profiles) itself, about 1.5 s of CPU each, on every run. The fork
server is started once per process, clean and single-threaded (so forking it is safe, unlike
forking this process, which runs Prefect's and httpx's threads); it imports and warms the
drafter once, and each worker is a fork of it that starts warm in milliseconds. Where there is
no fork server (Windows), workers are spawned as before.

With INCIDENTS_DASK_SCHEDULER set, the workers are a Dask cluster's instead (DaskPool): the CPU
stage fans out across machines while fetching stays polite in one process.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.context import BaseContext
from typing import Any, TypeVar

from schema.errors import InputError

T = TypeVar("T")
log = logging.getLogger(__name__)

# Seconds a page may wait for its turn on a Dask cluster, on top of INCIDENTS_DRAFT_TIMEOUT (see
# DaskPool): the Ingestor keeps at most concurrency + 16 pages out, about 0.4 s of work a page
# even at 15 ms a page on one worker thread, so only a stuck worker uses it up.
WAIT_ALLOWANCE = 60.0

# Imported by the fork server before it forks a worker; see flows/_warm_worker.py.
PRELOAD = ["flows._warm_worker"]

# A page in the three scripts the drafter handles differently, to reach every first-call path.
_SAMPLE = (
    "<html><head><title>Incident report: queue outage</title></head><body><article>"
    "<h1>Incident report: queue outage</h1>"
    "<h2>Summary</h2><p>On 2026-01-05 between 09:10 and 09:40 UTC the message queue was unavailable. "
    "The root cause was a configuration change that exhausted connections. We rolled back.</p>"
    "<h2>장애 원인</h2><p>데이터베이스 장애로 서비스가 30분 동안 중단되었습니다.</p>"
    "<h2>原因</h2><p>設定変更によりキャッシュが無効になり、障害が発生しました。</p>"
    "</article></body></html>"
).encode()


def warm() -> None:
    """Draft a small sample once, so this process's first real page pays no first-call cost."""
    from extractors import language
    from flows.drafting import DraftTask, draft_for_queue
    from flows.jobs import Job

    # The sample's languages never reach langdetect (scripts and English are told apart first).
    language.warm()
    url = "https://example.org/warm"
    job = Job(source=url, kind="url")
    draft_for_queue(DraftTask(job, _SAMPLE, url, url, "text/html", None, "sha256:", "2026-01-01T00:00:00Z"))


class _Warming:
    """A warm-up of this process in a thread, which may wait for its moment and is dropped if the
    first real draft comes before that moment (it then pays the first call itself, once)."""

    def __init__(self, when: Callable[[], bool] | None, patience: float) -> None:
        self._when = when
        self._patience = patience
        self._lock = threading.Lock()
        self._state = "waiting"  # waiting -> warming -> done, or waiting -> dropped
        self._thread = threading.Thread(target=self._run, name="warm-drafter", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        deadline = time.monotonic() + self._patience
        while self._when is not None and not self._when() and time.monotonic() < deadline:
            time.sleep(0.05)
            if self._state == "dropped":
                return
        with self._lock:
            if self._state != "waiting":
                return
            self._state = "warming"
        try:
            warm()
        finally:
            self._state = "done"

    def wait(self) -> None:
        with self._lock:
            if self._state == "waiting":
                self._state = "dropped"
                return
        self._thread.join()


_warming: _Warming | None = None


def warm_in_background(when: Callable[[], bool] | None = None, patience: float = 30.0) -> None:
    """Warm this process (warm()) in a thread, for a run that drafts its few pages here: the
    imports and first calls, about 1 s of CPU, then overlap Prefect's start instead of following
    it. `when`: warm only once it says so (or after `patience` seconds), e.g. once Prefect's
    temporary server process is spawned and this process only waits for it."""
    global _warming
    if _warming is None:
        _warming = _Warming(when, patience)


def wait_warm() -> None:
    """Before drafting in this process: let a warm-up under way end (one first call, not two), or
    drop one still waiting for its moment."""
    if _warming is not None:
        _warming.wait()


def _context() -> BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        return context
    # spawn, not fork: this process runs threads (Prefect, httpx) and forking those is unsafe.
    return multiprocessing.get_context("spawn")


def start_server() -> None:
    """Start (and warm) the fork server in the background, so it is ready by the first draft."""
    if _context().get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    threading.Thread(target=forkserver.ensure_running, name="forkserver-start", daemon=True).start()


def make_pool(workers: int) -> cf.ProcessPoolExecutor:
    """Local extraction workers; each dies with this process, however it ends (flows/lifetime.py)."""
    from flows.lifetime import guard_worker

    return cf.ProcessPoolExecutor(
        max_workers=workers, mp_context=_context(), initializer=guard_worker, initargs=(os.getpid(),)
    )


class PageTakenBack(Exception):
    """A page the Dask cluster held past its deadline: the ingest drafts it itself."""


@dataclass
class _Out:
    """A page out on the cluster: the future the Ingestor waits on, Dask's, and when it went."""

    ours: cf.Future[Any]
    theirs: Any
    handed: float


class DaskPool(cf.Executor):
    """The CPU stage on a Dask cluster: each page is one task on its workers, and its draft comes
    back over Dask's own protocol. The workers need incident-ingest installed (they import the
    drafter); fetching, archiving and queueing stay in the ingest process, so politeness and the
    data directory are unchanged.

    A watchdog thread looks every `every` seconds for what Dask itself would wait on forever:
    - A page out for longer than `deadline` seconds. The alarm that limits a page in a local
      worker cannot reach a Dask task (it runs in a worker's thread), so one pathological page
      would hold the run. The page is taken back (PageTakenBack) and the ingest drafts it itself,
      under the alarm: a pathological page then fails with the time limit's reason, and a page
      that was only stuck behind it on its worker is drafted. The clock starts when the page is
      handed over, as Dask does not say when a task starts running (its scheduler counts tasks
      queued on a worker as processing), so `deadline` allows for the wait; the thread running
      a page taken back runs on until the page ends (threads cannot be stopped).
    - A cluster that has had no worker (or whose scheduler has not answered) for `grace`
      seconds: Dask keeps a task waiting for a worker for as long as it takes. The pages still
      out are cancelled, and the ingest drafts them itself."""

    def __init__(
        self, client: Any, *, deadline: float = 0.0, grace: float = 60.0, every: float = 5.0
    ) -> None:
        self._client = client
        self._deadline = deadline
        self._grace = grace
        self._every = every
        self._out: dict[str, _Out] = {}  # by Dask key
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._lost = False  # the watchdog gave up on the cluster (until it has a worker again)
        self._watch = threading.Thread(target=self._watchdog, name="dask-watchdog", daemon=True)
        self._watch.start()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> cf.Future[T]:
        if self._lost:
            # Like a shut-down pool: the Ingestor drafts the page itself (and the next batch too,
            # until the watchdog sees a worker again)
            raise RuntimeError("the Dask cluster has no workers")
        # pure=False: two equal pages are two sources, and hashing each page to find out costs time
        theirs = self._client.submit(fn, *args, pure=False, **kwargs)
        ours: cf.Future[T] = cf.Future()
        with self._lock:
            self._out[theirs.key] = _Out(ours, theirs, time.monotonic())
        theirs.add_done_callback(self._returned)  # called in a thread of Dask's, not its loop
        return ours

    def _returned(self, theirs: Any) -> None:
        with self._lock:
            out = self._out.pop(theirs.key, None)
        if out is None:  # taken back already
            return
        if theirs.status == "cancelled":
            out.ours.cancel()
            return
        try:
            result = theirs.result()
        except BaseException as exc:  # noqa: BLE001 - the page's own error, or the cluster's: the Ingestor's to report
            out.ours.set_exception(exc)
        else:
            out.ours.set_result(result)

    def _has_workers(self) -> bool:
        try:
            return bool(self._client.scheduler_info(n_workers=1).get("workers"))
        except Exception:  # noqa: BLE001 - a scheduler that does not answer has no workers for us
            return False

    def _take_back_late(self, now: float) -> None:
        with self._lock:
            late = [key for key, out in self._out.items() if now - out.handed > self._deadline]
            taken = [self._out.pop(key) for key in late]
        for out in taken:
            out.theirs.cancel()
            out.ours.set_exception(PageTakenBack(f"out on the Dask cluster for over {self._deadline:g} s"))

    def _watchdog(self) -> None:
        alone_since: float | None = None
        while not self._stop.wait(self._every):
            now = time.monotonic()
            if self._deadline > 0:
                self._take_back_late(now)
            if self._has_workers():
                alone_since = None
                self._lost = False
                continue
            alone_since = now if alone_since is None else alone_since
            if now - alone_since < self._grace:
                continue
            self._lost = True
            with self._lock:
                out = list(self._out.values())
            if out:
                log.warning(
                    "the Dask cluster has had no workers for %.0f s; drafting %d pages here",
                    now - alone_since,
                    len(out),
                )
            for each in out:
                each.theirs.cancel()  # _returned cancels ours: the Ingestor drafts the page here

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._stop.set()
        try:
            with self._lock:
                out = list(self._out.values())
            if cancel_futures:
                for each in out:
                    each.theirs.cancel()
            elif wait:
                cf.wait([each.ours for each in out])
        finally:
            self._client.close()


def dask_pool(address: str, timeout: float, draft_timeout: float = 0.0) -> DaskPool:
    """A DaskPool on the scheduler at `address`; InputError when it cannot be had. A page may be
    out on it for draft_timeout seconds (0: no limit) plus WAIT_ALLOWANCE for its turn."""
    try:
        from distributed import Client
    except ImportError as exc:
        raise InputError(
            f"INCIDENTS_DASK_SCHEDULER={address} needs dask.distributed: pip install 'incident-ingest[dask]'"
        ) from exc
    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(f"cannot reach the Dask scheduler at {address}: {exc}") from exc
    # A scheduler without workers takes tasks and never runs them: the run would hang. A worker
    # without incident-ingest would fail every page. Both are asked before the first page.
    try:
        ready = client.run(_can_draft)
    except Exception as exc:  # whatever the workers raise, the message carries it
        client.close()
        raise InputError(
            f"the Dask workers of {address} cannot run the drafter ({type(exc).__name__}: {exc}); "
            "install incident-ingest where they run"
        ) from exc
    if not ready:
        client.close()
        raise InputError(
            f"the Dask scheduler at {address} has no workers; start some with `dask worker {address}`"
        )
    return DaskPool(client, deadline=draft_timeout + WAIT_ALLOWANCE if draft_timeout > 0 else 0.0)


def _can_draft() -> bool:
    """Run on each Dask worker: it imports the drafter (unpickling this function needs it too)."""
    from flows.drafting import draft_for_queue

    return callable(draft_for_queue)
