"""Child processes that die with the process that started them, whatever killed it.

`incidents ingest` starts two kinds of helper process: Prefect's temporary API server (uvicorn,
about 190 MB and a loopback port) and, for a large run, the extraction workers (forked from a
fork server, about 370 MB together). Prefect stops its server from an atexit hook and the pool
is shut down in a `finally`: neither runs when ingest is killed by a signal (kill -9, the OOM
killer, a cron timeout's SIGTERM), and the children were left running under PID 1.

Each such child therefore guards itself, from inside, in two ways:
- a parent-death signal (Linux prctl(PR_SET_PDEATHSIG) through ctypes): the kernel signals the
  child the moment the thread that forked it ends. Used only where that thread lives as long as
  the process (the main thread; a fork server's single thread), as a thread that ends early
  would take the child with it;
- a watchdog thread that waits on the ingest process itself (a pidfd where the kernel has them,
  else a poll every half second) and ends the child when it is gone: SIGTERM first (uvicorn shuts
  down cleanly), then SIGKILL after a grace period.

`guard_prefect_server()` makes Prefect start its server through `python -m flows._guarded`, which
installs the guard and then runs uvicorn as Prefect asked; `guard_worker` is the extraction
pool's initializer.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any

PR_SET_PDEATHSIG = 1
GRACE = 10.0  # seconds between the SIGTERM a child sends itself and the SIGKILL after it
POLL = 0.5  # seconds between looks at the parent where no pidfd can be had

# A process started by `guard_prefect_server`: `python -m flows._guarded PID MODE -m uvicorn ...`.
GUARD_MODULE = "flows._guarded"


def set_parent_death_signal(signum: int) -> bool:
    """Ask the kernel to send `signum` to this process when its parent thread ends (Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _wait_for_exit(pid: int) -> None:
    """Return once process `pid` has ended (at once if it already has)."""
    fd: int | None = None
    with contextlib.suppress(AttributeError, OSError):
        fd = os.pidfd_open(pid)  # type: ignore[attr-defined,unused-ignore]
    if fd is None:
        while _alive(pid):
            time.sleep(POLL)
        return
    try:
        while True:
            ready, _, _ = select.select([fd], [], [])
            if ready:
                return
    finally:
        os.close(fd)


def _end_self(grace: float) -> None:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(grace)
    os.kill(os.getpid(), signal.SIGKILL)


def watch_parent(pid: int, *, grace: float = GRACE) -> threading.Thread:
    """A daemon thread that ends this process (SIGTERM, then SIGKILL after `grace` s) once the
    process `pid` has ended."""

    def run() -> None:
        _wait_for_exit(pid)
        _end_self(grace)

    thread = threading.Thread(target=run, name=f"die-with-{pid}", daemon=True)
    thread.start()
    return thread


def die_with(pid: int, *, pdeathsig: int | None, grace: float = GRACE) -> None:
    """Guard this process so it ends when process `pid` (the ingest) ends.

    `pdeathsig`: also ask the kernel for that signal when this process's parent thread ends
    (only where the parent thread lives as long as `pid` does; None: the watchdog alone)."""
    if pdeathsig is not None:
        set_parent_death_signal(pdeathsig)
    # The parent may have died before the guard was set (the kernel then never signals): look.
    if not _alive(pid) or (pdeathsig is not None and os.getppid() == 1):
        os.kill(os.getpid(), pdeathsig or signal.SIGTERM)
    watch_parent(pid, grace=grace)


def guard_worker(parent: int) -> None:
    """Initializer of the extraction workers: die with the ingest process `parent`.

    A worker forked by the fork server is the child of that server's only thread, which ends
    when the ingest does (the server exits when its pipe from the ingest closes): a parent-death
    SIGKILL then ends the worker even mid-page, when no Python thread gets to run. A worker
    spawned by the ingest itself (no fork server) has the watchdog only."""
    forked_by_server = os.getppid() != parent
    die_with(parent, pdeathsig=signal.SIGKILL if forked_by_server else None, grace=2.0)


def guarded_command(args: Sequence[str], *, parent: int, main_thread: bool) -> list[str]:
    """`python -m X ...` rewritten as `python -m flows._guarded PARENT MODE -m X ...`."""
    mode = "pdeathsig" if main_thread else "watch"
    return [args[0], "-m", GUARD_MODULE, str(parent), mode, *args[1:]]


class _GuardedSubprocess(ModuleType):
    """What Prefect's server module sees as `subprocess`: the real module, except that a Popen
    of `python -m uvicorn` (its temporary server) starts through flows._guarded."""

    def __init__(self, real: ModuleType) -> None:
        super().__init__("subprocess")
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def Popen(self, args: Any, *rest: Any, **kwargs: Any) -> Any:
        if isinstance(args, list) and args[1:3] == ["-m", "uvicorn"]:
            main = threading.current_thread() is threading.main_thread()
            args = guarded_command(args, parent=os.getpid(), main_thread=main)
        return self._real.Popen(args, *rest, **kwargs)


def guard_prefect_server() -> bool:
    """Make Prefect's temporary server, when it is started from this process, die with it.

    Call before the first flow runs (free to call again). False when Prefect's server module no
    longer starts its server the way this expects (the server then runs unguarded, as before)."""
    from prefect.server.api import server as module

    current = getattr(module, "subprocess", None)
    if isinstance(current, _GuardedSubprocess):
        return True
    if not isinstance(current, ModuleType) or not hasattr(module, "SubprocessASGIServer"):
        return False
    module.subprocess = _GuardedSubprocess(current)
    return True
