"""Every exchange that decided a capture is archived: redirect hops (response + request records,
indexed) and robots.txt; each warcinfo is dated before the records that follow it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from flows.archive import Archive, verify
from flows.archive.warc import parse_warc_fields
from flows.fetch import Fetcher
from flows.settings import Settings
from tests.flows.archive.helpers import warc_files, warcio
from tests.httpserver import LoopbackServer, Reply

PAGE = b"<html><head><title>Outage</title></head><body><p>The database was down.</p></body></html>"


def _records(raw: Path) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for path in warc_files(raw):
        with open(path, "rb") as fh:
            for record in ArchiveIterator(fh):
                http = record.http_headers
                out.append(
                    {
                        "type": record.rec_type,
                        "url": record.rec_headers.get_header("WARC-Target-URI"),
                        "date": record.rec_headers.get_header("WARC-Date"),
                        "id": record.rec_headers.get_header("WARC-Record-ID"),
                        "concurrent": record.rec_headers.get_header("WARC-Concurrent-To"),
                        "status": http.get_statuscode() if http and record.rec_type == "response" else None,
                        "location": http.get_header("Location") if http else None,
                        "block": record.content_stream().read(),
                    }
                )
    return out


def _chain(loopback: LoopbackServer) -> str:
    loopback.route(
        "/robots.txt", Reply(body=b"User-agent: *\nAllow: /\n", headers={"Content-Type": "text/plain"})
    )
    loopback.route("/a", Reply(301, body=b"<a href='/b'>moved</a>", headers={"Location": "/b"}))
    loopback.route("/b", Reply(302, headers={"Location": loopback.url("/c")}))
    loopback.route("/c", Reply(body=PAGE, headers={"Content-Type": "text/html"}))
    return loopback.url("/a")


def test_each_redirect_hop_is_a_response_record_with_its_request(
    settings: Settings, loopback: LoopbackServer
) -> None:
    start = _chain(loopback)
    with Archive(settings) as archive, Fetcher(settings) as fetcher:
        result = fetcher.fetch(start)
        try:
            page = archive.record_fetch(result)
        finally:
            result.discard()
        captures = archive.captures()
    records = _records(settings.raw_dir)
    responses = {r["url"]: r for r in records if r["type"] == "response"}
    assert responses[loopback.url("/a")]["status"] == "301"
    assert responses[loopback.url("/a")]["location"] == "/b"
    assert responses[loopback.url("/a")]["block"] == b"<a href='/b'>moved</a>"
    assert responses[loopback.url("/b")]["status"] == "302"
    assert responses[loopback.url("/c")]["status"] == "200"
    for url in ("/a", "/b", "/c"):  # each response has its request, tied by WARC-Concurrent-To
        response = responses[loopback.url(url)]
        assert any(r["type"] == "request" and r["concurrent"] == response["id"] for r in records), url
    # indexed: the hops as `redirect` captures, the page as before (and still its `latest`)
    kinds = {c.url: (c.kind, c.status) for c in captures}
    assert kinds[loopback.url("/a")] == ("redirect", 301)
    assert kinds[loopback.url("/b")] == ("redirect", 302)
    assert kinds[loopback.url("/c")] == ("response", 200)
    with Archive(settings) as archive:
        assert archive.latest(start) == page
        report = verify(archive.raw, archive.index)
        assert report.ok, report.problems


def test_cdxj_indexer_indexes_the_hops(settings: Settings, loopback: LoopbackServer) -> None:
    start = _chain(loopback)
    with Archive(settings) as archive, Fetcher(settings) as fetcher:
        result = fetcher.fetch(start)
        archive.record_fetch(result)
        result.discard()
    indexer = str(Path(sys.executable).with_name("cdxj-indexer"))
    out = subprocess.run(
        [indexer, *map(str, warc_files(settings.raw_dir))], capture_output=True, text=True, check=True
    ).stdout
    lines = [json.loads(line.split(" ", 2)[2]) for line in out.splitlines()]
    statuses = {(entry["url"], entry.get("status")) for entry in lines if entry.get("mime") != "warc/revisit"}
    assert (loopback.url("/a"), "301") in statuses
    assert (loopback.url("/b"), "302") in statuses
    assert (loopback.url("/c"), "200") in statuses
    assert (loopback.url("/robots.txt"), "200") in statuses


def test_robots_txt_is_archived_once_and_named_by_the_metadata(
    settings: Settings, loopback: LoopbackServer
) -> None:
    _chain(loopback)
    loopback.route("/d", Reply(body=PAGE, headers={"Content-Type": "text/html"}))
    with Archive(settings) as archive, Fetcher(settings) as fetcher:
        for path in ("/c", "/d"):
            result = fetcher.fetch(loopback.url(path))
            archive.record_fetch(result)
            result.discard()
    records = _records(settings.raw_dir)
    robots = [r for r in records if r["type"] == "response" and r["url"] == loopback.url("/robots.txt")]
    assert len(robots) == 1 and robots[0]["block"] == b"User-agent: *\nAllow: /\n"
    metadata = [parse_warc_fields(bytes(r["block"])) for r in records if r["type"] == "metadata"]  # type: ignore[arg-type]
    assert metadata[0]["robots_record"] == [robots[0]["id"]]
    assert "robots_record" not in metadata[1]  # the second fetch read the cached rules
    assert warcio("check", *map(str, warc_files(settings.raw_dir))).returncode == 0


def test_a_missing_robots_txt_is_archived_too(settings: Settings, loopback: LoopbackServer) -> None:
    loopback.route("/c", Reply(body=PAGE, headers={"Content-Type": "text/html"}))
    with Archive(settings) as archive, Fetcher(settings) as fetcher:
        result = fetcher.fetch(loopback.url("/c"))
        archive.record_fetch(result)
        result.discard()
    records = _records(settings.raw_dir)
    (robots,) = [r for r in records if r["type"] == "response" and r["url"] == loopback.url("/robots.txt")]
    assert robots["status"] == "404"  # "no robots.txt" decided that everything may be fetched


def test_warcinfo_is_dated_before_its_records(settings: Settings, loopback: LoopbackServer) -> None:
    start = _chain(loopback)
    with Fetcher(settings) as fetcher:
        result = fetcher.fetch(start)  # fetched (and dated) before the archive is even opened
    with Archive(settings) as archive:
        archive.record_fetch(result)
        result.discard()
        archive.store_resource(PAGE, url="https://example.org/saved", content_type="text/html")
    records = _records(settings.raw_dir)
    assert records[0]["type"] == "warcinfo"
    assert all(str(r["date"]) >= str(records[0]["date"]) for r in records[1:]), [
        (r["type"], r["date"]) for r in records
    ]
