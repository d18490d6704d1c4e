"""What replay tools see in our WARCs: the page for every URL, 304s as revisits, warcinfo per run."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from flows.archive import Archive
from flows.archive.refresh import refresh
from flows.archive.store import SERVER_NOT_MODIFIED
from flows.archive.warc import parse_warc_fields
from flows.fetch import Fetcher
from flows.settings import Settings
from tests.flows.archive.helpers import archive_page, warc_files, warcio
from tests.flows.fetch.conftest import fast_settings
from tests.httpserver import LoopbackServer, Reply

CDXJ_INDEXER = str(Path(sys.executable).with_name("cdxj-indexer"))
HTML = "text/html; charset=utf-8"


def cdxj(raw: Path) -> list[tuple[str, str, dict[str, str]]]:
    """(urlkey, timestamp, fields) lines as cdxj-indexer writes them: what pywb and
    ReplayWeb.page replay from, in the order they pick from at one timestamp."""
    out = subprocess.run(
        [CDXJ_INDEXER, *map(str, warc_files(raw))], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    lines = []
    for line in out.splitlines():
        key, stamp, fields = line.split(" ", 2)
        lines.append((key, stamp, json.loads(fields)))
    return sorted(lines, key=lambda line: (line[0], line[1]))


def replayed(lines: list[tuple[str, str, dict[str, str]]], url: str) -> list[dict[str, str]]:
    """For each capture time of `url`, the line a replay tool resolves at that time: the first."""
    picked: dict[str, dict[str, str]] = {}
    for _key, stamp, fields in lines:
        if fields["url"] == url:
            picked.setdefault(stamp, fields)
    return list(picked.values())


def test_replay_resolves_the_html_response_for_every_url(
    settings: Settings, loopback: LoopbackServer
) -> None:
    page = b"<html><title>Outage</title><body>down</body></html>"
    loopback.route("/robots.txt", Reply(404))
    loopback.route("/moved", Reply(301, headers={"Location": "/landed"}))
    loopback.route("/landed", Reply(body=b"<p>landed</p>", headers={"Content-Type": HTML}))
    loopback.route("/etag", [Reply(body=page, headers={"Content-Type": HTML, "ETag": '"v1"'}), Reply(304)])
    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        archive_page(fetcher, archive, loopback, "/plain", page, HTML)
        archive_page(fetcher, archive, loopback, "/plain", page, HTML)  # a revisit at the same second
        archive_page(
            fetcher, archive, loopback, "/gz", gzip.compress(page), HTML, **{"Content-Encoding": "gzip"}
        )
        result = fetcher.fetch(loopback.url("/moved"))
        archive.record_fetch(result)
        result.discard()
        result = fetcher.fetch(loopback.url("/etag"))
        archive.record_fetch(result)
        result.discard()
        (again,) = refresh(archive, fetcher, [loopback.url("/etag")])  # a 304: a revisit
        assert again.result == "unchanged" and again.capture and again.capture.kind == "unchanged"
        archive.store_resource(page, url="https://blog.example/saved", content_type=HTML)
        kinds = {c.url: c.kind for c in archive.captures()}
        ours = set(kinds)
    lines = cdxj(settings.raw_dir)
    # no metadata record is a capture; robots.txt is archived (it decided the fetch), not a page
    assert {fields["url"] for _k, _s, fields in lines} == ours | {loopback.url("/robots.txt")}
    assert kinds[loopback.url("/moved")] == "redirect"
    html = {(f["url"], f["digest"]) for _k, _s, f in lines if f.get("mime") == "text/html"}
    for url in ours:
        for fields in replayed(lines, url):
            if kinds[url] == "redirect":  # the hop replays as the redirect it was
                assert fields["status"] == "301", fields
            elif fields["mime"] == "warc/revisit":  # resolved by its digest to an HTML response
                assert (url, fields["digest"]) in html, fields
            else:
                assert fields["mime"] == "text/html" and fields.get("status", "200") == "200", fields


def test_a_304_is_a_server_not_modified_revisit(settings: Settings, loopback: LoopbackServer) -> None:
    page = b"<p>same as before</p>"
    loopback.route(
        "/p",
        [
            Reply(body=page, headers={"Content-Type": HTML, "ETag": '"v1"'}),
            Reply(304, headers={"ETag": '"v1"'}),
        ],
    )
    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        first = archive_page(fetcher, archive, loopback, "/p", page, HTML, ETag='"v1"')
        loopback.route("/p", Reply(304, headers={"ETag": '"v1"'}))  # the server confirms: not modified
        result = fetcher.fetch(loopback.url("/p"), conditional=first)
        assert result.outcome == "unchanged"
        second = archive.record_fetch(result)
        result.discard()
        assert (second.kind, second.status, second.revisit_of) == ("unchanged", 304, first.id)
        assert archive.read_payload(second.id) == page  # through the capture it confirms
    (path,) = warc_files(settings.raw_dir)
    with open(path, "rb") as fh:
        records = [(r.rec_headers, r.content_stream().read()) for r in ArchiveIterator(fh)]
    (revisit,) = [h for h, _ in records if h.get_header("WARC-Type") == "revisit"]
    assert revisit.get_header("WARC-Profile") == SERVER_NOT_MODIFIED
    assert revisit.get_header("WARC-Refers-To") == first.record_id
    assert revisit.get_header("WARC-Refers-To-Target-URI") == first.url
    assert revisit.get_header("WARC-Refers-To-Date") == first.captured_at
    responses = [
        h.get_header("WARC-Target-URI") for h, _ in records if h.get_header("WARC-Type") == "response"
    ]
    # the 304 adds a revisit, no second response (the other response is robots.txt's)
    assert sorted(responses) == [loopback.url("/p"), loopback.url("/robots.txt")]
    meta = [
        parse_warc_fields(body)
        for h, body in records
        if h.get_header("WARC-Concurrent-To") == revisit.get_header("WARC-Record-ID")
        and h.get_header("WARC-Type") == "metadata"
    ]
    assert meta[0]["http_status"] == ["304 Not Modified"] and 'ETag: "v1"' in meta[0]["http_header"]
    assert warcio("check", str(path)).returncode == 0


def test_each_run_begins_with_a_warcinfo_naming_operator_and_rules(data_dir: Path) -> None:
    settings = fast_settings(
        data_dir, archive_operator="Incident Library", archive_contact="archive@library.example"
    )
    for n in range(2):  # two runs append to one file
        with Archive(settings) as archive:
            archive.store_resource(b"<p>%d</p>" % n, url=f"https://blog.example/{n}", content_type=HTML)
    (path,) = warc_files(settings.raw_dir)
    with open(path, "rb") as fh:
        records = [(r.rec_headers, r.content_stream().read()) for r in ArchiveIterator(fh)]
    assert [h.get_header("WARC-Type") for h, _ in records] == ["warcinfo", "resource"] * 2
    for info, resource in (records[0:2], records[2:4]):
        fields = parse_warc_fields(info[1])
        assert fields["operator"] == ["Incident Library"] and fields["contact"] == ["archive@library.example"]
        assert fields["robots"] == ["obey"] and fields["http-header-user-agent"] == [settings.user_agent]
        assert fields["hostname"] and fields["software"][0].startswith("incident-ingest/")
        assert fields["format"] == ["WARC File Format 1.1"] and fields["conformsTo"]
        assert info[0].get_header("Content-Type") == "application/warc-fields"
        assert resource[0].get_header("WARC-Warcinfo-ID") == info[0].get_header("WARC-Record-ID")


def test_a_saved_page_is_archived_under_its_url_or_a_digest_urn(settings: Settings, tmp_path: Path) -> None:
    saved = tmp_path / "saved.html"
    saved.write_bytes(b"<p>saved</p>")
    with Archive(settings) as archive:
        given = archive.store_resource(
            b"<p>saved</p>", url="https://blog.example/post", content_type=HTML, source_path=str(saved)
        )
        local = archive.store_resource(
            b"<p>saved</p>", url=saved.resolve().as_uri(), content_type=HTML, source_path=str(saved)
        )
        again = archive.store_resource(b"<p>saved</p>", url=saved.as_uri(), content_type=HTML)
    assert given.url == "https://blog.example/post" and given.source_path == str(saved)
    assert local.url.startswith("urn:sha256:") and again.url == local.url  # stable: same bytes, same name
    (path,) = warc_files(settings.raw_dir)
    data = gzip.decompress(path.read_bytes())
    assert str(tmp_path).encode() not in data, data
    assert b"file://" not in data and b"WARC-Source-URI" not in data
