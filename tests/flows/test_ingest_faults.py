"""Fault injection on ingest: a real `incidents ingest` process killed with kill -9 right after
each of its durable steps (the injection points of flows/store/faults.py: the WARC batch written,
its index rows committed, a draft queued, its ledger entry written, discovery's state saved),
over three of our own pages served on 127.0.0.1.

For each: the run dies by SIGKILL and leaves no process of its own behind; running the same
command again exits 0 without a traceback, each page is drafted exactly once, and
`incidents archive verify` and `incidents validate` are clean."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.fetch import canonicalize_url
from flows.store.ledger import Ledger
from tests.flows.pipeline_fixtures import HTML, PAGES, POSTMORTEMS, POSTS, process_env, rss
from tests.flows.test_orphans import descendants, running, survivors
from tests.httpserver import LoopbackServer, Reply

ROOT = Path(__file__).resolve().parents[2]
# Each step, and how many drafts are queued when the run is killed there: none before drafting,
# the first page's (or the few drafted alongside it) mid-way, all three after discovery's state.
STEPS = {"warc": {0}, "index": {0}, "queued": {1, 2}, "ledger": {1, 2}, "discovery": {3}}
pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="reads processes from /proc (Linux)"
)


@pytest.fixture(scope="module")
def blog() -> Iterator[LoopbackServer]:
    """One server for the whole file: the three postmortems and a feed listing them."""
    with LoopbackServer(["127.0.0.1"]) as server:
        for path in POSTMORTEMS:
            server.route(path, Reply(body=(PAGES / POSTS[path][0]).read_bytes(), headers=HTML))
        feed = Reply(body=rss(server, POSTMORTEMS), headers={"Content-Type": "application/rss+xml"})
        server.route("/feed.xml", feed)
        yield server


def command(blog: LoopbackServer, step: str) -> list[str]:
    """The pages by URL; through the feed for `discovery` (the only step that saves its state)."""
    sources = ["--feed", blog.url("/feed.xml")] if step == "discovery" else [blog.url(p) for p in POSTMORTEMS]
    return [sys.executable, "-m", "flows", "ingest", *sources, "--workers", "2", "--json"]


def killed_run(cmd: list[str], data_dir: Path, step: str) -> tuple[int, str, dict[int, str]]:
    """Run `cmd` with the fault set; its exit status, stderr and every process it started."""
    env = {**process_env(data_dir), "INCIDENTS_FAULT": f"after:{step}"}
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    seen: dict[int, str] = {}
    deadline = time.monotonic() + 180
    while proc.poll() is None and time.monotonic() < deadline:
        seen.update(descendants(proc.pid))  # its Prefect server, its fork server and workers
        time.sleep(0.1)
    if proc.poll() is None:
        proc.kill()
    _, err = proc.communicate(timeout=30)
    return proc.returncode, err, seen


def run(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), cwd=ROOT, env=process_env(data_dir), capture_output=True, text=True, timeout=300
    )


def drafts(data_dir: Path) -> list[dict]:
    queue = data_dir / "records" / "queue"
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(queue.glob("d-*.json"))]


@pytest.mark.parametrize("step", STEPS)
def test_ingest_killed_after_each_step_resumes_without_duplicates(
    blog: LoopbackServer, data_dir: Path, step: str
) -> None:
    cmd = command(blog, step)
    status, err, seen = killed_run(cmd, data_dir, step)
    try:
        assert status == -signal.SIGKILL, err[-2000:]
        assert "Traceback" not in err
        assert len(drafts(data_dir)) in STEPS[step]  # killed where the step says, not before or after
        assert any("uvicorn" in line for line in seen.values()), seen  # Prefect's server was up
        left = survivors(seen, within=20)
        assert not left, f"still running after ingest was killed with kill -9 after {step}: {left}"
    finally:
        for pid in seen:
            if running(pid):
                os.kill(pid, signal.SIGKILL)

    again = run(data_dir, *cmd)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "Traceback" not in again.stderr
    statuses = [o["status"] for o in json.loads(again.stdout)]
    assert len(statuses) == len(POSTMORTEMS)
    assert set(statuses) <= {"drafted", "duplicate", "unchanged"}, again.stdout

    queued = drafts(data_dir)  # every file parses: no half-written draft
    assert sorted(d["source"]["url"] for d in queued) == sorted(blog.url(p) for p in POSTMORTEMS)
    assert len({d["draft_id"] for d in queued}) == len(POSTMORTEMS)
    assert not list((data_dir / "records").glob("IL-*.json"))
    ledger = Ledger(data_dir / "raw" / "ledger.sqlite")
    try:
        known = ledger.get_many([canonicalize_url(blog.url(p)) for p in POSTMORTEMS])
    finally:
        ledger.close()
    assert sorted(e.draft_id for e in known.values()) == sorted(d["draft_id"] for d in queued)

    for check in (["archive", "verify"], ["validate"]):
        result = run(data_dir, sys.executable, "-m", "flows", *check)
        assert result.returncode == 0, f"{check}: {result.stdout[-1000:]}{result.stderr[-1000:]}"
        assert "Traceback" not in result.stderr
