"""Scheduled runs for real: `incidents schedule` serving its deployments, and prefect.yaml deployed
to a work pool on a Prefect server that a worker runs. Each test starts its own Prefect server on
127.0.0.1 (about 10 s), triggers the deployment now instead of waiting for its cron, and checks
the drafts the run queued."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from flows.schedule import answers, free_port
from tests.flows.pipeline_fixtures import POSTMORTEMS, process_env, serve_blog
from tests.httpserver import LoopbackServer

ROOT = Path(__file__).resolve().parents[2]
WAIT = 180.0  # a fresh server migrates its database first; CI machines are slow at it


def _env(data_dir: Path, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = process_env(data_dir)
    env["PREFECT_HOME"] = str(tmp_path / "prefect")  # a server of its own, with a fresh database
    env.update(extra)
    return env


def _sources(tmp_path: Path, blog: LoopbackServer, exclude: str = '"slow-outage", "missing-outage"') -> Path:
    toml = tmp_path / "sources.toml"
    toml.write_text(
        f'[[source]]\nname = "blog"\nfeed = "{blog.url("/feed.xml")}"\n'
        f'exclude = [{exclude}]\nschedule = "0 6 * * *"\ngroup = "daily"\n'
    )
    return toml


def _prefect(env: dict[str, str], *args: str, timeout: float = WAIT) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "prefect", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _wait(what: str, ready, proc: subprocess.Popen[str]) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"exited with {proc.returncode} while waiting for {what}:\n{proc.stdout.read()}")  # type: ignore[union-attr]
        if ready():
            return
        time.sleep(0.5)
    pytest.fail(f"no {what} within {WAIT:.0f}s")


def _deployment(api: str, name: str = "ingest-daily") -> dict | None:
    try:
        reply = httpx.get(f"{api}/deployments/name/ingest/{name}", timeout=5)
    except httpx.HTTPError:
        return None
    return reply.json() if reply.status_code == 200 else None


def _drafted_urls(data_dir: Path) -> set[str]:
    queue = data_dir / "records" / "queue"
    return {json.loads(p.read_text(encoding="utf-8"))["source"]["url"] for p in queue.glob("d-*.json")}


def _stop(proc: subprocess.Popen[str], timeout: float = 15) -> bool:
    """SIGTERM to the process group, as a service manager stops a service; whether it ended in time."""
    if proc.poll() is not None:
        return True
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
        return True
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return False


def _schedule(toml: Path, data_dir: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "flows", "schedule", "--sources", str(toml), "--data-dir", str(data_dir)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def test_schedule_serves_the_group_on_its_cron_and_a_run_drafts_it(data_dir: Path, tmp_path: Path) -> None:
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = _env(data_dir, tmp_path, INCIDENTS_PREFECT_PORT=str(port))
    with LoopbackServer(("127.0.0.1",)) as blog:
        serve_blog(blog)
        # The slow page (the feed's last entry) keeps the run going after the three drafts.
        toml = _sources(tmp_path, blog, exclude='"missing-outage"')
        proc = _schedule(toml, data_dir, env)
        try:
            _wait("served deployment", lambda: _deployment(api) is not None, proc)
            crons = [s["schedule"].get("cron") for s in _deployment(api)["schedules"]]  # type: ignore[index]
            assert crons == ["0 6 * * *"]
            _prefect({**env, "PREFECT_API_URL": api}, "deployment", "run", "ingest/ingest-daily")
            _wait("drafts", lambda: len(_drafted_urls(data_dir)) >= len(POSTMORTEMS), proc)
        finally:
            stopped = _stop(proc)
        # Stopped while the slow page keeps the run going, promptly (its runner cancels the run
        # through a server that still answers), and the server it started is gone with it.
        assert stopped, "incidents schedule did not stop within 15 s of SIGTERM"
        assert not answers(api)
    assert _drafted_urls(data_dir) == {blog.url(p) for p in POSTMORTEMS}


def test_each_finished_scheduled_run_prints_one_line_with_its_counts(data_dir: Path, tmp_path: Path) -> None:
    import threading

    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = _env(data_dir, tmp_path, INCIDENTS_PREFECT_PORT=str(port))
    lines: list[str] = []
    with LoopbackServer(("127.0.0.1",)) as blog:
        serve_blog(blog)
        proc = _schedule(_sources(tmp_path, blog), data_dir, env)
        reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)  # type: ignore[arg-type]
        reader.start()
        try:
            _wait("served deployment", lambda: _deployment(api) is not None, proc)
            _prefect({**env, "PREFECT_API_URL": api}, "deployment", "run", "ingest/ingest-daily")
            _wait("the run's line", lambda: any("  ingest-daily  " in line for line in lines), proc)
        finally:
            _stop(proc)
    (line,) = [line for line in lines if "  ingest-daily  " in line]
    assert f"{len(POSTMORTEMS)} drafted" in line and "source(s):" in line, lines


def test_a_killed_schedule_leaves_no_server_behind(data_dir: Path, tmp_path: Path) -> None:
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    toml = tmp_path / "sources.toml"
    toml.write_text('[[source]]\nname = "b"\nfeed = "http://127.0.0.1:9/feed.xml"\nschedule = "0 6 * * *"\n')
    proc = _schedule(toml, data_dir, _env(data_dir, tmp_path, INCIDENTS_PREFECT_PORT=str(port)))
    try:
        _wait("served deployment", lambda: _deployment(api, "ingest-default") is not None, proc)
        proc.kill()  # SIGKILL: no cleanup of its own runs
        proc.wait()
        deadline = time.monotonic() + 30
        while answers(api) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not answers(api), "the Prefect server outlived the killed `incidents schedule`"
    finally:
        _stop(proc)


def test_prefect_yaml_deploys_to_a_work_pool_that_a_worker_runs(data_dir: Path, tmp_path: Path) -> None:
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    with LoopbackServer(("127.0.0.1",)) as blog:
        serve_blog(blog)
        toml = _sources(tmp_path, blog)
        env = _env(
            data_dir,
            tmp_path,
            PREFECT_API_URL=api,
            INCIDENTS_CHECKOUT=str(ROOT),
            INCIDENTS_SOURCES=str(toml),
            INCIDENTS_DATA_DIR=str(data_dir),
        )
        server = subprocess.Popen(
            [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            _wait("Prefect server", lambda: answers(api), server)
            _prefect(env, "work-pool", "create", "incidents", "--type", "process")
            _prefect(env, "--no-prompt", "deploy", "--all")  # the README's steps, from the checkout
            assert _deployment(api)["work_pool_name"] == "incidents"  # type: ignore[index]
            _prefect(env, "deployment", "run", "ingest/ingest-daily")
            _prefect(env, "worker", "start", "--pool", "incidents", "--run-once")
            runs = httpx.post(f"{api}/flow_runs/filter", json={}, timeout=10).json()
            # the run triggered now, done; and the cron's next runs, waiting for 06:00 UTC
            assert sorted(r["state_type"] for r in runs if r["state_type"] != "SCHEDULED") == ["COMPLETED"]
            upcoming = [r["expected_start_time"] for r in runs if r["state_type"] == "SCHEDULED"]
            assert upcoming and all("T06:00:00" in t for t in upcoming), upcoming
        finally:
            _stop(server)
    assert _drafted_urls(data_dir) == {blog.url(p) for p in POSTMORTEMS}
