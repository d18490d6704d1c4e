"""WARC writing: request/response/metadata per fetch, revisits, rotation, crash safety."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from flows.archive import Archive, verify
from flows.archive.warc import parse_warc_fields
from flows.fetch import Fetcher
from flows.settings import Settings
from tests.flows.archive.helpers import archive_page, warc_files, warcio
from tests.flows.fetch.conftest import fast_settings
from tests.httpserver import LoopbackServer, Reply


def _records(path: Path) -> list[tuple[str, str | None]]:
    with open(path, "rb") as fh:
        return [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI")) for r in ArchiveIterator(fh)]


def test_fetch_writes_request_response_metadata(settings: Settings, loopback: LoopbackServer) -> None:
    loopback.route(
        "/robots.txt", Reply(body=b"User-agent: *\nAllow: /\n", headers={"Content-Type": "text/plain"})
    )
    loopback.route("/old", Reply(301, headers={"Location": "/new"}))
    loopback.route(
        "/new", Reply(body=b"<html><body>postmortem</body></html>", headers={"Content-Type": "text/html"})
    )
    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        result = fetcher.fetch(loopback.url("/old"))
        capture = archive.record_fetch(result)
        result.discard()
    (path,) = warc_files(settings.raw_dir)
    url = loopback.url("/new")
    robots_url, old = loopback.url("/robots.txt"), loopback.url("/old")
    # robots.txt, then the redirect hop, then the page: each a request and its response
    assert _records(path) == [
        ("warcinfo", None),
        *[("request", robots_url), ("response", robots_url)],
        *[("request", old), ("response", old)],
        *[("request", url), ("response", url), ("metadata", url)],
    ]
    with open(path, "rb") as fh:
        records = [(r.rec_headers, r.content_stream().read()) for r in ArchiveIterator(fh)]
    (meta,) = [(h, body) for h, body in records if h.get_header("WARC-Type") == "metadata"]
    (response,) = [
        h
        for h, _ in records
        if h.get_header("WARC-Type") == "response" and h.get_header("WARC-Target-URI") == url
    ]
    # WARC's own metadata format, linked to its response: replay tools never take it for the page.
    assert meta[0].get_header("Content-Type") == "application/warc-fields"
    assert meta[0].get_header("WARC-Concurrent-To") == response.get_header("WARC-Record-ID")
    fields = parse_warc_fields(meta[1])
    assert fields["outcome"] == ["fetched"] and fields["capture"] == [capture.id]
    robots = json.loads(fields["robots"][0])
    assert robots["allowed"] is True and robots["reason"] == "allowed by robots.txt"
    assert [json.loads(v) for v in fields["redirects"]] == [
        {"url": loopback.url("/old"), "status": 301, "location": url}
    ]
    assert set(json.loads(fields["timings"][0])) >= {"total_s", "robots_s", "politeness_wait_s"}
    assert capture.requested_url == loopback.url("/old")
    with Archive(settings) as archive:
        assert archive.latest(loopback.url("/old")) == capture  # found by the URL asked for


def test_warcio_check_and_index_pass(settings: Settings, loopback: LoopbackServer) -> None:
    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        archive_page(fetcher, archive, loopback, "/a", b"<p>a</p>")
        archive_page(fetcher, archive, loopback, "/a", b"<p>a</p>")  # a revisit
        loopback.route(
            "/chunked",
            Reply(body=b"<p>chunked</p>" * 50, headers={"Content-Type": "text/html"}, chunked=True),
        )
        result = fetcher.fetch(loopback.url("/chunked"))
        chunked = archive.record_fetch(result)
        archive.store_resource(b"# saved\n", url="file:///tmp/saved.md", content_type="text/markdown")
        assert archive.read_payload(chunked.id) == b"<p>chunked</p>" * 50
    files = [str(p) for p in warc_files(settings.raw_dir)]
    checked = warcio("check", "-v", *files)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "digest pass" in checked.stdout
    indexed = warcio("index", "-f", "warc-type,warc-target-uri,offset", *files)
    assert indexed.returncode == 0, indexed.stderr
    types = [json.loads(line)["warc-type"] for line in indexed.stdout.splitlines()]
    # two pages and the robots.txt that allowed them
    assert types.count("response") == 3 and types.count("revisit") == 1 and types.count("resource") == 1


def test_identical_payload_becomes_a_revisit(settings: Settings, loopback: LoopbackServer) -> None:
    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        first = archive_page(fetcher, archive, loopback, "/p", b"<p>same</p>")
        second = archive_page(fetcher, archive, loopback, "/p", b"<p>same</p>")
        third = archive_page(fetcher, archive, loopback, "/p", b"<p>changed</p>")
        assert (first.kind, second.kind, third.kind) == ("response", "revisit", "response")
        assert second.revisit_of == first.id and second.payload_sha256 == first.payload_sha256
        assert second.payload_digest == first.payload_digest
        assert archive.read_payload(second.id) == b"<p>same</p>"
        assert third.payload_sha256 != first.payload_sha256
        assert archive.latest(loopback.url("/p")) == third


def test_index_is_wal_and_holds_the_fields(settings: Settings, loopback: LoopbackServer) -> None:
    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        capture = archive_page(fetcher, archive, loopback, "/p?utm_source=x", b"<p>i</p>")
        assert archive.get(capture.id) == capture
    db = sqlite3.connect(settings.raw_dir / "index.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    row = db.execute(
        "SELECT url, canonical_url, captured_at, status, mime, payload_sha256, payload_digest, warc_file, "
        "offset, length FROM captures"
    ).fetchone()
    assert row[0] == loopback.url("/p?utm_source=x") and row[1] == loopback.url("/p")
    assert row[2].endswith("Z") and row[3] == 200 and row[4] == "text/html"
    assert len(row[5]) == 64 and row[6].startswith("sha1:") and row[7].startswith("warc/")
    assert capture.id.startswith("c-") and row[8] > 0 and row[9] > 0


def test_files_rotate_by_size_and_closed_files_never_change(data_dir: Path, loopback: LoopbackServer) -> None:
    settings = fast_settings(data_dir, warc_max_bytes=3000)
    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        archive_page(fetcher, archive, loopback, "/0", b"<p>0</p>" + os.urandom(2000).hex().encode())
        archive_page(fetcher, archive, loopback, "/1", b"<p>1</p>" + os.urandom(2000).hex().encode())
        files = warc_files(settings.raw_dir)
        assert len(files) == 2
        frozen = {p: p.read_bytes() for p in files}
        for n in range(2, 6):
            archive_page(fetcher, archive, loopback, f"/{n}", b"<p>%d</p>" % n)
    assert all(p.read_bytes() == data for p, data in frozen.items())
    assert all(p.stat().st_mode & 0o222 == 0 for p in frozen)  # closed files are read-only
    assert len(warc_files(settings.raw_dir)) >= 3
    with Archive(settings) as archive:
        assert verify(archive.raw, archive.index).ok


def test_torn_tail_is_cut_before_the_next_append(settings: Settings) -> None:
    with Archive(settings) as archive:
        first = archive.store_resource(b"<p>one</p>", url="https://example.org/1", content_type="text/html")
    (path,) = warc_files(settings.raw_dir)
    with open(path, "ab") as fh:
        fh.write(b"\x1f\x8b\x08\x00 half a gzip member")  # what a kill mid-write leaves
    with Archive(settings) as archive:
        report = verify(archive.raw, archive.index)
        (torn,) = [p.problem for p in report.problems or []]  # one line for the torn tail
        assert (
            torn.startswith("23 bytes after the last complete record")
            and "the next append cuts them)" in torn
        )
        second = archive.store_resource(b"<p>two</p>", url="https://example.org/2", content_type="text/html")
        assert verify(archive.raw, archive.index).ok
        assert archive.read_payload(first.id) == b"<p>one</p>"
        assert archive.read_payload(second.id) == b"<p>two</p>"


WRITER = textwrap.dedent(
    """
    import os
    import sys
    from pathlib import Path
    from flows.archive import Archive
    from flows.settings import Settings
    archive = Archive(Settings(data_dir=Path(sys.argv[1])))
    n = 0
    while True:
        # incompressible, so each write takes long enough for the kill to land inside one
        archive.store_resource(b"<p>%d</p>" % n + os.urandom(400_000), url=f"https://example.org/{n}",
                               content_type="text/html")
        n += 1
        print(n, flush=True)
    """
)


def test_killed_writer_leaves_earlier_records_readable(data_dir: Path) -> None:
    root = Path(__file__).parents[3]
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(data_dir)], cwd=root, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    for _ in range(5):  # let it write a few records, then kill it wherever it is
        proc.stdout.readline()
    time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    settings = Settings(data_dir=data_dir)
    with Archive(settings) as archive:
        captures = archive.captures()
        assert len(captures) >= 5
        for capture in captures:
            assert archive.read_payload(capture.id).startswith(b"<p>")
        problems = verify(archive.raw, archive.index).problems or []
        assert all("interrupted write" in p.problem for p in problems), problems
        archive.store_resource(b"<p>after</p>", url="https://example.org/after", content_type="text/html")
        assert verify(archive.raw, archive.index).ok


def test_several_processes_append_safely(data_dir: Path) -> None:
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from flows.archive import Archive
        from flows.settings import Settings
        with Archive(Settings(data_dir=Path(sys.argv[1]), warc_max_bytes=20_000)) as archive:
            for n in range(15):
                archive.store_resource(f"<p>{sys.argv[2]}-{n}</p>".encode() * 40,
                                       url=f"https://example.org/{sys.argv[2]}/{n}", content_type="text/html")
        """
    )
    root = Path(__file__).parents[3]
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(data_dir), str(w)], cwd=root) for w in range(3)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    with Archive(Settings(data_dir=data_dir)) as archive:
        captures = archive.captures()
        assert len(captures) == 45
        assert verify(archive.raw, archive.index).ok
        for capture in captures:
            worker, n = capture.url.rsplit("/", 2)[-2:]
            assert archive.read_payload(capture.id) == f"<p>{worker}-{n}</p>".encode() * 40
    checked = warcio("check", *map(str, warc_files(data_dir / "raw")))
    assert checked.returncode == 0, checked.stdout


