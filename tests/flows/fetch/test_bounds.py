"""Bounds: read timeout, total deadline, body cap (streamed and decompressed), redirects."""

from __future__ import annotations

import gzip
import time
import zlib
from pathlib import Path

import pytest

from flows.fetch import Fetcher
from flows.fetch.body import BodyTooLarge
from flows.settings import Settings
from schema.errors import FetchError
from tests.flows.fetch.conftest import fast_settings
from tests.httpserver import LoopbackServer, Reply

HTML = {"Content-Type": "text/html"}


def _no_temp_bodies(settings: Settings) -> bool:
    tmp = settings.raw_dir / ".tmp"
    return not tmp.exists() or not any(tmp.iterdir())


def test_slow_drip_past_the_read_timeout(data_dir: Path, loopback: LoopbackServer) -> None:
    settings = fast_settings(data_dir, read_timeout=0.3, max_retries=0)
    loopback.route("/drip", Reply(body=b"<p>" + b"x" * 40 + b"</p>", headers=HTML, drip=(10, 1.0)))
    with Fetcher(settings) as fetcher, pytest.raises(FetchError) as exc:
        fetcher.fetch(loopback.url("/drip"))
    assert f"timeout after 0.3s reading {loopback.url('/drip')}" in str(exc.value)
    assert _no_temp_bodies(settings)


def test_slow_server_before_headers_times_out(data_dir: Path, loopback: LoopbackServer) -> None:
    settings = fast_settings(data_dir, read_timeout=0.3, max_retries=1)
    loopback.route("/slow", Reply(body=b"<p>late</p>", headers=HTML, delay=1.0))
    with Fetcher(settings) as fetcher, pytest.raises(FetchError, match="after 2 attempts"):
        fetcher.fetch(loopback.url("/slow"))
    assert loopback.count("/slow") == 2  # timeouts are transient: retried once


def test_total_deadline_stops_a_drip_that_beats_the_read_timeout(
    data_dir: Path, loopback: LoopbackServer
) -> None:
    settings = fast_settings(data_dir, read_timeout=1.0, total_timeout=0.6, max_retries=0)
    loopback.route("/drip", Reply(body=b"y" * 60, headers=HTML, drip=(2, 0.05)))  # 1.5 s in all
    started = time.monotonic()
    with (
        Fetcher(settings) as fetcher,
        pytest.raises(FetchError, match="deadline of 0.6s passed while reading"),
    ):
        fetcher.fetch(loopback.url("/drip"))
    assert time.monotonic() - started < 1.4
    assert _no_temp_bodies(settings)


@pytest.mark.parametrize("chunked", [False, True])
def test_body_over_the_cap_keeps_nothing(data_dir: Path, loopback: LoopbackServer, chunked: bool) -> None:
    settings = fast_settings(data_dir, max_body_bytes=10_000)
    loopback.route("/big", Reply(body=b"<p>" + b"z" * 50_000 + b"</p>", headers=HTML, chunked=chunked))
    with Fetcher(settings) as fetcher, pytest.raises(BodyTooLarge, match="cap of 10000 bytes"):
        fetcher.fetch(loopback.url("/big"))
    assert _no_temp_bodies(settings)
    assert not (data_dir / "raw" / "index.sqlite").exists()  # nothing archived, not even opened


def test_gzip_bomb_stops_at_the_cap(data_dir: Path, loopback: LoopbackServer) -> None:
    # 100 MiB of zeros in about 100 KiB; inflated whole, it would take 100 MiB of memory or disk.
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    bomb = b"".join(compressor.compress(block) for _ in range(100)) + compressor.flush()
    assert len(bomb) < 1 << 20
    settings = fast_settings(data_dir, max_body_bytes=1 << 20)
    loopback.route("/bomb", Reply(body=bomb, headers={**HTML, "Content-Encoding": "gzip"}))
    started = time.monotonic()
    with Fetcher(settings) as fetcher, pytest.raises(BodyTooLarge, match="inflates past the cap"):
        fetcher.fetch(loopback.url("/bomb"))
    assert time.monotonic() - started < 5
    assert _no_temp_bodies(settings)


