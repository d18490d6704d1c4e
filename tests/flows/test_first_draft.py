"""A first draft of one page starts no worker pool: the ingest process drafts it, warmed while
Prefect's temporary server starts (bench/first_draft.py measures the whole)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.cli import ingest as cli_ingest
from flows.jobs import IngestRequest
from flows.settings import Settings


@pytest.fixture
def warmed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import flows.pipeline
    import flows.pool

    calls: list[str] = []
    monkeypatch.setattr(flows.pool, "warm_in_background", lambda **_: calls.append("warm"))
    monkeypatch.setattr(flows.pipeline, "start_server", lambda: calls.append("fork server"))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    return calls


def test_one_page_is_drafted_here_warmed_behind_prefects_start(warmed: list[str], tmp_path: Path) -> None:
    from flows.pipeline import extraction_pool, warm_workers

    request = IngestRequest(sources=["examples/postmortem.html"], workers=2)
    settings = Settings(data_dir=tmp_path)
    cli_ingest.warm_here(request, settings)
    warm_workers(request, settings)
    assert warmed == ["warm"]  # this process, and no fork server
    assert extraction_pool(settings, 2, 1) is None  # and no pool


def test_a_batch_warms_the_pool_not_this_process(warmed: list[str], tmp_path: Path) -> None:
    from flows.pipeline import warm_workers
    from flows.scheduler import POOL_THRESHOLD

    request = IngestRequest(sources=[f"p{i}.html" for i in range(POOL_THRESHOLD)], workers=2)
    settings = Settings(data_dir=tmp_path)
    cli_ingest.warm_here(request, settings)
    warm_workers(request, settings)
    assert warmed == ["fork server"]


def test_with_a_running_server_nothing_is_warmed_ahead(
    warmed: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No server start to hide behind: the warm-up's extra work would only add to the run."""
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    cli_ingest.warm_here(IngestRequest(sources=["examples/postmortem.html"]), Settings(data_dir=tmp_path))
    assert warmed == []


def test_a_warm_up_still_waiting_for_its_moment_is_dropped_by_the_first_draft(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first real draft never waits for a warm-up that has not begun: it drafts at once."""
    import time

    import flows.pool

    warmed: list[str] = []
    monkeypatch.setattr(flows.pool, "warm", lambda: warmed.append("warm"))
    waiting = flows.pool._Warming(when=lambda: False, patience=60)
    start = time.monotonic()
    waiting.wait()
    assert time.monotonic() - start < 1
    time.sleep(0.2)
    assert warmed == []
    ready = flows.pool._Warming(when=lambda: True, patience=60)
    while ready._state == "waiting":  # its moment has come: it begins
        time.sleep(0.01)
    ready.wait()
    assert warmed == ["warm"]
