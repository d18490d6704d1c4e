"""Real `incidents ingest` processes: killed mid-run and resumed; two at once over the same sources."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import DATA
from tests.flows.pipeline_fixtures import process_env
from tests.httpserver import LoopbackServer, Reply

TEMPLATE = (DATA / "pipeline" / "en-queue-outage.html").read_text(encoding="utf-8")
ROOT = Path(__file__).resolve().parents[2]


def _serve_posts(server: LoopbackServer, n: int) -> list[str]:
    urls = []
    for i in range(n):
        body = TEMPLATE.replace("message queue backlog", f"message queue backlog number {i}")
        server.route(
            f"/posts/outage-{i}.html", Reply(body=body.encode(), headers={"Content-Type": "text/html"})
        )
        urls.append(server.url(f"/posts/outage-{i}.html"))
    return urls


def _ingest(data_dir: Path, listing: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "flows", "ingest", "--from-file", str(listing), "--json"],
        env=process_env(data_dir),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # so the kill reaches its worker processes too
    )


def _drafts(data_dir: Path) -> list[dict]:
    queue = data_dir / "records" / "queue"
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(queue.glob("d-*.json"))]


def _verify(data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flows", "archive", "verify"],
        env=process_env(data_dir),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _assert_one_draft_per_url(data_dir: Path, urls: list[str]) -> None:
    drafts = _drafts(data_dir)  # every file parses: no half-written draft
    by_url: dict[str, int] = {}
    for draft in drafts:
        by_url[draft["source"]["url"]] = by_url.get(draft["source"]["url"], 0) + 1
    assert sorted(by_url) == sorted(urls)
    assert set(by_url.values()) == {1}


def test_sigkill_mid_run_then_resume_drafts_each_source_once(data_dir: Path, tmp_path: Path) -> None:
    with LoopbackServer(("127.0.0.1",)) as server:
        urls = _serve_posts(server, 200)
        listing = tmp_path / "sources.txt"
        listing.write_text("\n".join(urls) + "\n")
        proc = _ingest(data_dir, listing)
        deadline = time.monotonic() + 240
        while len(list((data_dir / "records" / "queue").glob("d-*.json"))) < 20:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no drafts appeared"
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        first = len(_drafts(data_dir))
        assert 20 <= first < 200

        resumed = _ingest(data_dir, listing)
        out, err = resumed.communicate(timeout=400)
        assert resumed.returncode == 0, err[-2000:]
        outcomes = json.loads(out)
        assert len(outcomes) == 200
        statuses = [o["status"] for o in outcomes]
        assert set(statuses) <= {"drafted", "duplicate"}, [
            o for o in outcomes if o["status"] not in ("drafted", "duplicate")
        ][:3]
        assert statuses.count("drafted") + first >= 200
        _assert_one_draft_per_url(data_dir, urls)
        verify = _verify(data_dir)
        assert verify.returncode == 0, verify.stdout + verify.stderr


def test_two_processes_over_overlapping_sources(data_dir: Path, tmp_path: Path) -> None:
    with LoopbackServer(("127.0.0.1",)) as server:
        urls = _serve_posts(server, 60)
        one, two = tmp_path / "one.txt", tmp_path / "two.txt"
        one.write_text("\n".join(urls[:40]))
        two.write_text("\n".join(urls[20:]))
        procs = [_ingest(data_dir, one), _ingest(data_dir, two)]
        results = [p.communicate(timeout=400) for p in procs]
        for proc, (_, err) in zip(procs, results, strict=True):
            assert proc.returncode == 0, err[-2000:]
        outcomes = [o for out, _ in results for o in json.loads(out)]
        assert {o["status"] for o in outcomes} <= {"drafted", "duplicate"}
        assert sum(o["status"] == "drafted" for o in outcomes) == 60
        _assert_one_draft_per_url(data_dir, urls)
        verify = _verify(data_dir)
        assert verify.returncode == 0, verify.stdout + verify.stderr
