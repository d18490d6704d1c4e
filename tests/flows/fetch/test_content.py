"""Content types: pages accepted, everything else skipped by name; conditional requests."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.archive import Archive
from flows.fetch import Fetcher
from flows.fetch.errors import SourceGone
from flows.settings import Settings
from schema.errors import SkipSource
from tests.flows.fetch.conftest import HOSTS, fast_settings
from tests.httpserver import LoopbackServer, Reply

PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"


@pytest.mark.parametrize(
    "content_type",
    [
        "text/html; charset=utf-8",
        "application/xhtml+xml",
        "text/plain; charset=utf-8",
        "text/markdown; charset=UTF-8",
        "text/x-markdown",
    ],
)
def test_pages_are_accepted(settings: Settings, loopback: LoopbackServer, content_type: str) -> None:
    loopback.route("/p", Reply(body=b"# Outage\n\nIt broke.\n", headers={"Content-Type": content_type}))
    with Fetcher(settings) as fetcher:
        result = fetcher.fetch(loopback.url("/p"))
    assert result.outcome == "fetched" and result.content_type == content_type


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/pdf", PDF),
        ("image/png", PNG),
        ("application/zip", b"PK\x03\x04" + bytes(30)),
        ("application/octet-stream", bytes(100)),
        ("text/css", b"body{}"),
    ],
)
def test_other_types_are_skipped_by_name(
    settings: Settings, loopback: LoopbackServer, content_type: str, body: bytes
) -> None:
    loopback.route("/f", Reply(body=body, headers={"Content-Type": content_type}))
    with Fetcher(settings) as fetcher, pytest.raises(SkipSource) as exc:
        fetcher.fetch(loopback.url("/f"))
    assert str(exc.value).startswith(f"unsupported content type {content_type}")


@pytest.mark.parametrize(("body", "kind"), [(PDF, "application/pdf"), (PNG, "image/png")])
def test_unlabelled_binary_is_sniffed_and_skipped(
    settings: Settings, loopback: LoopbackServer, body: bytes, kind: str
) -> None:
    loopback.route("/f", Reply(body=body))
    with Fetcher(settings) as fetcher, pytest.raises(SkipSource, match=f"unsupported content type {kind}"):
        fetcher.fetch(loopback.url("/f"))
    assert not any((settings.raw_dir / ".tmp").iterdir())


def test_unlabelled_html_is_accepted(settings: Settings, loopback: LoopbackServer) -> None:
    loopback.route("/p", Reply(body=b"<!DOCTYPE html><html><body>x</body></html>"))
    with Fetcher(settings) as fetcher:
        result = fetcher.fetch(loopback.url("/p"))
    assert result.content_type is None and result.mime == "text/html"


DATA = Path(__file__).parents[2] / "data" / "fetch"
CJK = [
    ("ko-euc-kr.html", "text/html; charset=EUC-KR"),
    ("ja-shift_jis.html", "text/html; charset=Shift_JIS"),
    ("ja-euc-jp.html", "text/html; charset=EUC-JP"),
    ("zh-gb18030.html", "text/html; charset=GB18030"),
    ("zh-big5.html", "text/html; charset=Big5"),
]


@pytest.mark.parametrize(("name", "content_type"), CJK)
def test_cjk_pages_are_archived_byte_exact_with_their_header(
    settings: Settings, loopback: LoopbackServer, name: str, content_type: str
) -> None:
    page = (DATA / name).read_bytes()
    loopback.route("/p", Reply(body=page, headers={"Content-Type": content_type}))
    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        result = fetcher.fetch(loopback.url("/p"))
        capture = archive.record_fetch(result)
        result.discard()
        assert archive.read_payload(capture.id) == page
        assert capture.content_type == content_type
        from flows.archive.reader import record_at

        with record_at(settings.raw_dir / capture.warc_file, capture.offset) as record:
            assert record.http_headers.get_header("Content-Type") == content_type


def test_conditional_request_and_304(settings: Settings, loopback: LoopbackServer) -> None:
    page = b"<html><body>v1</body></html>"
    stamp = "Wed, 02 Dec 2026 10:00:00 GMT"
    headers = {"Content-Type": "text/html", "ETag": '"v1"', "Last-Modified": stamp}
    loopback.route("/p", [Reply(body=page, headers=headers), Reply(304, headers={"ETag": '"v1"'})])
    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        first = fetcher.fetch(loopback.url("/p"))
        capture = archive.record_fetch(first)
        assert capture.etag == '"v1"' and capture.last_modified == stamp
        again = fetcher.fetch(loopback.url("/p"), conditional=capture)
        assert again.outcome == "unchanged" and again.status == 304 and again.body_path is None
        unchanged = archive.record_fetch(again)
        assert unchanged.kind == "unchanged" and unchanged.revisit_of == capture.id
        assert archive.read_payload(unchanged.id) == page
        assert archive.latest(loopback.url("/p")) == capture  # a 304 is no new payload
    sent = loopback.hits("/p")[1].headers
    assert sent["If-None-Match"] == '"v1"' and sent["If-Modified-Since"] == stamp


def test_unwanted_replies_leave_the_connection_open(settings: Settings, loopback: LoopbackServer) -> None:
    """A 304 or a small error page is read to its end, so a re-run reuses one connection per host."""
    page = b"<html><body>v1</body></html>"
    headers = {"Content-Type": "text/html", "ETag": '"v1"'}
    loopback.route("/p", [Reply(body=page, headers=headers), Reply(304, headers={"ETag": '"v1"'})])
    loopback.route(
        "/gone", Reply(404, b"<html><body>no such page</body></html>", {"Content-Type": "text/html"})
    )
    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        capture = archive.record_fetch(fetcher.fetch(loopback.url("/p")))
        for _ in range(3):
            assert fetcher.fetch(loopback.url("/p"), conditional=capture).outcome == "unchanged"
        with pytest.raises(SourceGone):
            fetcher.fetch(loopback.url("/gone"))
        assert fetcher.fetch(loopback.url("/p"), conditional=capture).outcome == "unchanged"
    peers = {hit.peer for hit in loopback.hits() if hit.path in ("/p", "/gone")}
    assert len(loopback.hits("/p")) == 5 and len(peers) == 1


def test_one_connection_per_host_whatever_the_concurrency(data_dir: Path, loopback: LoopbackServer) -> None:
    """Fetch threads take hosts in turn, so with fewer threads than hosts each host's connection
    must outlive the requests to the others: idle connections are not capped by the concurrency."""
    loopback.route("/p", Reply(body=b"<html><body>v1</body></html>", headers={"Content-Type": "text/html"}))
    with Fetcher(fast_settings(data_dir, concurrency=1)) as fetcher:
        for _ in range(3):
            for host in HOSTS:
                assert fetcher.fetch(loopback.url("/p", host=host)).outcome == "fetched"
    peers = {(hit.host, hit.peer) for hit in loopback.hits("/p")}
    assert len(loopback.hits("/p")) == 9 and len(peers) == len(HOSTS)


def test_accept_widens_the_types_for_discovery(settings: Settings, loopback: LoopbackServer) -> None:
    feed = b'<?xml version="1.0"?><rss version="2.0"><channel><title>Status</title></channel></rss>'
    loopback.route("/feed", Reply(body=feed, headers={"Content-Type": "application/rss+xml"}))
    with Fetcher(settings) as fetcher:
        with pytest.raises(SkipSource, match="application/rss"):
            fetcher.fetch(loopback.url("/feed"))
        result = fetcher.fetch(loopback.url("/feed"), accept={"application/rss+xml", "text/html"})
    assert result.body == feed and result.mime == "application/rss+xml"


def test_rel_canonical_is_read_from_the_decoded_page(settings: Settings, loopback: LoopbackServer) -> None:
    import gzip

    page = b'<html><head><link rel="canonical" href="/posts/outage"></head><body>x</body></html>'
    headers = {"Content-Type": "text/html", "Content-Encoding": "gzip"}
    loopback.route("/p", Reply(body=gzip.compress(page), headers=headers))
    with Fetcher(settings) as fetcher:
        result = fetcher.fetch(loopback.url("/p?utm_source=feed#top"))
    assert result.rel_canonical == loopback.url("/posts/outage")
    assert result.canonical_url == loopback.url("/p")
    assert result.final_url == loopback.url("/p?utm_source=feed")  # as fetched: no fragment
