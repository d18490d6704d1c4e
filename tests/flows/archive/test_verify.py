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
    assert f"problem: {target.warc_file} offset {target.offset}:" in result.out


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
    # the index entry after the forged record now points at the wrong place, and verify says so
    assert f"index entry {captures[2].id}" in result.out or len(forged) == target.length


def test_truncation_is_caught(settings: Settings, capsys) -> None:  # type: ignore[no-untyped-def]
    captures = _fill(settings)
    path = settings.raw_dir / captures[-1].warc_file
    path.write_bytes(path.read_bytes()[: captures[-1].offset + 10])
    result = run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir))
    assert result.code == 1
    assert "truncated" in result.out and f"index entry {captures[-1].id} points at no record" in result.out


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
        "warc/stray.warc.gz: a WARC file the index does not know; import it or remove it"
    ]


def test_verify_json(settings: Settings, capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import json

    _fill(settings)
    result = run(capsys, "archive", "verify", "--json", "--data-dir", str(settings.data_dir))
    report = json.loads(result.out)
    assert result.code == 0 and report["ok"] is True and report["entries"] == 3