def test_store_resource_and_its_revisit(settings: Settings) -> None:
    page = "<html><body>장애 보고서</body></html>".encode("euc-kr")
    with Archive(settings) as archive:
        first = archive.store_resource(
            page, url="file:///saved/p.html", content_type="text/html", source_path="p.html"
        )
        again = archive.store_resource(page, url="file:///saved/p.html", content_type="text/html")
        assert first.kind == "resource" and first.source_path == "p.html" and first.status is None
        assert again.kind == "revisit" and again.revisit_of == first.id
        assert archive.read_payload(first.id) == page == archive.read_payload(again.id)


def test_unknown_capture_is_an_archive_error(settings: Settings) -> None:
    from schema.errors import ArchiveError

    with Archive(settings) as archive, pytest.raises(ArchiveError, match="archive list"):
        archive.get("c-0000")


def test_threads_share_appends_and_a_failed_job_leaves_no_trace(settings: Settings) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from flows.archive.warc import Batch

    with Archive(settings) as archive:

        def store(n: int) -> str:
            return archive.store_resource(
                b"<p>%d</p>" % n * 50, url=f"https://example.org/{n}", content_type="text/html"
            ).id

        def broken(batch: Batch) -> None:
            batch.write(batch.builder.create_warcinfo_record("half", {"note": "written, then failed"}))
            raise RuntimeError("boom")

        with ThreadPoolExecutor(8) as pool:
            stored = list(pool.map(store, range(40)))
            with pytest.raises(RuntimeError, match="boom"):
                archive._appender.submit(broken)
            stored += list(pool.map(store, range(40, 60)))
        assert len(set(stored)) == 60
        for n, capture_id in enumerate(stored):
            assert archive.read_payload(capture_id) == b"<p>%d</p>" % n * 50
        assert verify(archive.raw, archive.index).ok
    kinds = [kind for path in warc_files(settings.raw_dir) for kind, _ in _records(path)]
    assert kinds.count("warcinfo") == len(warc_files(settings.raw_dir))  # the failed job's record is gone


def test_a_fetch_gives_its_payload_as_the_archive_reads_it_back(
    settings: Settings, loopback: LoopbackServer
) -> None:
    import gzip

    page = "<html><body><p>Incident: the queue was down ünïcode</p></body></html>".encode()
    loopback.route("/robots.txt", Reply(404))
    loopback.route("/plain", Reply(body=page, headers={"Content-Type": "text/html"}))
    loopback.route("/chunked", Reply(body=page, headers={"Content-Type": "text/html"}, chunked=True))
    loopback.route(
        "/gzip",
        Reply(body=gzip.compress(page), headers={"Content-Type": "text/html", "Content-Encoding": "gzip"}),
    )
    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        for path, direct in (("/plain", True), ("/chunked", False), ("/gzip", False)):
            result = fetcher.fetch(loopback.url(path))
            try:
                capture = archive.record_fetch(result)
                payload = result.payload()
            finally:
                result.discard()
            assert archive.read_payload(capture.id) == page, path
            # unencoded: the very bytes archived; a coding to undo: None, so the archive is read
            assert payload == (page if direct else None), path
