"""The per-page time limit: it stops what signals can stop, and leaves nothing armed behind."""

from __future__ import annotations

import gc
import re
import signal
import sys
import threading
import time

import pytest

from flows.deadline import available, run_limited
from schema.errors import ExtractionError

pytestmark = pytest.mark.skipif(not available(), reason="needs SIGALRM and setitimer (POSIX)")


def test_a_runaway_pattern_is_stopped_with_the_setting_named() -> None:
    started = time.monotonic()
    expected = r"took longer than 0\.2 s.*INCIDENTS_DRAFT_TIMEOUT"
    with pytest.raises(ExtractionError, match=expected):
        # backtracks for far longer than any test runs
        run_limited(lambda: re.match(r"(a+)+b", "a" * 60), 0.2, "drafting")
    assert time.monotonic() - started < 30


def test_a_broad_except_in_the_work_does_not_swallow_the_limit() -> None:
    def library_code() -> None:  # as trafilatura and lxml wrappers do
        while True:
            try:
                sum(range(1000))
            except Exception:  # noqa: BLE001 - what we must survive
                continue

    with pytest.raises(ExtractionError):
        run_limited(library_code, 0.1, "drafting")


def test_nothing_stays_armed_after_the_work() -> None:
    before = signal.getsignal(signal.SIGALRM)
    assert run_limited(lambda: "done", 5, "drafting") == "done"

    def failing() -> None:
        raise ValueError("the work's own error passes through")

    with pytest.raises(ValueError, match="passes through"):
        run_limited(failing, 5, "drafting")
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) == before
    time.sleep(0.01)  # an alarm left armed would fire here


def test_no_limit_runs_the_work_to_its_end() -> None:
    assert run_limited(lambda: time.sleep(0.05) or "slept", 0, "drafting") == "slept"


def test_off_the_main_thread_the_work_runs_unlimited() -> None:
    # signals reach only the main thread: a Dask worker's task thread runs without the limit
    ended: list[bool] = []

    def work() -> None:
        run_limited(lambda: time.sleep(0.1), 0.01, "drafting")
        ended.append(True)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert ended == [True]


def test_an_alarm_swallowed_where_it_landed_comes_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # Python drops what a gc callback raises (a test run's hypothesis installs one); the first
    # callback here would outlast the limit, so the alarm lands in it, ends it, and is dropped
    dropped: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: dropped.append(u.exc_type))
    state = {"slow": True, "cut_short": False}

    def callback(phase: str, info: dict[str, int]) -> None:
        if state["slow"] and phase == "start":
            state["slow"] = False
            until = time.monotonic() + 0.3
            try:
                while time.monotonic() < until:
                    sum(range(100))
            finally:
                state["cut_short"] = time.monotonic() < until

    def work() -> None:
        gc.collect()  # the slow callback runs here: the alarm that ends it is dropped
        until = time.monotonic() + 5  # a single alarm, swallowed, would leave the work to end here
        while time.monotonic() < until:
            sum(range(100))

    gc.callbacks.append(callback)
    try:
        with pytest.raises(ExtractionError, match="took longer than 0.1 s"):
            run_limited(work, 0.1, "drafting")
    finally:
        gc.callbacks.remove(callback)
    assert state["cut_short"]  # the alarm did land in the callback
    # ... and was let go quietly: no traceback on the terminal (nor a failed test under pytest)
    assert dropped == []
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_other_unraisable_errors_still_reach_the_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[type[BaseException]] = []

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        seen.append(unraisable.exc_type)

    monkeypatch.setattr(sys, "unraisablehook", hook)

    class Leaky:
        def __del__(self) -> None:
            raise KeyError("a finalizer's own bug")

    def work() -> str:
        Leaky()  # collected at once: its error is unraisable
        return "done"

    assert run_limited(work, 5, "drafting") == "done"
    assert seen == [KeyError]
    assert sys.unraisablehook is hook  # put back
