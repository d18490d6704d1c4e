"""The CPU stage on a real Dask cluster (scheduler and a worker process on 127.0.0.1)."""

from __future__ import annotations

import concurrent.futures as cf
import logging
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.pipeline import IngestRequest, extraction_pool, run_ingest
from flows.pool import DaskPool, PageTakenBack, dask_pool
from flows.schedule import free_port
from flows.settings import Settings
from schema.errors import InputError
from tests.conftest import DATA

distributed = pytest.importorskip(
    "distributed", reason='needs Dask for the cluster tests: pip install -e ".[dask]"'
)
pytestmark = pytest.mark.usefixtures("prefect_harness")

PAGES = [DATA / "pipeline" / n for n in ("en-queue-outage.html", "ko-db-failover.html", "ja-cdn-cache.html")]


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0"
    ) as running:
        yield running


def _pages(tmp: Path, n: int) -> list[str]:
    paths = []
    for i in range(n):
        page = tmp / f"post-{i}.html"
        page.write_bytes(PAGES[i % 3].read_bytes().replace(b"</h1>", f"</h1><p>Post {i}.</p>".encode(), 1))
        paths.append(str(page))
    return paths


def test_a_dask_cluster_drafts_what_local_workers_draft(tmp_path: Path, cluster) -> None:  # type: ignore[no-untyped-def]
    sources = _pages(tmp_path, 9)
    request = IngestRequest(sources=sources, workers=2)
    local = run_ingest(request, Settings(data_dir=tmp_path / "local"))
    address = cluster.scheduler_address
    on_dask = run_ingest(request, Settings(data_dir=tmp_path / "dask", dask_scheduler=address))
    assert [o.status for o in local] == ["drafted"] * 9
    assert [(o.status, o.draft_id) for o in on_dask] == [(o.status, o.draft_id) for o in local]
    done = cluster.scheduler.task_prefixes["draft_for_queue"].state_counts["memory"]
    assert done == 9  # every page was drafted on the cluster's worker, none fell back here


def test_an_unreachable_scheduler_falls_back_to_local_workers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    settings = Settings(data_dir=tmp_path, dask_scheduler=address, connect_timeout=1.0)
    with caplog.at_level(logging.WARNING, logger="flows.pipeline"):
        pool = extraction_pool(settings, workers=2, jobs=20)
    assert isinstance(pool, cf.ProcessPoolExecutor)
    pool.shutdown()
    assert f"cannot reach the Dask scheduler at {address}" in caplog.text
    assert "drafting on this machine instead" in caplog.text


def test_a_scheduler_without_workers_is_not_used(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Its tasks would wait for a worker forever, and the run with them."""
    with distributed.LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address="127.0.0.1:0") as empty:
        settings = Settings(data_dir=tmp_path, dask_scheduler=empty.scheduler_address)
        with caplog.at_level(logging.WARNING, logger="flows.pipeline"):
            pool = extraction_pool(settings, workers=2, jobs=20)
    assert isinstance(pool, cf.ProcessPoolExecutor)
    pool.shutdown()
    assert "has no workers; start some with `dask worker tcp://127.0.0.1:" in caplog.text


def test_a_small_run_stays_in_this_process(tmp_path: Path, cluster) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(data_dir=tmp_path, dask_scheduler=cluster.scheduler_address)
    assert extraction_pool(settings, workers=2, jobs=3) is None
    pool = extraction_pool(settings, workers=2, jobs=30)
    assert isinstance(pool, DaskPool)
    assert pool.submit(sum, [1, 2, 3]).result(timeout=30) == 6
    pool.shutdown(wait=True, cancel_futures=True)


def test_without_dask_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    with pytest.raises(InputError, match=r"needs dask\.distributed: pip install 'incident-ingest\[dask\]'"):
        dask_pool("tcp://127.0.0.1:8786", timeout=1.0)


def test_pages_out_on_a_cluster_that_lost_its_workers_are_drafted_here(tmp_path: Path) -> None:
    """Dask would keep them waiting for a worker forever, and the run with them."""
    from flows.ingest import Job, ingest_jobs

    jobs = [Job(source=path, kind="page") for path in _pages(tmp_path, 8)]
    with distributed.LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address="127.0.0.1:0") as lost:
        client = distributed.Client(lost.scheduler_address, set_as_default=False)
        pool = DaskPool(client, grace=0.5, every=0.2)
        outcomes: list[object] = []
        settings = Settings(data_dir=tmp_path / "data")
        run = threading.Thread(
            target=lambda: outcomes.extend(ingest_jobs(jobs, settings=settings, pool=pool))
        )
        run.start()
        run.join(timeout=60)  # without the watchdog it never ends: fail, do not hang
        hung = run.is_alive()
        with pytest.raises(RuntimeError, match="no workers"):  # the next batch drafts here at once
            pool.submit(sum, [1, 2])
        pool.shutdown(wait=True, cancel_futures=True)
        run.join(timeout=30)
    assert not hung
    assert [o.status for o in outcomes] == ["drafted"] * 8  # type: ignore[attr-defined]


def test_workers_that_cannot_import_the_drafter_are_not_used(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every page would fail on them; the run warns once and drafts on this machine."""
    import subprocess

    with distributed.LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address="127.0.0.1:0") as bare:
        preload = DATA / "dask" / "without_incident_ingest.py"
        worker = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", bare.scheduler_address]
            + ["--host", "127.0.0.1", "--nworkers", "1", "--nthreads", "1", "--no-dashboard"]
            + ["--preload", str(preload)],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            with distributed.Client(bare.scheduler_address, set_as_default=False) as probe:
                probe.wait_for_workers(1, timeout=120)
            settings = Settings(data_dir=tmp_path, dask_scheduler=bare.scheduler_address)
            with caplog.at_level(logging.WARNING, logger="flows.pipeline"):
                pool = extraction_pool(settings, workers=2, jobs=20)
        finally:
            worker.terminate()
            worker.wait(timeout=60)
    assert isinstance(pool, cf.ProcessPoolExecutor)
    pool.shutdown()
    assert "cannot run the drafter" in caplog.text
    assert "install incident-ingest where they run" in caplog.text
    assert "No module named 'flows" in caplog.text


