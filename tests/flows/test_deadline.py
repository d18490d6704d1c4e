"""The per-page time limit: it stops what signals can stop, and leaves nothing armed behind."""

from __future__ import annotations

import re
import signal
import threading
import time

import pytest

from flows.deadline import available, time_limit
from schema.errors import ExtractionError

pytestmark = pytest.mark.skipif(not available(), reason="needs SIGALRM and setitimer (POSIX)")


def test_a_runaway_pattern_is_stopped_with_the_setting_named() -> None:
    started = time.monotonic()
    expected = r"took longer than 0\.2 s.*INCIDENTS_DRAFT_TIMEOUT"
    with pytest.raises(ExtractionError, match=expected), time_limit(0.2, "drafting"):
        re.match(r"(a+)+b", "a" * 60)  # backtracks for far longer than any test runs
    assert time.monotonic() - started < 30


def test_a_broad_except_in_the_work_does_not_swallow_the_limit() -> None:
    def library_code() -> None:  # as trafilatura and lxml wrappers do
        while True:
            try:
                sum(range(1000))
            except Exception:  # noqa: BLE001, S112 - what we must survive
                continue

    with pytest.raises(ExtractionError), time_limit(0.1, "drafting"):
        library_code()


def test_nothing_stays_armed_after_the_work() -> None:
    before = signal.getsignal(signal.SIGALRM)
    with time_limit(5, "drafting"):
        pass
    with pytest.raises(ValueError), time_limit(5, "drafting"):
        raise ValueError("the work's own error passes through")
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) == before
    time.sleep(0.01)  # an alarm left armed would fire here


def test_no_limit_runs_the_work_to_its_end() -> None:
    with time_limit(0, "drafting"):
        time.sleep(0.05)


def test_off_the_main_thread_the_work_runs_unlimited() -> None:
    # signals reach only the main thread: a Dask worker's task thread runs without the limit
    ended: list[bool] = []

    def work() -> None:
        with time_limit(0.01, "drafting"):
            time.sleep(0.1)
        ended.append(True)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert ended == [True]
