"""No orphans: when `incidents ingest` is killed (kill -9 included), its Prefect temporary server
and its extraction workers die with it, instead of running on under PID 1 (flows/lifetime.py).

Processes are read from /proc: what a process's children are, and whether one still runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.flows.pipeline_fixtures import process_env
from tests.httpserver import LoopbackServer, Reply

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="reads processes from /proc (Linux)"
)


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return ""


def descendants(root: int) -> dict[int, str]:
    """Every process under `root` (children, theirs...), with its command line."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None:
                parents[int(entry.name)] = stat[1]
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found[pid] = _cmdline(pid)
                frontier.append(pid)
    return found


def running(pid: int) -> bool:
    """Still running: present and not a zombie (in a container nothing may reap an orphan)."""
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def survivors(pids: dict[int, str], within: float) -> dict[int, str]:
    deadline = time.monotonic() + within
    while True:
        alive = {pid: cmd for pid, cmd in pids.items() if running(pid)}
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


def _kill_all(pids: dict[int, str]) -> None:
    for pid in pids:
        if running(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_killed_ingest_leaves_no_process_behind(tmp_path: Path, data_dir: Path) -> None:
    """A real run: ten saved pages (drafted by the worker pool) and a page whose server answers
    only after a minute, so the run is mid-way, its server and workers up, when it is killed."""
    page = (DATA / "pipeline" / "en-queue-outage.html").read_text(encoding="utf-8")
    pages = []
    for n in range(10):
        path = tmp_path / f"page-{n}.html"
        path.write_text(page.replace("message queue", f"message queue {n}"), encoding="utf-8")
        pages.append(str(path))
    with LoopbackServer(["127.0.0.1"]) as server:
        slow = Reply(body=b"<html><body>late</body></html>", headers={"Content-Type": "text/html"}, delay=60)
        server.route("/late", slow)
        env = {**process_env(data_dir), "INCIDENTS_READ_TIMEOUT": "120", "INCIDENTS_TOTAL_TIMEOUT": "120"}
        cmd = [sys.executable, "-m", "flows", "ingest", *pages, server.url("/late"), "--workers", "2"]
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        seen: dict[int, str] = {}
        try:
            deadline = time.monotonic() + 240
            # Mid-run: Prefect's server is up, the page that hangs has been asked for, and the
            # pool has forked workers (fork server children of the fork server).
            while time.monotonic() < deadline and proc.poll() is None:
                seen.update(descendants(proc.pid))
                servers = [cmd for cmd in seen.values() if "uvicorn" in cmd]
                forked = [cmd for cmd in seen.values() if "multiprocessing.forkserver" in cmd]
                if servers and len(forked) >= 2 and server.hits("/late"):
                    break
                time.sleep(0.3)
            seen.update(descendants(proc.pid))
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert any("uvicorn" in cmd for cmd in seen.values()), seen
            assert sum("multiprocessing.forkserver" in cmd for cmd in seen.values()) >= 2, seen
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            left = survivors(seen, within=20)
            assert not left, f"still running after ingest was killed with kill -9: {left}"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            _kill_all(seen)


def _parent_script(mode: str) -> str:
    """A process that starts `python -m flows._guarded SELF MODE -m http.server` and sleeps."""
    return (
        "import os, subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-m', 'flows._guarded', str(os.getpid()), '{mode}', "
        "'-m', 'http.server', '0', '--bind', '127.0.0.1'], stdout=subprocess.DEVNULL, "
        "stderr=subprocess.DEVNULL)\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(300)\n"
    )


@pytest.mark.parametrize("mode", ["pdeathsig", "watch"])
def test_a_guarded_child_dies_with_its_parent(mode: str) -> None:
    """Each guard on its own: the kernel's parent-death signal, and the watchdog thread."""
    parent = subprocess.Popen(
        [sys.executable, "-c", _parent_script(mode)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        time.sleep(1.0)  # the child is up, its guard set
        assert running(child)
        parent.kill()
        parent.wait()
        assert not survivors({child: "guarded http.server"}, within=10)
    finally:
        if running(child):
            os.kill(child, signal.SIGKILL)


def test_an_unguarded_child_would_outlive_its_parent() -> None:
    """The control: the same child without the guard runs on (so the tests above can fail)."""
    script = _parent_script("watch").replace("'-m', 'flows._guarded', str(os.getpid()), 'watch', ", "")
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        parent.kill()
        parent.wait()
        assert survivors({child: "http.server"}, within=2)
    finally:
        if running(child):
            os.kill(child, signal.SIGKILL)
