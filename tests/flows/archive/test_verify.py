"""`archive verify` catches a flipped byte, re-gzipped tampering, truncation, missing files."""

from __future__ import annotations

import gzip
from pathlib import Path

from flows.archive import Archive, Capture, verify
from flows.settings import Settings
from tests.cli import run
from tests.flows.archive.helpers import warc_files

PAGES = [
    (f"https://example.org/post/{n}", f"<html><body>incident {n}</body></html>".encode()) for n in range(3)
]


def _fill(settings: Settings) -> list[Capture]:
    with Archive(settings) as archive:
        return [archive.store_resource(body, url=url, content_type="text/html") for url, body in PAGES]


def test_clean_archive_verifies(settings: Settings, capsys) -> None:  # type: ignore[no-untyped-def]
    _fill(settings)
    result = run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir))
    assert result.code == 0 and result.out.startswith("ok: 1 WARC files, 4 records, 3 index entries")


def test_one_flipped_byte_is_caught(settings: Settings, capsys) -> None:  # type: ignore[no-untyped-def]
    captures = _fill(settings)
    target = captures[1]
    path = settings.raw_dir / target.warc_file
    data = bytearray(path.read_bytes())
    data[target.offset + target.length // 2] ^= 0x01
    path.write_bytes(bytes(data))
    result = run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir))
    assert result.code == 1
    # reported once, naming file, offset, type and capture; the records after it still check out
    lines = [line for line in result.out.splitlines() if line.startswith("problem:")]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"problem: {target.warc_file} offset {target.offset}: ")
    assert "resource record" in lines[0] and f"(capture {target.id}, {target.url})" in lines[0]
    assert result.err == ""  # no raw zlib lines from warcio


def test_regzipped_tampering_fails_the_digest(settings: Settings, capsys) -> None:  # type: ignore[no-untyped-def]
    # A careful forger recompresses the member, so gzip itself is happy; the digests are not.
    captures = _fill(settings)
    target = captures[1]
    path = settings.raw_dir / target.warc_file
    data = path.read_bytes()
    member = gzip.decompress(data[target.offset : target.offset + target.length])
    forged = gzip.compress(member.replace(b"incident 1", b"incident X"))
    path.write_bytes(data[: target.offset] + forged + data[target.offset + target.length :])
    result = run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir))
    assert result.code == 1
    assert f"{target.warc_file} offset {target.offset}:" in result.out and "digest" in result.out
    # when the forged member's length differs, the capture after it no longer sits where the index
    # says, and verify names it (the line for its offset names the capture)
    assert f"capture {captures[2].id}," in result.out or len(forged) == target.length


def test_truncation_is_caught(settings: Settings, capsys) -> None:  # type: ignore[no-untyped-def]
    captures = _fill(settings)
    path = settings.raw_dir / captures[-1].warc_file
    path.write_bytes(path.read_bytes()[: captures[-1].offset + 10])
    result = run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir))
    assert result.code == 1
    lines = [line for line in result.out.splitlines() if line.startswith("problem:")]
    assert any("truncated" in line for line in lines)
    # the record cut short is one line, naming its offset, its type and the capture it held
    (cut,) = [line for line in lines if f"offset {captures[-1].offset}:" in line]
    assert "resource record" in cut and f"(capture {captures[-1].id}," in cut


def test_missing_file_is_caught(settings: Settings, capsys) -> None:  # type: ignore[no-untyped-def]
    captures = _fill(settings)
    (settings.raw_dir / captures[0].warc_file).unlink()
    result = run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir))
    assert result.code == 1 and f"{captures[0].warc_file}: missing" in result.out


def test_index_entry_pointing_nowhere_is_caught(settings: Settings) -> None:
    captures = _fill(settings)
    with Archive(settings) as archive:
        with archive.index.transaction() as db:
            db.execute("UPDATE captures SET offset = offset + 1 WHERE id = ?", (captures[0].id,))
        report = verify(archive.raw, archive.index)
    assert not report.ok
    assert any(
        p.problem == f"index entry {captures[0].id} points at no record" for p in report.problems or []
    )


def test_unknown_warc_file_is_reported(settings: Settings) -> None:
    _fill(settings)
    stray = settings.raw_dir / "warc" / "stray.warc.gz"
    stray.write_bytes(warc_files(settings.raw_dir)[0].read_bytes())
    with Archive(settings) as archive:
        report = verify(archive.raw, archive.index)
    assert [str(p) for p in report.problems or []] == [
        "warc/stray.warc.gz: a WARC file the index does not know; `incidents archive reindex` rebuilds "
        "the index from every WARC file in raw/ (a file from elsewhere: `incidents archive import` it)"
    ]


