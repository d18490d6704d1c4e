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
import threading
import time
from collections.abc import Callable
from multiprocessing.context import BaseContext
from typing import Any, TypeVar

from schema.errors import InputError

T = TypeVar("T")
log = logging.getLogger(__name__)

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
    from flows.ingest import DraftTask, Job, draft_for_queue

    # The sample's languages never reach langdetect (scripts and English are told apart first).
    language.warm()
    url = "https://example.org/warm"
    job = Job(source=url, kind="url")
    draft_for_queue(DraftTask(job, _SAMPLE, url, url, "text/html", None, "sha256:", "2026-01-01T00:00:00Z"))


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
    return cf.ProcessPoolExecutor(max_workers=workers, mp_context=_context())


class DaskPool(cf.Executor):
    """The CPU stage on a Dask cluster: each page is one task on its workers, and its draft comes
    back over Dask's own protocol. The workers need incident-ingest installed (they import the
    drafter); fetching, archiving and queueing stay in the ingest process, so politeness and the
    data directory are unchanged.

    Dask keeps a task waiting for as long as the cluster has no worker, so a cluster that loses
    them all would hold the run forever: once it has had none (or its scheduler has not answered)
    for `grace` seconds, the pages still out are cancelled, and the ingest drafts them itself."""

    def __init__(self, client: Any, *, grace: float = 60.0, every: float = 5.0) -> None:
        self._client = client
        # pure=False: two equal pages are two sources, and hashing each page to find out costs time
        self._executor = client.get_executor(pure=False)
        self._grace = grace
        self._every = every
        self._out: set[cf.Future[Any]] = set()
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
        future = self._executor.submit(fn, *args, **kwargs)
        with self._lock:
            self._out.add(future)
        future.add_done_callback(self._returned)
        return future

    def _returned(self, future: cf.Future[Any]) -> None:
        with self._lock:
            self._out.discard(future)

    def _has_workers(self) -> bool:
        try:
            return bool(self._client.scheduler_info(n_workers=1).get("workers"))
        except Exception:  # noqa: BLE001 - a scheduler that does not answer has no workers for us
            return False

    def _watchdog(self) -> None:
        alone_since: float | None = None
        while not self._stop.wait(self._every):
            if self._has_workers():
                alone_since = None
                self._lost = False
                continue
            now = time.monotonic()
            alone_since = now if alone_since is None else alone_since
            if now - alone_since < self._grace:
                continue
            self._lost = True
            with self._lock:
                out = list(self._out)
            if out:
                log.warning(
                    "the Dask cluster has had no workers for %.0f s; drafting %d pages here",
                    now - alone_since,
                    len(out),
                )
            for future in out:
                future.cancel()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._stop.set()
        try:
            self._executor.shutdown(wait=wait and not cancel_futures)
        finally:
            self._client.close()


def dask_pool(address: str, timeout: float) -> DaskPool:
    """A DaskPool on the scheduler at `address`; InputError when it cannot be had."""
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
    except Exception as exc:  # noqa: BLE001 - whatever the workers raise, the message carries it
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
    return DaskPool(client)


def _can_draft() -> bool:
    """Run on each Dask worker: it imports the drafter (unpickling this function needs it too)."""
    from flows.ingest import draft_for_queue

    return callable(draft_for_queue)
