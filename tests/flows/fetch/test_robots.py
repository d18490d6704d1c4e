"""robots.txt: disallow is a skip, Crawl-delay paces requests, one fetch per host."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.fetch import Fetcher
from flows.settings import Settings
from schema.errors import SkipSource
from tests.flows.fetch.conftest import fast_settings
from tests.httpserver import LoopbackServer, Reply

HTML = {"Content-Type": "text/html"}
TEXT = {"Content-Type": "text/plain"}


def test_disallowed_path_is_skipped_without_fetching(settings: Settings, loopback: LoopbackServer) -> None:
    loopback.route("/robots.txt", Reply(body=b"User-agent: *\nDisallow: /private/\n", headers=TEXT))
    loopback.route("/private/postmortem", Reply(body=b"<p>secret</p>", headers=HTML))
    with Fetcher(settings) as fetcher, pytest.raises(SkipSource) as exc:
        fetcher.fetch(loopback.url("/private/postmortem"))
    assert str(exc.value) == "robots.txt disallows /private/postmortem"
    assert loopback.count("/private/postmortem") == 0


def test_rules_for_our_agent_apply(settings: Settings, loopback: LoopbackServer) -> None:
    robots = b"User-agent: incident-ingest\nDisallow: /\n\nUser-agent: *\nAllow: /\n"
    loopback.route("/robots.txt", Reply(body=robots, headers=TEXT))
    with Fetcher(settings) as fetcher, pytest.raises(SkipSource, match="robots.txt disallows /a"):
        fetcher.fetch(loopback.url("/a"))


def test_robots_is_fetched_once_per_host(settings: Settings, loopback: LoopbackServer) -> None:
    loopback.route("/robots.txt", Reply(body=b"User-agent: *\nAllow: /\n", headers=TEXT))
    loopback.route("/p", Reply(body=b"<p>x</p>", headers=HTML))
    with Fetcher(settings) as fetcher:
        for host in ("127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2", "127.0.0.1"):
            result = fetcher.fetch(loopback.url("/p", host=host))
            assert result.robots is not None and result.robots.allowed
    assert loopback.count("/robots.txt", host="127.0.0.1") == 1
    assert loopback.count("/robots.txt", host="127.0.0.2") == 1


def test_missing_robots_allows_everything(settings: Settings, loopback: LoopbackServer) -> None:
    loopback.route("/p", Reply(body=b"<p>x</p>", headers=HTML))
    with Fetcher(settings) as fetcher:
        result = fetcher.fetch(loopback.url("/p"))
    assert result.robots is not None and result.robots.reason == "no robots.txt (HTTP 404)"


def test_unreachable_robots_disallows_everything(data_dir: Path, loopback: LoopbackServer) -> None:
    loopback.route("/robots.txt", Reply(500, b"oops", TEXT))
    loopback.route("/p", Reply(body=b"<p>x</p>", headers=HTML))
    with Fetcher(fast_settings(data_dir)) as fetcher, pytest.raises(SkipSource, match=r"HTTP 500"):
        fetcher.fetch(loopback.url("/p"))
    assert loopback.count("/p") == 0


def _gaps(loopback: LoopbackServer, path: str) -> list[float]:
    times = [hit.at for hit in loopback.hits(path)]
    return [b - a for a, b in zip(times, times[1:], strict=False)]


def test_crawl_delay_paces_requests(data_dir: Path, loopback: LoopbackServer) -> None:
    loopback.route("/robots.txt", Reply(body=b"User-agent: *\nCrawl-delay: 0.3\n", headers=TEXT))
    loopback.route("/p", Reply(body=b"<p>x</p>", headers=HTML))
    with Fetcher(fast_settings(data_dir, min_interval=0.0)) as fetcher:
        for _ in range(3):
            fetcher.fetch(loopback.url("/p"))
    gaps = _gaps(loopback, "/p")
    assert len(gaps) == 2 and min(gaps) >= 0.25


def test_min_interval_wins_over_a_smaller_crawl_delay(data_dir: Path, loopback: LoopbackServer) -> None:
    loopback.route("/robots.txt", Reply(body=b"User-agent: *\nCrawl-delay: 0.01\n", headers=TEXT))
    loopback.route("/p", Reply(body=b"<p>x</p>", headers=HTML))
    with Fetcher(fast_settings(data_dir, min_interval=0.3)) as fetcher:
        for _ in range(3):
            fetcher.fetch(loopback.url("/p"))
    assert min(_gaps(loopback, "/p")) >= 0.25


def test_redirect_hops_are_checked_against_robots(settings: Settings, loopback: LoopbackServer) -> None:
    loopback.route("/robots.txt", Reply(body=b"User-agent: *\nDisallow: /private\n", headers=TEXT))
    loopback.route("/public", Reply(301, headers={"Location": "/private/x"}))
    loopback.route("/private/x", Reply(body=b"<p>secret</p>", headers=HTML))
    with Fetcher(settings) as fetcher, pytest.raises(SkipSource, match="robots.txt disallows /private/x"):
        fetcher.fetch(loopback.url("/public"))
    assert loopback.count("/private/x") == 0