def test_a_page_held_past_the_deadline_is_taken_back(cluster) -> None:  # type: ignore[no-untyped-def]
    """Dask cannot interrupt a task; the pool stops waiting for it instead."""
    client = distributed.Client(cluster.scheduler_address, set_as_default=False)
    pool = DaskPool(client, deadline=1.0, every=0.1)
    try:
        started = time.monotonic()
        held = pool.submit(time.sleep, 4)
        with pytest.raises(PageTakenBack, match=r"out on the Dask cluster for over 1 s"):
            held.result(timeout=30)
        assert time.monotonic() - started < 3.5  # not held until the task ends
        # the worker's one thread sleeps on: the next test gets it once it is free
        assert client.submit(int, "7", pure=False).result(timeout=30) == 7
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def test_a_pathological_page_on_a_cluster_fails_with_the_time_limit_and_the_run_goes_on(
    tmp_path: Path, cluster
) -> None:  # type: ignore[no-untyped-def]
    """Taken back from the cluster, the slow page is drafted here under the alarm and fails;
    the pages stuck behind it on the cluster's one worker thread are drafted."""
    from flows.deadline import available
    from flows.ingest import Job, ingest_jobs
    from flows.pool import warm

    if not available():
        pytest.skip("the limit needs SIGALRM (POSIX)")
    jobs = [Job(source=path, kind="page") for path in _pages(tmp_path, 4)]
    paragraph = b"<p>At 09:12 UTC the brokers rejected connections while the retry storm grew.</p>\n"
    slow = Path(jobs[1].source)
    slow.write_bytes(slow.read_bytes().replace(b"</h1>", b"</h1>" + paragraph * 12000, 1))
    settings = Settings(data_dir=tmp_path / "data", draft_timeout=0.5)
    client = distributed.Client(cluster.scheduler_address, set_as_default=False)
    # Warm, as the fork server's workers are: a cold first page takes over a second anywhere.
    client.run(warm)
    warm()
    pool = DaskPool(client, deadline=1.0, every=0.1)
    try:
        outcomes = ingest_jobs(jobs, settings=settings, pool=pool)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    assert [o.status for o in outcomes] == ["drafted", "failed", "drafted", "drafted"], [
        o.reason for o in outcomes
    ]
    assert "took longer than 0.5 s" in (outcomes[1].reason or "")


def test_with_a_dask_scheduler_the_local_workers_are_not_warmed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """They are only the cluster's fallback; warming them costs about 1.5 s of CPU."""
    import flows.pipeline

    started: list[bool] = []
    monkeypatch.setattr(flows.pipeline, "start_server", lambda: started.append(True))
    request = IngestRequest(sources=_pages(tmp_path, 9), workers=2)
    flows.pipeline.warm_workers(request, Settings(data_dir=tmp_path, dask_scheduler="tcp://127.0.0.1:8786"))
    assert started == []
    flows.pipeline.warm_workers(request, Settings(data_dir=tmp_path))
    assert started == [True]