def test_verify_json(settings: Settings, capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import json

    _fill(settings)
    result = run(capsys, "archive", "verify", "--json", "--data-dir", str(settings.data_dir))
    report = json.loads(result.out)
    assert result.code == 0 and report["ok"] is True and report["entries"] == 3


def _forge(path: Path, target: Capture, old: bytes) -> bytes:
    """Rewrite the target's payload AND both its digest headers to match, keeping the record id,
    date and the gzip member's length (so every offset still holds): warcio's own check passes."""
    from io import BytesIO

    from warcio.archiveiterator import ArchiveIterator
    from warcio.warcwriter import WARCWriter

    data = path.read_bytes()
    with open(path, "rb") as fh:
        fh.seek(target.offset)
        record = next(iter(ArchiveIterator(fh)))
        body = record.content_stream().read()
        keep = {
            k: v
            for k, v in record.rec_headers.headers
            if k not in ("WARC-Block-Digest", "WARC-Payload-Digest", "Content-Length", "WARC-Type")
        }
    content_type = keep.pop("Content-Type")
    letters = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    # One changed letter finds a member of the same compressed length most of the time, not
    # always; two changed letters give 62 x 62 tries, so the search does not fail by chance.
    for first, last in ((a, b) for a in letters for b in letters):
        new = body.replace(old, old[:-2] + bytes([first, last]))
        out = BytesIO()
        writer = WARCWriter(out, gzip=True, warc_version="1.1")
        forged = writer.create_warc_record(
            target.url,
            "resource",
            payload=BytesIO(new),
            length=len(new),
            warc_content_type=content_type,
            warc_headers_dict=keep,
        )
        writer.write_record(forged)
        if len(out.getvalue()) == target.length and new != body:
            end = target.offset + target.length
            path.write_bytes(data[: target.offset] + out.getvalue() + data[end:])
            return new
    raise AssertionError("no same-length forgery found")


def test_forged_digests_fail_verify(settings: Settings, capsys) -> None:  # type: ignore[no-untyped-def]
    # The forger rewrites the payload and both WARC digest headers to match the new bytes: the
    # record checks out against itself (warcio check passes), not against the index.
    import json

    from tests.flows.archive.helpers import warcio

    captures = _fill(settings)
    target = captures[1]
    path = settings.raw_dir / target.warc_file
    _forge(path, target, b"incident 1")
    assert warcio("check", str(path)).returncode == 0  # self-consistent
    result = run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir))
    assert result.code == 1
    lines = [line for line in result.out.splitlines() if line.startswith("problem:")]
    assert lines and all(f"{target.warc_file} offset {target.offset}:" in line for line in lines)
    assert any("WARC-Payload-Digest" in line for line in lines)
    assert any("payload sha256" in line for line in lines)
    assert all(f"(capture {target.id}, {target.url})" in line for line in lines)
    as_json = json.loads(run(capsys, "archive", "verify", "--json", "--data-dir", str(settings.data_dir)).out)
    assert not as_json["ok"] and {p["capture"] for p in as_json["problems"]} == {target.id}
    assert {p["url"] for p in as_json["problems"]} == {target.url}
    assert {p["offset"] for p in as_json["problems"]} == {target.offset}


def test_a_closed_file_keeps_its_sha256(data_dir: Path) -> None:
    from tests.flows.fetch.conftest import fast_settings

    settings = fast_settings(data_dir, warc_max_bytes=600)
    captures = _fill(settings)  # each resource fills a file: all but the last are closed
    with Archive(settings) as archive:
        rows = {row["name"]: row for row in archive.index.files()}
        closed = [name for name, row in rows.items() if row["closed"]]
        assert closed and all(rows[name]["sha256"] for name in closed)
        assert verify(archive.raw, archive.index).ok
    target = next(c for c in captures if c.warc_file == closed[0])
    path = settings.raw_dir / target.warc_file
    path.chmod(0o644)
    _forge(path, target, b"incident")
    with Archive(settings) as archive:
        problems = [str(p) for p in verify(archive.raw, archive.index).problems or []]
    # the record's own digest says which record changed (the file's digest would say only "file")
    assert any(
        p.startswith(f"{target.warc_file} offset {target.offset}: resource record") and "changed" in p
        for p in problems
    ), problems


def test_an_earlier_versions_304_response_is_not_taken_for_a_forgery(settings: Settings) -> None:
    # Archives written before 304s became revisits hold them as empty `response` records,
    # indexed `unchanged` with the digests of the capture they confirm: not a rewritten payload.
    import dataclasses

    from flows.archive.index import Index
    from flows.archive.warc import Batch, capture_id, http_response_headers, new_record_id, warc_date

    (first, *_) = _fill(settings)
    with Archive(settings) as archive:

        def build(batch: Batch) -> None:
            rid = new_record_id()
            head = http_response_headers(304, "Not Modified", "HTTP/1.1", [("ETag", '"1"')])
            record = batch.builder.create_warc_record(
                first.url,
                "response",
                http_headers=head,
                warc_headers_dict={"WARC-Record-ID": rid, "WARC-Date": warc_date()},
            )
            where = batch.write(record)
            old = dataclasses.replace(
                first,
                id=capture_id(rid),
                record_id=rid,
                kind="unchanged",
                status=304,
                revisit_of=first.id,
                offset=where.offset,
                length=where.length,
            )
            Index.insert(batch.db, old)

        archive._appender.submit(build)
        report = verify(archive.raw, archive.index)
    assert report.ok, report.problems
