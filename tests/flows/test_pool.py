"""The CPU stage in worker processes: the same drafts as inline, and a dead worker loses nothing."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import signal
import threading
from pathlib import Path

import pytest

from flows import scheduler
from flows.jobs import Job
from flows.pool import make_pool
from flows.scheduler import ingest_jobs
from flows.settings import Settings
from tests.conftest import DATA

PAGES = [DATA / "pipeline" / n for n in ("en-queue-outage.html", "ko-db-failover.html", "ja-cdn-cache.html")]


def _jobs(tmp: Path, n: int) -> list[Job]:
    jobs = []
    for i in range(n):
        page = tmp / f"post-{i}.html"
        page.write_bytes(PAGES[i % 3].read_bytes().replace(b"</h1>", f"</h1><p>Post {i}.</p>".encode(), 1))
        jobs.append(Job(source=str(page), kind="page", url=f"https://blog.example.org/posts/{i}.html"))
    return jobs


def test_pool_and_inline_give_the_same_drafts(tmp_path: Path) -> None:
    jobs = _jobs(tmp_path, 8)
    inline = ingest_jobs(jobs, settings=Settings(data_dir=tmp_path / "a"))
    with make_pool(2) as pool:
        pooled = ingest_jobs(jobs, settings=Settings(data_dir=tmp_path / "b"), pool=pool)
    assert [o.status for o in inline] == ["drafted"] * 8
    assert [(o.status, o.draft_id) for o in pooled] == [(o.status, o.draft_id) for o in inline]


def test_a_killed_worker_loses_no_source(tmp_path: Path) -> None:
    jobs = _jobs(tmp_path, 8)
    pool = make_pool(2)
    try:
        pool.submit(os.getpid).result(timeout=120)  # start the workers
        for pid in list(pool._processes):  # the only way to reach the workers
            os.kill(pid, signal.SIGKILL)
        outcomes = ingest_jobs(jobs, settings=Settings(data_dir=tmp_path / "data"), pool=pool)
    finally:
        pool.shutdown(cancel_futures=True)
    assert [o.status for o in outcomes] == ["drafted"] * 8, [o.reason for o in outcomes]


def _is_warm() -> bool:
    import sys

    from langdetect import detector_factory

    # langdetect's profiles too: no page in the sample needs them, a German or French page would
    return "flows._warm_worker" in sys.modules and detector_factory._factory is not None


@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no fork server")
def test_workers_are_forked_warm() -> None:
    # The fork server swallows an ImportError in its preload; this is where one would show.
    with make_pool(1) as pool:
        assert pool.submit(_is_warm).result(timeout=120)


class _Counting(cf.Executor):
    """A real pool that remembers the most drafts it held at once (queued or running)."""

    def __init__(self, pool: cf.Executor) -> None:
        self.pool, self.held, self.most = pool, 0, 0
        self.lock = threading.Lock()

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        with self.lock:
            self.held += 1
            self.most = max(self.most, self.held)
        future = self.pool.submit(fn, *args, **kwargs)
        future.add_done_callback(self._done)
        return future

    def _done(self, _future: cf.Future) -> None:
        with self.lock:
            self.held -= 1


def test_fetched_pages_wait_for_workers_in_bounded_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading outruns drafting; the pages waiting for a worker stay under the bound."""
    jobs = _jobs(tmp_path, 30)
    settings = Settings(data_dir=tmp_path / "unbounded", concurrency=2)
    with make_pool(1) as pool:
        monkeypatch.setattr(scheduler, "DRAFTS_AHEAD", 1000)
        unbounded = _Counting(pool)
        ingest_jobs(jobs, settings=settings, pool=unbounded)
        monkeypatch.setattr(scheduler, "DRAFTS_AHEAD", 2)
        bounded = _Counting(pool)
        outcomes = ingest_jobs(
            jobs, settings=settings.model_copy(update={"data_dir": tmp_path / "b"}), pool=bounded
        )
    assert unbounded.most > 4  # without the bound the pages pile up, so the next line tests something
    assert bounded.most <= 2 + 2
    assert [o.status for o in outcomes] == ["drafted"] * 30


def test_outcomes_from_fetch_threads_and_drafts_are_each_reported_once(tmp_path: Path) -> None:
    """Jobs that end at their fetch are reported by the fetch threads, drafts by the run's loop:
    each source once, and the results in job order."""
    jobs = _jobs(tmp_path, 15)
    old, new = jobs[:12], jobs[12:]
    settings = Settings(data_dir=tmp_path / "data", concurrency=4)
    with make_pool(2) as pool:
        ingest_jobs(old, settings=settings, pool=pool)  # so that these end at their fetch next time
        mixed = [old[0], Job(source=str(tmp_path / "gone.html"), kind="page"), *new, *old[1:]]
        seen: list[str] = []
        outcomes = ingest_jobs(
            mixed, settings=settings, pool=pool, on_outcome=lambda o: seen.append(o.source)
        )
    assert [o.source for o in outcomes] == [j.source for j in mixed]
    assert sorted(seen) == sorted(j.source for j in mixed)
    assert [o.status for o in outcomes] == ["duplicate", "failed"] + ["drafted"] * 3 + ["duplicate"] * 11


def test_an_error_in_a_fetch_thread_stops_the_run_instead_of_hanging(tmp_path: Path) -> None:
    """A bug (here, in the progress listener) ends the run with the error, as it would inline."""
    jobs = _jobs(tmp_path, 4)
    settings = Settings(data_dir=tmp_path / "data", concurrency=2)
    ingest_jobs(jobs, settings=settings)

    def broken(outcome: object) -> None:
        raise RuntimeError("listener bug")

    result: list[BaseException] = []

    def run() -> None:
        try:
            ingest_jobs(jobs, settings=settings, on_outcome=broken)
        except RuntimeError as exc:
            result.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "the run hung"
    assert [str(e) for e in result] == ["listener bug"]


@pytest.mark.parametrize("where", ["workers", "inline"])
def test_a_page_past_the_draft_timeout_fails_and_the_others_are_drafted(tmp_path: Path, where: str) -> None:
    from flows.deadline import available

    if not available():
        pytest.skip("the limit needs SIGALRM (POSIX)")
    jobs = _jobs(tmp_path, 4)
    # a long page (under the element cap) takes seconds to extract; the small ones a few ms
    paragraph = b"<p>At 09:12 UTC the brokers rejected connections while the retry storm grew.</p>\n"
    slow = Path(jobs[1].source)
    slow.write_bytes(slow.read_bytes().replace(b"</h1>", b"</h1>" + paragraph * 12000, 1))
    settings = Settings(data_dir=tmp_path / "data", draft_timeout=0.5)
    if where == "workers":
        with make_pool(2) as pool:
            outcomes = ingest_jobs(jobs, settings=settings, pool=pool)
    else:
        outcomes = ingest_jobs(jobs, settings=settings)
    assert [o.status for o in outcomes] == ["drafted", "failed", "drafted", "drafted"], [
        o.reason for o in outcomes
    ]
    assert "took longer than 0.5 s" in (outcomes[1].reason or "")
    # the page is not lost: a later run with more time drafts it
    again = ingest_jobs(jobs[1:2], settings=Settings(data_dir=tmp_path / "data", draft_timeout=0))
    assert [o.status for o in again] == ["drafted"]
