"""Importing WARC files made elsewhere: copied into raw/, indexed, readable, idempotent."""

from __future__ import annotations

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
        captures = archive.import_warc(source)
        assert [(c.url, c.status, c.mime) for c in captures] == [
            (PAGE_URL, 200, "text/html"),
            ("https://status.example.com/logo.png", 200, "image/png"),
            (PAGE_URL, 200, "text/html"),
        ]
        page, _, revisit = captures
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
        first = archive.import_warc(source)
        again = archive.import_warc(source)
        assert [c.id for c in first] == [c.id for c in again]
        assert len(archive.captures()) == 3
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
    assert result.code == 0 and result.out.strip() == f"imported {source}: 3 captures"
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
        (page, _, _) = archive.import_warc(source)
        copy = settings.raw_dir / page.warc_file
        copy.chmod(0o644)
        data = copy.read_bytes()
        copy.write_bytes(data.replace(b"down", b"DOWN"))  # same length, same offsets
        problems = [str(p) for p in verify(archive.raw, archive.index).problems or []]
    assert f"{page.warc_file}: file changed since it was imported (sha256 differs)" in problems
    assert any("digest" in p for p in problems)
