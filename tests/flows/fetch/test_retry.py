"""Retries: only transient failures, with backoff and Retry-After; other 4xx never."""

from __future__ import annotations

import random
import socket
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest

from flows.fetch import Fetcher, HTTPStatusFailure, SourceGone
from flows.fetch.retry import backoff_delay, parse_retry_after
from flows.settings import Settings
from schema.errors import FetchError
from tests.flows.fetch.conftest import fast_settings
from tests.httpserver import LoopbackServer, Reply

OK = Reply(body=b"<p>ok</p>", headers={"Content-Type": "text/html"})


def test_503_twice_then_200(settings: Settings, loopback: LoopbackServer) -> None:
    loopback.route("/p", [Reply(503), Reply(503), OK])
    with Fetcher(settings) as fetcher:
        result = fetcher.fetch(loopback.url("/p"))
    assert result.status == 200 and result.attempts == 3
    assert loopback.count("/p") == 3


@pytest.mark.parametrize("status", [429, 502, 504])
def test_other_transient_statuses_are_retried(
    settings: Settings, loopback: LoopbackServer, status: int
) -> None:
    loopback.route("/p", [Reply(status), OK])
    with Fetcher(settings) as fetcher:
        assert fetcher.fetch(loopback.url("/p")).attempts == 2


def test_429_retry_after_seconds_is_honoured(settings: Settings, loopback: LoopbackServer) -> None:
    loopback.route("/p", [Reply(429, headers={"Retry-After": "1"}), OK])
    with Fetcher(settings) as fetcher:
        fetcher.fetch(loopback.url("/p"))
    first, second = (hit.at for hit in loopback.hits("/p"))
    assert second - first >= 0.9


def test_retry_after_http_date_is_honoured(settings: Settings, loopback: LoopbackServer) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=3), usegmt=True)
    loopback.route("/p", [Reply(503, headers={"Retry-After": when}), OK])
    with Fetcher(settings) as fetcher:
        fetcher.fetch(loopback.url("/p"))
    first, second = (hit.at for hit in loopback.hits("/p"))
    assert second - first >= 1.5  # 2 to 3 s: the date has one-second resolution


def test_retry_after_beyond_the_cap_gives_up(data_dir: Path, loopback: LoopbackServer) -> None:
    loopback.route("/p", [Reply(429, headers={"Retry-After": "3600"}), OK])
    with Fetcher(fast_settings(data_dir, max_retry_after=5)) as fetcher, pytest.raises(FetchError) as exc:
        fetcher.fetch(loopback.url("/p"))
    assert "3600s" in str(exc.value) and "INCIDENTS_MAX_RETRY_AFTER" in str(exc.value)
    assert loopback.count("/p") == 1


def test_retries_run_out(data_dir: Path, loopback: LoopbackServer) -> None:
    loopback.route("/p", Reply(503))
    with Fetcher(fast_settings(data_dir, max_retries=2)) as fetcher, pytest.raises(HTTPStatusFailure) as exc:
        fetcher.fetch(loopback.url("/p"))
    assert exc.value.status == 503 and "after 3 attempts" in str(exc.value)
    assert loopback.count("/p") == 3


@pytest.mark.parametrize("status", [400, 401, 403, 451, 500])
def test_other_errors_are_never_retried(settings: Settings, loopback: LoopbackServer, status: int) -> None:
    loopback.route("/p", [Reply(status), OK])
    with Fetcher(settings) as fetcher, pytest.raises(HTTPStatusFailure) as exc:
        fetcher.fetch(loopback.url("/p"))
    assert exc.value.status == status and "not retried" in str(exc.value)
    assert loopback.count("/p") == 1


@pytest.mark.parametrize("status", [404, 410])
def test_gone_is_never_retried(settings: Settings, loopback: LoopbackServer, status: int) -> None:
    loopback.route("/p", [Reply(status), OK])
    with Fetcher(settings) as fetcher, pytest.raises(SourceGone):
        fetcher.fetch(loopback.url("/p"))
    assert loopback.count("/p") == 1


def test_connect_errors_are_retried_then_reported(data_dir: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with Fetcher(fast_settings(data_dir, max_retries=2)) as fetcher, pytest.raises(FetchError) as exc:
        fetcher.fetch(f"http://127.0.0.1:{port}/p")
    assert "could not connect to 127.0.0.1" in str(exc.value) and "after 3 attempts" in str(exc.value)


def test_backoff_grows_and_is_jittered() -> None:
    rng = random.Random(7)
    delays = [backoff_delay(n, 1.0, 100.0, rng) for n in range(5)]
    for n, delay in enumerate(delays):
        assert 2**n / 2 <= delay <= 2**n
    assert len({round(d / 2**n, 6) for n, d in enumerate(delays)}) > 1  # not a fixed multiple
    assert backoff_delay(20, 1.0, 30.0, rng) <= 30.0


def test_parse_retry_after() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Thu, 01 Jan 2026 00:00:30 GMT", now) == 30.0
    assert parse_retry_after("Wed, 31 Dec 2025 00:00:00 GMT", now) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