def test_gzip_body_is_kept_as_sent_and_measured_decoded(settings: Settings, loopback: LoopbackServer) -> None:
    page = b"<html><body>" + "장애".encode() * 1000 + b"</body></html>"
    wire = gzip.compress(page)
    loopback.route("/gz", Reply(body=wire, headers={**HTML, "Content-Encoding": "gzip"}))
    with Fetcher(settings) as fetcher:
        result = fetcher.fetch(loopback.url("/gz"))
    assert result.body == wire and result.body_size == len(wire) and result.decoded_size == len(page)
    result.discard()
    assert result.body_path is not None and not result.body_path.exists()


def test_redirects_followed_one_hop_at_a_time(settings: Settings, loopback: LoopbackServer) -> None:
    loopback.route("/a", Reply(301, headers={"Location": loopback.url("/b", host="127.0.0.2")}))
    loopback.route("/b", Reply(302, headers={"Location": "/c"}), host="127.0.0.2")
    loopback.route("/c", Reply(body=b"<p>c</p>", headers=HTML), host="127.0.0.2")
    with Fetcher(settings) as fetcher:
        result = fetcher.fetch(loopback.url("/a"))
    assert result.final_url == loopback.url("/c", host="127.0.0.2")
    assert [(h.status, h.location) for h in result.redirects] == [
        (301, loopback.url("/b", host="127.0.0.2")),
        (302, loopback.url("/c", host="127.0.0.2")),
    ]
    # robots.txt was asked of the second host too: every hop is re-checked
    assert loopback.count("/robots.txt", host="127.0.0.2") == 1


def test_redirect_loop(settings: Settings, loopback: LoopbackServer) -> None:
    loopback.route("/a", Reply(302, headers={"Location": "/b"}))
    loopback.route("/b", Reply(302, headers={"Location": "/a"}))
    with (
        Fetcher(settings) as fetcher,
        pytest.raises(FetchError, match=r"redirect loop: .*/a -> .*/b -> .*/a"),
    ):
        fetcher.fetch(loopback.url("/a"))
    assert loopback.count("/a") == 1 and loopback.count("/b") == 1


def test_too_many_redirects(data_dir: Path, loopback: LoopbackServer) -> None:
    for n in range(20):
        loopback.route(f"/r{n}", Reply(302, headers={"Location": f"/r{n + 1}"}))
    with (
        Fetcher(fast_settings(data_dir, max_redirects=10)) as fetcher,
        pytest.raises(FetchError, match="more than 10 redirects"),
    ):
        fetcher.fetch(loopback.url("/r0"))
    assert loopback.count("/r10") == 1 and loopback.count("/r11") == 0


def test_stale_temp_bodies_are_swept(settings: Settings) -> None:
    import os

    tmp = settings.raw_dir / ".tmp"
    tmp.mkdir(parents=True)
    stale, fresh = tmp / "body-stale", tmp / "body-fresh"
    stale.write_bytes(b"left by a killed run")
    fresh.write_bytes(b"another process is writing this")
    os.utime(stale, (time.time() - 3 * 86400, time.time() - 3 * 86400))
    Fetcher(settings).close()
    assert not stale.exists() and fresh.exists()


def test_redirect_that_strips_tracking_is_not_a_loop(settings: Settings, loopback: LoopbackServer) -> None:
    loopback.route("/a?utm_source=feed", Reply(301, headers={"Location": "/a"}))
    loopback.route("/a", Reply(body=b"<p>a</p>", headers=HTML))
    with Fetcher(settings) as fetcher:
        result = fetcher.fetch(loopback.url("/a?utm_source=feed"))
    assert result.final_url == loopback.url("/a") and len(result.redirects) == 1
