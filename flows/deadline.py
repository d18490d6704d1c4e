"""A time limit on one page's CPU stage, so a page that sends a parser or a pattern into a very
long run fails with a reason instead of holding the whole run (and its worker) forever.

The limit is SIGALRM, the only thing that interrupts a running regex from the outside: CPython's
matcher checks for signals as it backtracks. It holds where signals can be had: the main thread
of a process (a pool worker, or the ingest drafting a page itself) on a system with setitimer.
Elsewhere (Windows, a Dask worker's task thread) the work runs without a limit; so does a hang
inside C code that never returns to the interpreter.

Python runs a signal's handler wherever the interpreter happens to be, and some of those places
swallow what it raises: a gc callback, a __del__, a weakref callback (a test run's hypothesis
installs a gc callback, and a long page collects often). So once due, the alarm repeats every
REPEAT seconds until the work has stopped; and it is a function, not a with-block, because the
only place the repeats can be switched off without a gap is the first statement of a finally
in the same frame as the call (an __exit__ call can itself be interrupted on entry).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, TypeVar

from schema.errors import ExtractionError

if TYPE_CHECKING:
    from sys import UnraisableHookArgs

T = TypeVar("T")

REPEAT = 0.02
_armed = False


class _OutOfTime(BaseException):
    """Raised by the alarm inside the work. Not an Exception: the libraries we call catch those
    broadly and would carry on as if nothing had happened."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    if _armed:  # a repeat that lands after the work has stopped is let go
        raise _OutOfTime


def _quiet(previous: Callable[[UnraisableHookArgs], object]) -> Callable[[UnraisableHookArgs], None]:
    """sys.unraisablehook for the armed window: an alarm swallowed by a __del__ or a gc callback
    is expected (its repeat comes), and the default hook would print its traceback on the
    curator's terminal (and pytest's would fail the test that saw it)."""

    def hook(unraisable: UnraisableHookArgs) -> None:
        if not isinstance(unraisable.exc_value, _OutOfTime):
            previous(unraisable)

    return hook


def available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def run_limited(work: Callable[[], T], seconds: float, what: str) -> T:
    """work(), stopped after `seconds` (0 or less: no limit) with an ExtractionError naming `what`."""
    global _armed
    if seconds <= 0 or not available():
        return work()
    previous = signal.signal(signal.SIGALRM, _alarm)
    hook = sys.unraisablehook
    sys.unraisablehook = _quiet(hook)
    try:
        try:
            _armed = True
            signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT)
            return work()
        finally:
            # first, before any call (a call is where a pending signal's handler may run): from
            # here on the handler returns quietly, so nothing below can be interrupted by it
            _armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _OutOfTime:
        raise ExtractionError(
            f"{what} took longer than {seconds:g} s and was stopped (the page may be pathological;"
            " INCIDENTS_DRAFT_TIMEOUT sets the limit)"
        ) from None
    finally:
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
        sys.unraisablehook = hook
