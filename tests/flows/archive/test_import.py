"""Importing WARC files made elsewhere: copied into raw/, indexed, readable, idempotent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.archive import Archive, verify
from flows.settings import Settings
from schema.errors import InputError
from tests.cli import run
from tests.flows.archive.foreign import PAGES, write_foreign_warc, write_whole_stream_gzip
from tests.flows.archive.helpers import warcio

PAGE_URL = "https://status.example.com/incidents/42"


@pytest.mark.parametrize("name", ["crawl.warc.gz", "crawl.warc"])
def test_import_indexes_responses_and_revisits(settings: Settings, tmp_path: Path, name: str) -> None:
    source = tmp_path / name
    write_foreign_warc(source, gzip_per_record=name.endswith(".gz"))
    with Archive(settings) as archive:
        done = archive.import_file(source)
        captures = done.captures
        assert [(c.url, c.status, c.mime) for c in captures] == [
            (PAGE_URL, 200, "text/html"),
            (PAGE_URL, 200, "text/html"),
        ]
        assert [(s.url, s.reason) for s in done.skipped] == [
            ("https://status.example.com/logo.png", "not a web page (image/png)")
        ]
        page, revisit = captures
        assert revisit.revisit_of == page.id and revisit.payload_sha256 == page.payload_sha256
        assert archive.read_payload(page.id) == PAGES[PAGE_URL]
        assert archive.read_payload(revisit.id) == PAGES[PAGE_URL]
        assert page.etag == '"abc"' and page.kind == "imported"
        assert page.warc_file.startswith("imported/") and (settings.raw_dir / page.warc_file).is_file()
        assert archive.latest(PAGE_URL) is not None
        assert verify(archive.raw, archive.index).ok
    source.unlink()  # raw/ is self-contained: the original can go
    with Archive(settings) as archive:
        assert archive.read_payload(page.id) == PAGES[PAGE_URL]


def test_import_is_idempotent(settings: Settings, tmp_path: Path) -> None:
    source = tmp_path / "crawl.warc.gz"
    write_foreign_warc(source)
    with Archive(settings) as archive:
        first = archive.import_file(source)
        again = archive.import_file(source)
        assert not first.already and again.already
        assert [c.id for c in first.captures] == [c.id for c in again.captures]
        assert again.skipped == first.skipped and len(again.skipped) == 1
        assert len(archive.captures()) == 2
    assert len(list((settings.raw_dir / "imported").iterdir())) == 1


def test_whole_stream_gzip_is_refused_with_a_fix(settings: Settings, tmp_path: Path) -> None:
    source = tmp_path / "crawl.warc.gz"
    write_whole_stream_gzip(source)
    with Archive(settings) as archive, pytest.raises(InputError, match="warcio recompress"):
        archive.import_warc(source)
    assert not (settings.raw_dir / "imported").exists()


def test_not_a_warc_is_refused(settings: Settings, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("<p>hi</p>")
    with Archive(settings) as archive, pytest.raises(InputError, match="not a .warc or .warc.gz"):
        archive.import_warc(page)


def test_cli_import_then_list_and_check(settings: Settings, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "crawl.warc.gz"
    write_foreign_warc(source)
    result = run(capsys, "archive", "import", str(source), "--data-dir", str(settings.data_dir))
    assert result.code == 0
    assert result.out.strip() == f"imported {source}: 2 captures, 1 skipped (1 not a web page (image/png))"
    again = run(capsys, "archive", "import", str(source), "--data-dir", str(settings.data_dir))
    assert again.code == 0 and again.out.startswith(f"already imported {source}: 2 captures")
    listed = run(
        capsys,
        "archive",
        "list",
        "--url",
        "https://status.example.com/inc",
        "--data-dir",
        str(settings.data_dir),
    )
    assert listed.out.count(PAGE_URL) == 2 and "logo.png" not in listed.out
    checked = warcio("check", str(next((settings.raw_dir / "imported").iterdir())))
    assert checked.returncode == 0


def test_revisit_whose_original_is_elsewhere_cannot_be_read(settings: Settings, tmp_path: Path) -> None:
    from io import BytesIO

    from warcio.warcwriter import WARCWriter

    from schema.errors import ArchiveError

    buffer = BytesIO()
    writer = WARCWriter(buffer, gzip=True)
    writer.write_record(writer.create_revisit_record(PAGE_URL, "sha1:AAAA", PAGE_URL, "2024-01-01T00:00:00Z"))
    source = tmp_path / "second-crawl.warc.gz"
    source.write_bytes(buffer.getvalue())
    with Archive(settings) as archive:
        (revisit,) = archive.import_warc(source)
        assert revisit.revisit_of is None and revisit.payload_sha256 is None
        with pytest.raises(ArchiveError, match="import the WARC that holds the original"):
            archive.read_payload(revisit.id)


def test_verify_notices_an_imported_file_that_changed(settings: Settings, tmp_path: Path) -> None:
    source = tmp_path / "crawl.warc"
    write_foreign_warc(source, gzip_per_record=False)
    with Archive(settings) as archive:
        (page, _) = archive.import_warc(source)
        copy = settings.raw_dir / page.warc_file
        copy.chmod(0o644)
        data = copy.read_bytes()
        copy.write_bytes(data.replace(b"down", b"DOWN"))  # same length, same offsets
        problems = [str(p) for p in verify(archive.raw, archive.index).problems or []]
    assert f"{page.warc_file}: file changed since it was imported (sha256 differs)" in problems
    assert any("digest" in p for p in problems)


def _wget_crawl(path: Path) -> dict[str, bytes]:
    """A site crawl as `wget --mirror --warc-file` writes it (plus a Heritrix-style dns: record):
    robots.txt, directory listings, an image, two articles, and wget's own metadata:// records."""
    from io import BytesIO

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    data = Path(__file__).parents[2] / "data" / "pipeline"
    site = "https://ops.tidewater.example"
    articles = {
        f"{site}/posts/queue-backlog.html": (data / "en-queue-outage.html").read_bytes(),
        f"{site}/posts/db-failover.html": (data / "ko-db-failover.html").read_bytes(),
    }
    listing = (
        b'<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN"><html><head><title>Index of /posts'
        b'</title></head><body><h1>Index of /posts</h1><table><tr><td><a href="queue-backlog.html">'
        b"queue-backlog.html</a></td></tr></table></body></html>"
    )
    served = [
        (f"{site}/robots.txt", "text/plain", b"User-agent: *\nDisallow:\n"),
        (f"{site}/", "text/html;charset=UTF-8", listing.replace(b"/posts", b"/")),
        (f"{site}/posts/", "text/html;charset=UTF-8", listing),
        *((url, "text/html; charset=utf-8", body) for url, body in articles.items()),
        (f"{site}/logo.png", "image/png", b"\x89PNG\r\n\x1a\n" + bytes(32)),
    ]
    with path.open("wb") as out:
        writer = WARCWriter(out, gzip=True, warc_version="1.0")
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "Wget/1.21.3 (linux-gnu)"}))
        writer.write_record(
            writer.create_warc_record(
                "dns:ops.tidewater.example",
                "response",
                payload=BytesIO(b"20240301091200\nops.tidewater.example.\t300\tIN\tA\t192.0.2.7\n"),
                warc_content_type="text/dns",
            )
        )
        for url, kind, body in served:
            request = writer.create_warc_record(
                url,
                "request",
                http_headers=StatusAndHeaders(
                    "GET / HTTP/1.1", [("Host", "ops.tidewater.example")], is_http_request=True
                ),
            )
            response = writer.create_warc_record(
                url,
                "response",
                payload=BytesIO(body),
                http_headers=StatusAndHeaders("200 OK", [("Content-Type", kind)], protocol="HTTP/1.1"),
            )
            writer.write_request_response_pair(request, response)
        wget = "metadata://gnu.org/software/wget/warc/"
        manifest = b"<urn:uuid:0000> wget_arguments.txt\n"
        writer.write_record(
            writer.create_warc_record(
                f"{wget}MANIFEST.txt", "metadata", payload=BytesIO(manifest), warc_content_type="text/plain"
            )
        )
        for name, text in (
            ("wget_arguments.txt", b'"--mirror" "--warc-file=crawl"'),
            ("wget.log", b"FINISHED --2024-03-01--\n"),
        ):
            writer.write_record(
                writer.create_warc_record(
                    f"{wget}{name}", "resource", payload=BytesIO(text), warc_content_type="text/plain"
                )
            )
    return articles


