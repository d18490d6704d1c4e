"""`incidents schedule`: one Prefect deployment per scheduled group of sources.toml, served here."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from flows.sources import load_sources
from schema.errors import InputError

SERVER_START_TIMEOUT = 120.0


def schedules(sources_file: Path) -> dict[str, str]:
    """group -> cron, for every group whose sources carry a schedule; one cron per group."""
    crons: dict[str, set[str]] = {}
    for group in load_sources(sources_file).source:
        if group.schedule:
            crons.setdefault(group.group, set()).add(group.schedule)
    clashes = {g: c for g, c in crons.items() if len(c) > 1}
    if clashes:
        listing = "; ".join(f"{g}: {', '.join(sorted(c))}" for g, c in sorted(clashes.items()))
        raise InputError(f"{sources_file}: the sources of one group must share a schedule ({listing})")
    if not crons:
        raise InputError(f'{sources_file}: no source has a schedule (add schedule = "0 6 * * *")')
    return {g: next(iter(c)) for g, c in sorted(crons.items())}


def deployments(sources_file: Path, data_dir: Path, *, announce: str = "line") -> list[Any]:
    """A deployment of the ingest flow per group: its cron, and parameters that name the group.
    `announce`: each run prints one line when it ends ("line", "json", or "" for none)."""
    from flows.pipeline import IngestRequest, ingest_flow

    out = []
    for group, cron in schedules(sources_file).items():
        request = IngestRequest(sources_file=str(sources_file.resolve()), groups=[group])
        parameters = {"request": request.model_dump(mode="json"), "data_dir": str(data_dir.resolve())}
        out.append(
            ingest_flow.to_deployment(
                name=f"ingest-{group}",
                cron=cron,
                parameters={**parameters, "announce": announce},
                tags=["incident-ingest", f"group:{group}"],
                description=f"Ingest the {group!r} sources of {sources_file.name} on {cron}",
            )
        )
    return out


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (for a server started next)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answers(api: str) -> bool:
    """Whether a Prefect server answers its health check at `api`."""
    try:
        return httpx.get(f"{api}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _die_with_this_process() -> Callable[[], None] | None:
    """Linux: a preexec hook that has the kernel send the child SIGTERM when this process dies,
    however it dies (SIGKILL included), so a server started for it never outlives it. The kernel
    ties it to the thread that starts the child: start it from the main thread, as the CLI does."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: the hook runs after fork
    except (OSError, AttributeError):  # a libc without prctl: the server may outlive a kill -9
        return None
    pr_set_pdeathsig = 1
    return lambda: prctl(pr_set_pdeathsig, signal.SIGTERM)


def start_local_server() -> tuple[subprocess.Popen[bytes], str]:
    """`prefect server start` on 127.0.0.1, waited for; serve() refuses Prefect's ephemeral mode.

    The server runs in a session of its own: Ctrl-C, or a stop signal sent to this command's
    process group, reaches only this process, which then shuts its runner down while the server
    still answers (the runner's shutdown calls the API, and against a server stopped alongside
    it, retried for a minute) and stops the server last."""
    port = int(os.environ.get("INCIDENTS_PREFECT_PORT") or free_port())
    api = f"http://127.0.0.1:{port}/api"
    proc = subprocess.Popen(
        [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        # preexec_fn is unsafe where threads run; none do yet, and the hook is one syscall
        preexec_fn=_die_with_this_process(),
    )
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise InputError(
                f"prefect server exited with {proc.returncode}; run `prefect server start` to see why"
            )
        if answers(api):
            return proc, api
        time.sleep(0.5)
    proc.terminate()
    raise InputError(f"prefect server did not answer on {api} within {SERVER_START_TIMEOUT:.0f}s")
