"""The CPU stage in worker processes: the same drafts as inline, and a dead worker loses nothing."""

from __future__ import annotations

import multiprocessing
import os
import signal
from pathlib import Path

import pytest

from flows.ingest import Job, ingest_jobs
from flows.pool import make_pool
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
        for pid in list(pool._processes):  # noqa: SLF001 - the only way to reach the workers
            os.kill(pid, signal.SIGKILL)
        outcomes = ingest_jobs(jobs, settings=Settings(data_dir=tmp_path / "data"), pool=pool)
    finally:
        pool.shutdown(cancel_futures=True)
    assert [o.status for o in outcomes] == ["drafted"] * 8, [o.reason for o in outcomes]


def _is_warm() -> bool:
    import sys

    return "flows._warm_worker" in sys.modules


@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no fork server")
def test_workers_are_forked_warm() -> None:
    # The fork server swallows an ImportError in its preload; this is where one would show.
    with make_pool(1) as pool:
        assert pool.submit(_is_warm).result(timeout=120)