def test_a_wget_crawl_indexes_only_its_pages_and_says_why_it_skips(
    settings: Settings, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "crawl.warc.gz"
    articles = _wget_crawl(source)
    with Archive(settings) as archive:
        done = archive.import_file(source)
    assert [c.url for c in done.captures] == list(articles)
    site = "https://ops.tidewater.example"
    assert [(s.url, s.reason) for s in done.skipped] == [
        ("dns:ops.tidewater.example", "dns: record (a DNS lookup)"),
        (f"{site}/robots.txt", "robots.txt"),
        (f"{site}/", "directory listing"),
        (f"{site}/posts/", "directory listing"),
        (f"{site}/logo.png", "not a web page (image/png)"),
        (
            "metadata://gnu.org/software/wget/warc/wget_arguments.txt",
            "metadata:// record (the crawler's own log or settings)",
        ),
        (
            "metadata://gnu.org/software/wget/warc/wget.log",
            "metadata:// record (the crawler's own log or settings)",
        ),
    ]
    again = run(capsys, "archive", "import", str(source), "--json", "--data-dir", str(settings.data_dir))
    (item,) = json.loads(again.out)
    assert item["result"] == "already imported" and len(item["skipped"]) == 7 and len(item["captures"]) == 2


@pytest.mark.usefixtures("prefect_harness")
def test_ingesting_a_wget_crawl_drafts_only_its_articles(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "crawl.warc.gz"
    articles = _wget_crawl(source)
    result = run(capsys, "ingest", str(source), "--json")
    assert result.code == 0, result.err
    outcomes = json.loads(result.out)
    assert [(o["status"], o["url"]) for o in outcomes] == [("drafted", url) for url in articles], outcomes
    assert len(list((data_dir / "records" / "queue").glob("*.json"))) == 2
