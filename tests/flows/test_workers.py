"""Two Prefect process workers share one data directory, as on two machines (README "Scaling out").

A Prefect server of its own on 127.0.0.1, a process work pool, this repository's prefect.yaml
deployed to it, and two `prefect worker start` processes (each runs one flow at a time, in a
process of its own). Flow runs over overlapping sources from a loopback HTTP server: every page
is drafted once, `archive verify` is clean and each WARC file has one writer; then one worker is
killed with SIGKILL mid-run (its flow run with it) and the run again completes without a duplicate
draft. Reviewers in two processes then approve every draft: record ids are dense and unique.

Slow (a few minutes): a server start, two workers and four flow runs, each flow run a process
that imports Prefect and the pipeline."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from flows.archive.warc import writer_of
from flows.schedule import answers, free_port
from tests.conftest import DATA
from tests.flows.pipeline_fixtures import process_env
from tests.httpserver import LoopbackServer, Reply

ROOT = Path(__file__).resolve().parents[2]
WAIT = 300.0  # a fresh server migrates its database first; a loaded CI machine is slow at it
TEMPLATE = (DATA / "pipeline" / "en-queue-outage.html").read_text(encoding="utf-8")


@pytest.fixture(params=["sqlite", "postgresql"])
def data_backend(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """The environment that selects where the data directory's state lives, for every process.

    "sqlite": the embedded default (index, ledger and discovery state in the data directory).
    "postgresql": a fresh database from tests/postgres.py's `postgres_url`, upgraded with
    `incidents db upgrade`; the test is the same."""
    if request.param == "sqlite":
        yield {}
    else:
        url = request.getfixturevalue("postgres_url")
        env = {**os.environ, "INCIDENTS_DATABASE_URL": url}
        subprocess.run([sys.executable, "-m", "flows", "db", "upgrade"], env=env, cwd=ROOT, check=True)
        yield {"INCIDENTS_DATABASE_URL": url}


def _serve_posts(server: LoopbackServer, first: int, last: int, delay: float = 0.0) -> list[str]:
    urls = []
    for i in range(first, last):
        body = TEMPLATE.replace("message queue backlog", f"message queue backlog number {i}")
        reply = Reply(body=body.encode(), headers={"Content-Type": "text/html"}, delay=delay)
        server.route(f"/posts/outage-{i}.html", reply)
        urls.append(server.url(f"/posts/outage-{i}.html"))
    return urls


def _listing(tmp_path: Path, name: str, urls: list[str]) -> Path:
    path = tmp_path / f"{name}.txt"
    path.write_text("\n".join(urls) + "\n")
    return path


def _wait(what: str, ready: Callable[[], bool], *watched: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + WAIT
    last: Exception | None = None
    while time.monotonic() < deadline:
        for proc in watched:
            if proc.poll() is not None:
                pytest.fail(f"{proc.args[:4]} exited with {proc.returncode} while waiting for {what}")
        try:
            if ready():
                return
        except httpx.HTTPError as exc:  # a busy server on a loaded machine: ask again
            last = exc
        time.sleep(0.5)
    pytest.fail(f"no {what} within {WAIT:.0f}s (last error: {last})")


def _prefect(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "prefect", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _start(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[str]:
    with open(log, "a") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "prefect", *args],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # a group of its own: a kill reaches its flow runs too
        )


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux /proc): the flow run a worker started, and its workers."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill(proc: subprocess.Popen[str]) -> None:
    """SIGKILL to a worker and everything under it, as when its machine loses power."""
    for pid in [proc.pid, *_descendants(proc.pid)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait(timeout=30)


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:  # a worker ignores the first SIGTERM (see PREFECT.md)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


class Api:
    """The Prefect server's REST API, asked again for a while when a loaded server stumbles."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _ask(self, method: str, path: str, body: object = None) -> Any:
        for attempt in range(20):
            try:
                reply = httpx.request(method, f"{self.url}{path}", json=body, timeout=10)
                if reply.status_code < 500:
                    reply.raise_for_status()
                    return reply.json()
            except httpx.TransportError:
                pass
            time.sleep(0.5 * (attempt + 1))
        pytest.fail(f"the Prefect server kept failing {method} {path}")

    def deployment_id(self) -> str:
        return str(self._ask("GET", "/deployments/name/ingest/ingest-daily")["id"])

    def run(self, deployment: str, listing: Path, data_dir: Path) -> str:
        params = {"request": {"from_file": str(listing)}, "data_dir": str(data_dir)}
        made = self._ask("POST", f"/deployments/{deployment}/create_flow_run", {"parameters": params})
        return str(made["id"])

    def infrastructure_pid(self, run: str) -> int | None:
        """The pid of the process running this flow run, once its worker has started it."""
        found = str(self._ask("GET", f"/flow_runs/{run}").get("infrastructure_pid") or "")
        tail = found.rsplit(":", 1)[-1]
        return int(tail) if tail.isdigit() else None

    def workers(self) -> int:
        """How many workers of the pool are online (each has sent its first heartbeat)."""
        found = self._ask("POST", "/work_pools/incidents/workers/filter", {})
        return sum(w.get("status") == "ONLINE" for w in found)

    def state(self, run: str) -> str:
        return str(self._ask("GET", f"/flow_runs/{run}")["state_type"])

    def done(self, *runs: str) -> bool:
        states = [self.state(run) for run in runs]
        failed = [s for s in states if s in ("FAILED", "CRASHED", "CANCELLED")]
        assert not failed, f"flow runs ended {states}"
        return all(s == "COMPLETED" for s in states)


