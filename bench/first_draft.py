"""The first thing a new user runs: how long one saved page takes to be drafted, next to Prefect.

usage: .venv/bin/python bench/first_draft.py [--runs 3] [--page examples/postmortem.html]

Prints, from one run, the median (and min) wall time of:
- a bare Prefect hello-world flow in ephemeral mode (its temporary server starts and stops),
- `incidents ingest PAGE` in ephemeral mode (a fresh data directory each time, so it drafts),
- the same against a running local `prefect server` (PREFECT_API_URL set), started here,
- `incidents draft PAGE` (no Prefect at all),
- errors found before any flow: a missing file, an ftp:// URL, `incidents ingest --help`;
and checks the targets: ephemeral ingest <= bare flow + 1.5 s, with a server <= 3 s, errors <= 1 s.
Runs alternate (hello, ingest, hello, ...) so that a machine whose speed drifts treats both alike.
Every command is a fresh process, as a curator's would be; Prefect gets a home of its own here,
warmed by one untimed run (its database exists, as on any machine after the first run).
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._temp import temp_dir  # noqa: E402

HELLO = "from prefect import flow\n\n@flow\ndef hello() -> int:\n    return 1\n\nhello()\n"


def _env(home: Path, api: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INCIDENTS_", "PREFECT_"))}
    env |= {
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_SERVER_LOGGING_LEVEL": "CRITICAL",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
        "DO_NOT_TRACK": "1",
        "PYTHONPATH": str(ROOT),
    }
    if api:
        env["PREFECT_API_URL"] = api
    return env


CPU: dict[str, list[float]] = {}  # CPU seconds of each timed command and its children, by label


def _timed(cmd: list[str], env: dict[str, str], cwd: Path, expect: int = 0, label: str = "") -> float:
    """Wall seconds of one run; its CPU seconds (user + system, with the children it waited for,
    such as Prefect's temporary server) go to CPU[label]: a figure less at the mercy of a shared
    machine's load than the wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != expect:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}, not {expect}:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU.setdefault(label, []).append(cpu)
    return took


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_server(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    import httpx

    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"
    cmd = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{api}/health", timeout=2).status_code == 200:
                return proc, api
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise SystemExit(f"prefect server exited with {proc.returncode}")
        time.sleep(0.5)
    proc.terminate()
    raise SystemExit("prefect server did not come up within 180 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--page", type=Path, default=ROOT / "examples" / "postmortem.html")
    args = parser.parse_args()
    page = args.page.resolve()
    work = temp_dir("bench-first-draft-")
    home = work / "prefect-home"
    hello = work / "hello.py"
    hello.write_text(HELLO)
    py = sys.executable
    incidents = [py, "-m", "flows"]
    env = _env(home)
    runs: dict[str, list[float]] = {k: [] for k in ("hello", "ingest", "ingest+server", "draft", "errors")}

    def fresh_dir() -> Path:
        return Path(tempfile.mkdtemp(dir=work, prefix="data-"))

    print(f"warming Prefect's home {home} (one untimed run) ...", file=sys.stderr)
    _timed([py, str(hello)], env, work)
    for i in range(args.runs):
        print(f"run {i + 1}/{args.runs}: ephemeral", file=sys.stderr)
        runs["hello"].append(_timed([py, str(hello)], env, work, label="hello"))
        ingest = [*incidents, "ingest", str(page), "--data-dir", str(fresh_dir())]
        runs["ingest"].append(_timed(ingest, env, work, label="ingest"))
        runs["draft"].append(_timed([*incidents, "draft", str(page)], env, work, label="draft"))
        errors = [
            ([*incidents, "ingest", str(work / "missing.html")], 0),  # a failed source, at once
            ([*incidents, "ingest", "ftp://ftp.example.org/postmortem.html"], 2),
            ([*incidents, "ingest", "--help"], 0),
        ]
        runs["errors"].append(max(_timed(cmd, env, work, expect, label="errors") for cmd, expect in errors))

    print("starting a local prefect server ...", file=sys.stderr)
    server, api = _start_server(env)
    try:
        with_server = _env(home, api)
        _timed(
            [*incidents, "ingest", str(page), "--data-dir", str(fresh_dir())], with_server, work
        )  # untimed
        for i in range(args.runs):
            print(f"run {i + 1}/{args.runs}: with a server", file=sys.stderr)
            ingest = [*incidents, "ingest", str(page), "--data-dir", str(fresh_dir())]
            runs["ingest+server"].append(_timed(ingest, with_server, work, label="ingest+server"))
    finally:
        server.terminate()
        server.wait(timeout=60)

    med = {k: statistics.median(v) for k, v in runs.items()}
    targets = {
        "ingest": (med["hello"] + 1.5, "<= bare flow + 1.5 s"),
        "ingest+server": (3.0, "<= 3 s"),
        "errors": (1.0, "<= 1 s"),
    }
    labels = {
        "hello": "bare Prefect hello-world flow, ephemeral",
        "ingest": "`incidents ingest PAGE`, ephemeral",
        "ingest+server": "`incidents ingest PAGE`, running `prefect server`",
        "draft": "`incidents draft PAGE`",
        "errors": "errors before any flow (slowest of 3)",
    }
    print(f"\n{args.runs} runs each, {os.cpu_count()} cores, page {page.name}\n")
    print("| what | median s | min s | CPU s (median) | target | met |")
    print("|---|---|---|---|---|---|")
    for key, label in labels.items():
        bound, text = targets.get(key, (None, ""))
        met = "" if bound is None else ("yes" if med[key] <= bound else "no")
        cpu = statistics.median(CPU.get(key, [0.0]))
        print(f"| {label} | {med[key]:.2f} | {min(runs[key]):.2f} | {cpu:.2f} | {text} | {met} |")
    print(f"\nephemeral ingest - bare flow: {med['ingest'] - med['hello']:+.2f} s wall (median)")
    print("(CPU: the command and the children it waited for; a running server's own CPU is not in it)")
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
