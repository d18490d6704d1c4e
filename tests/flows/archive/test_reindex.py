"""`archive reindex`: a lost or replaced raw/index.sqlite is rebuilt from the WARC files alone,
with the same capture ids and rows; a lost index is never silently recreated empty."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from flows.archive import Archive, Capture
from flows.archive.index import Index
from flows.fetch import Fetcher
from flows.settings import Settings
from tests.cli import run
from tests.flows.archive.foreign import write_foreign_warc
from tests.flows.archive.helpers import archive_page
from tests.httpserver import LoopbackServer, Reply

PAGE = b"<html><head><title>Outage</title></head><body><p>The queue was down.</p></body></html>"


def _rows(raw: Path) -> dict[str, dict[str, object]]:
    index = Index(raw / "index.sqlite")
    try:
        return {c.id: c.as_dict() for c in index.captures()}
    finally:
        index.close()


def _table(raw: Path, sql: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(raw / "index.sqlite")
    try:
        return [tuple(row) for row in db.execute(sql)]
    finally:
        db.close()


def _fill(settings: Settings, loopback: LoopbackServer, tmp_path: Path) -> list[Capture]:
    """Every kind of capture: fetched, identical payload (revisit), 304 (unchanged), a redirect,
    a page without Content-Type, saved pages (resource, its revisit, one under urn:sha256), and an
    imported foreign WARC (with skipped records)."""
    made: list[Capture] = []
    foreign = tmp_path / "wget.warc.gz"
    write_foreign_warc(foreign)
    with Archive(settings) as archive, Fetcher(settings) as fetcher:
        made.append(archive_page(fetcher, archive, loopback, "/a", PAGE, ETag='"v1"'))
        made.append(archive_page(fetcher, archive, loopback, "/b", PAGE))  # same bytes: revisit
        loopback.route("/a", Reply(status=304, headers={"ETag": '"v1"'}))
        result = fetcher.fetch(loopback.url("/a"), conditional=made[0])
        try:
            made.append(archive.record_fetch(result))
        finally:
            result.discard()
        loopback.route("/old", Reply(status=301, headers={"Location": loopback.url("/new")}))
        made.append(archive_page(fetcher, archive, loopback, "/new", b"<html><body>new</body></html>"))
        loopback.route("/moved", Reply(status=301, headers={"Location": loopback.url("/c")}))
        loopback.route("/c", Reply(body=b"<html><body>no type given</body></html>"))
        result = fetcher.fetch(loopback.url("/moved"))
        try:
            made.append(archive.record_fetch(result))
        finally:
            result.discard()
        made.append(
            archive.store_resource(PAGE + b"x", url="https://example.org/pm", content_type="text/html")
        )
        made.append(
            archive.store_resource(PAGE + b"x", url="https://example.org/pm", content_type="text/html")
        )
        made.append(
            archive.store_resource(
                b"# Outage\n",
                url="/home/me/pm.md",
                content_type="text/markdown",
                source_path="/home/me/pm.md",
            )
        )
        made.extend(archive.import_file(foreign).captures)
        made.append(archive_page(fetcher, archive, loopback, "/d", b"<html><body>after</body></html>"))
    kinds = {c.kind for c in made}
    assert kinds == {"response", "revisit", "unchanged", "resource", "imported"}, kinds
    return made


def _remove_index(raw: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        (raw / f"index.sqlite{suffix}").unlink(missing_ok=True)


def test_a_deleted_index_is_rebuilt_with_the_same_captures(
    settings: Settings, loopback: LoopbackServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = _fill(settings, loopback, tmp_path)
    raw = settings.raw_dir
    before = _rows(raw)
    files_before = _table(raw, "SELECT name, origin, size, closed FROM warc_files ORDER BY name")
    skips_before = _table(raw, "SELECT * FROM import_skips ORDER BY warc_file, offset")
    records_before = _table(raw, "SELECT * FROM records ORDER BY warc_file, offset")
    assert records_before  # every record we wrote, with the sha256 verify checks it against
    assert skips_before  # the foreign WARC's image and revisit of it are skipped
    _remove_index(raw)

    # Any command that opens the archive says the index is lost and what to do; none makes an empty one.
    verified = run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir))
    assert verified.code == 1
    assert "index.sqlite is missing while" in verified.err and "`incidents archive reindex`" in verified.err
    assert len(verified.err.strip().splitlines()) == 1 and "Traceback" not in verified.err
    listed = run(capsys, "archive", "list", "--data-dir", str(settings.data_dir))
    assert listed.code == 1 and "archive reindex" in listed.err
    assert not (raw / "index.sqlite").exists()

    result = run(capsys, "archive", "reindex", "--data-dir", str(settings.data_dir))
    assert result.code == 0, result.err
    assert f"{len(before)} captures" in result.out
    after = _rows(raw)
    assert set(after) == set(before)
    # what the archive handed back, plus the hop of the redirected fetch (indexed, kind redirect)
    hops = set(before) - {c.id for c in made}
    assert {c.id for c in made} <= set(before) and [before[h]["kind"] for h in hops] == ["redirect"]
    assert set(_table(raw, "SELECT * FROM records ORDER BY warc_file, offset")) >= set(records_before)
    for cid, row in before.items():
        # the local path of a saved page is in the index only: lost with it
        expected = {**row, "source_path": None}
        assert after[cid] == expected, cid
    assert _table(raw, "SELECT name, origin, size, closed FROM warc_files ORDER BY name") == files_before
    assert _table(raw, "SELECT * FROM import_skips ORDER BY warc_file, offset") == skips_before

    clean = run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir))
    assert clean.code == 0 and clean.out.startswith("ok:"), clean.out
    with Archive(settings) as archive:  # every capture reads back as before
        for capture in made:
            assert archive.read_payload(capture.id) is not None
        # and appending goes on in the same open file, after its last record
        archive.store_resource(b"<p>later</p>", url="https://example.org/later", content_type="text/html")
    assert run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir)).code == 0


def test_reindex_over_an_existing_index_keeps_it_and_carries_over_what_only_it_knew(
    settings: Settings, loopback: LoopbackServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fill(settings, loopback, tmp_path)
    raw = settings.raw_dir
    with Archive(settings) as archive:
        archive.index.record_check("https://example.org/pm", "2026-01-01T00:00:00Z", "gone", "404")
    before = _rows(raw)
    result = run(capsys, "archive", "reindex", "--json", "--data-dir", str(settings.data_dir))
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["carried_over"] == {"saved page paths": 1, "link checks": 1}
    assert report["old_index"].startswith("index.sqlite.replaced-")
    assert (raw / report["old_index"]).exists()
    assert _rows(raw) == before
    assert _table(raw, "SELECT canonical_url, result FROM link_checks") == [
        ("https://example.org/pm", "gone")
    ]


def test_a_torn_tail_is_reported_and_the_rest_indexed(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    with Archive(settings) as archive:
        kept = [
            archive.store_resource(
                f"<p>page {n}</p>".encode(), url=f"https://example.org/{n}", content_type="text/html"
            )
            for n in range(3)
        ]
    path = settings.raw_dir / kept[-1].warc_file
    path.chmod(0o644)
    path.write_bytes(path.read_bytes()[: kept[-1].offset + 20])  # the last record torn
    _remove_index(settings.raw_dir)
    result = run(capsys, "archive", "reindex", "--data-dir", str(settings.data_dir))
    assert result.code == 1
    assert (
        f"problem: {kept[-1].warc_file}: 20 bytes after offset {kept[-1].offset} cannot be read" in result.out
    )
    assert set(_rows(settings.raw_dir)) == {c.id for c in kept[:2]}
    # the torn tail is cut by the next append, as after any interrupted write; verify is then clean
    with Archive(settings) as archive:
        archive.store_resource(b"<p>again</p>", url="https://example.org/again", content_type="text/html")
    assert run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir)).code == 0


def test_a_fresh_data_directory_still_gets_a_new_index(settings: Settings) -> None:
    with Archive(settings) as archive:
        assert archive.captures() == []
    assert (settings.raw_dir / "index.sqlite").exists()


def test_a_damaged_index_is_one_line_and_reindex_replaces_it(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    with Archive(settings) as archive:
        kept = archive.store_resource(
            b"<p>kept</p>", url="https://example.org/kept", content_type="text/html"
        )
    _remove_index(settings.raw_dir)
    (settings.raw_dir / "index.sqlite").write_bytes(b"this is no database" * 300)
    listed = run(capsys, "archive", "list", "--data-dir", str(settings.data_dir))
    assert listed.code == 1 and "Traceback" not in listed.err
    assert "is damaged" in listed.err and "`incidents archive reindex`" in listed.err
    assert len(listed.err.strip().splitlines()) == 1
    result = run(capsys, "archive", "reindex", "--data-dir", str(settings.data_dir))
    assert result.code == 0, result.err
    assert "(carried over: nothing readable)" in result.out
    assert set(_rows(settings.raw_dir)) == {kept.id}
    assert [p.name for p in settings.raw_dir.glob("index.sqlite.replaced-*")]