def _ran(api: Api, worker: subprocess.Popen[str], run: str) -> bool:
    """Whether this worker runs this flow run: the run's process (its `infrastructure_pid`, which
    the worker records once it has started it) is one of the worker's descendants. (Not from the
    worker's log: whether a run's own log lines reach it depends on Prefect's logging settings.)"""
    pid = api.infrastructure_pid(run)
    return pid is not None and pid in _descendants(worker.pid)


def _drafts(data_dir: Path) -> list[dict]:
    queue = data_dir / "records" / "queue"
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(queue.glob("d-*.json"))]


def _drafted(data_dir: Path) -> dict[str, int]:
    by_url: dict[str, int] = {}
    for draft in _drafts(data_dir):  # every file parses: no half-written draft
        by_url[draft["source"]["url"]] = by_url.get(draft["source"]["url"], 0) + 1
    return by_url


def _verify(env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "flows", "archive", "verify"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _approve_all(data_dir: str, draft_ids: list[str], reviewer: str, start_at: float) -> list[str]:
    from flows.review import Reviews
    from flows.settings import Settings

    reviews = Reviews(Settings(data_dir=Path(data_dir)))
    time.sleep(max(0.0, start_at - time.time()))
    return [reviews.approve(d, reviewer=reviewer, expected_version=1).id for d in draft_ids]


def test_two_workers_share_a_data_directory_and_a_killed_one_resumes(
    data_dir: Path, tmp_path: Path, data_backend: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in data_backend.items():  # for the reviewers' processes below
        monkeypatch.setenv(key, value)
    port = free_port()
    api = Api(f"http://127.0.0.1:{port}/api")
    env = {
        **process_env(data_dir),
        **data_backend,
        "PREFECT_HOME": str(tmp_path / "prefect"),  # a server of its own, with a fresh database
        "PREFECT_API_URL": api.url,
        "PREFECT_WORKER_QUERY_SECONDS": "1",
        "PREFECT_LOGGING_LEVEL": "INFO",  # the workers' logs, kept for a failure's story
        "INCIDENTS_CHECKOUT": str(ROOT),
        "INCIDENTS_SOURCES": str(tmp_path / "unused.toml"),
        "INCIDENTS_DATA_DIR": str(data_dir),
    }
    logs = [tmp_path / "worker-a.log", tmp_path / "worker-b.log"]
    with LoopbackServer(("127.0.0.1",)) as site:
        first = _serve_posts(site, 0, 50)
        # Slow pages for the second round, so that the kill lands while a run is fetching.
        second = _serve_posts(site, 50, 130, delay=0.25)
        server = _start(
            env, tmp_path / "server.log", "server", "start", "--host", "127.0.0.1", "--port", str(port)
        )
        workers: list[subprocess.Popen[str]] = []
        try:
            _wait("Prefect server", lambda: answers(api.url), server)
            _prefect(env, "work-pool", "create", "incidents", "--type", "process")
            _prefect(env, "--no-prompt", "deploy", "--all")  # prefect.yaml, as the README deploys it
            deployment = api.deployment_id()
            # One flow run at a time per worker: two runs go to two workers.
            workers = [
                _start(env, log, "worker", "start", "--pool", "incidents", "--limit", "1") for log in logs
            ]
            # Both polling before any run exists, else the first one up could take both in turn.
            _wait("two workers online", lambda: api.workers() == 2, server, *workers)

            # Round 1: overlapping sources (20-29 in both), one run on each worker.
            runs = [
                api.run(deployment, _listing(tmp_path, "one", first[:30]), data_dir),
                api.run(deployment, _listing(tmp_path, "two", first[20:]), data_dir),
            ]
            _wait("round 1", lambda: api.done(*runs), server, *workers)
            assert _drafted(data_dir) == dict.fromkeys(first, 1)
            # (Which worker ran which is not asserted here: a fast run may end before the other
            # worker's next poll, and the first worker then takes both in turn. Round 2's runs are
            # slow, and both RUNNING at once with --limit 1 means two workers ran them.)
            _verify(env)

            # Round 2: overlapping again (90-99 in both); one worker dies mid-run, flow and all.
            runs = [
                api.run(deployment, _listing(tmp_path, "three", second[:50]), data_dir),
                api.run(deployment, _listing(tmp_path, "four", second[40:]), data_dir),
            ]
            _wait(
                "both runs fetching", lambda: all(api.state(r) == "RUNNING" for r in runs), server, *workers
            )
            _wait("pages fetched", lambda: site.count() >= len(first) + 20, server, *workers)
            victim = next(i for i, w in enumerate(workers) if any(_ran(api, w, r) for r in runs))
            killed = next(r for r in runs if _ran(api, workers[victim], r))
            survivor = next(r for r in runs if r != killed)
            _kill(workers[victim])
            _wait("the other run", lambda: api.done(survivor), server, workers[1 - victim])
            assert api.state(killed) == "RUNNING"  # Prefect still thinks so: nobody reports
            # The killed worker's service comes back (or the other worker takes the run): the
            # killed run's sources are run again, and finish what the killed run began.
            workers[victim] = _start(
                env, logs[victim], "worker", "start", "--pool", "incidents", "--limit", "1"
            )
            listing = tmp_path / ("three.txt" if killed == runs[0] else "four.txt")
            again = api.run(deployment, listing, data_dir)
            _wait("the resumed run", lambda: api.done(again), server, *workers)
        finally:
            for proc in [*workers, server]:
                _stop(proc)

    assert _drafted(data_dir) == dict.fromkeys(first + second, 1)  # every page once, none twice
    _verify(env)
    # Each WARC file has one writer: files from several flow-run processes, one name each.
    names = [p.name for p in (data_dir / "raw" / "warc").glob("*.warc.gz")]
    pids = {writer_of(name).pid for name in names}  # type: ignore[union-attr]
    assert len(pids) >= 3, names  # rounds 1 and 2 ran in at least three flow-run processes

    # Reviewers in two processes approve every draft at once: ids dense and unique.
    draft_ids = [d["draft_id"] for d in _drafts(data_dir)]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        start_at = time.time() + 3.0
        halves = [draft_ids[0::2], draft_ids[1::2]]
        approved = list(pool.map(_approve_all, [str(data_dir)] * 2, halves, ["ana", "ben"], [start_at] * 2))
    ids = sorted(i for half in approved for i in half)
    assert ids == [f"IL-{n:04d}" for n in range(1, len(draft_ids) + 1)]
