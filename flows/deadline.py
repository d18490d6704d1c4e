"""A time limit on one page's CPU stage, so a page that sends a parser or a pattern into a very
long run fails with a reason instead of holding the whole run (and its worker) forever.

The limit is SIGALRM, the only thing that interrupts a running regex from the outside: CPython's
matcher checks for signals as it backtracks. It holds where signals can be had: the main thread
of a process (a pool worker, or the ingest drafting a page itself) on a system with setitimer.
Elsewhere (Windows, a Dask worker's task thread) the work runs without a limit; so does a hang
inside C code that never returns to the interpreter.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from schema.errors import ExtractionError


class _OutOfTime(BaseException):
    """Raised by the alarm inside the work. Not an Exception: the libraries we call catch those
    broadly and would carry on as if nothing had happened."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _OutOfTime


def available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float, what: str) -> Iterator[None]:
    """Run the body for at most `seconds` (0 or less: no limit); ExtractionError past it."""
    if seconds <= 0 or not available():
        yield
        return
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds)
            yield
        finally:
            # disarmed inside the handler's reach: an alarm due just as the work ends is caught too
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _OutOfTime:
        raise ExtractionError(
            f"{what} took longer than {seconds:g} s and was stopped (the page may be pathological;"
            " INCIDENTS_DRAFT_TIMEOUT sets the limit)"
        ) from None
    finally:
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
