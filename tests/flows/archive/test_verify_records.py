"""`archive verify` covers every record of every type in a file still open for appending: a
forged metadata or warcinfo record is named with file, offset and type; one flipped byte in a
fetched archive is one line, and the records after it still check out."""

from __future__ import annotations

import gzip
import hashlib
import struct
import zlib
from base64 import b32encode
from pathlib import Path

from flows.archive import Archive
from flows.fetch import Fetcher
from flows.settings import Settings
from tests.cli import run
from tests.flows.archive.helpers import archive_page, warcio
from tests.httpserver import LoopbackServer


def _fetch_three(settings: Settings, loopback: LoopbackServer) -> None:
    with Archive(settings) as archive, Fetcher(settings) as fetcher:
        for n in range(3):
            body = f"<html><body><p>incident {n}: the queue backed up</p></body></html>".encode()
            archive_page(fetcher, archive, loopback, f"/post/{n}", body)


def _records(settings: Settings) -> list[dict[str, object]]:
    with Archive(settings) as archive:
        return [dict(row) for row in archive.index.records()]


def _forge(path: Path, offset: int, length: int, old: bytes, new: bytes, drop: bytes) -> None:
    """Rewrite one record's block (its Content-Length and WARC-Block-Digest too, so it checks out
    against itself) as a gzip member of the same length, so every other record stays in place.
    The line starting with `drop` goes, to make room; the gzip header's comment pads the rest."""
    data = path.read_bytes()
    member = gzip.decompress(data[offset : offset + length])
    head, _, rest = member.partition(b"\r\n\r\n")
    block = rest[: -len(b"\r\n\r\n")]
    assert old in block, block
    new_block = b"".join(
        line for line in block.replace(old, new).splitlines(keepends=True) if not line.startswith(drop)
    )
    digest = "sha1:" + b32encode(hashlib.sha1(new_block).digest()).decode()
    lines = []
    for line in head.split(b"\r\n"):
        if line.startswith((b"WARC-Block-Digest:", b"WARC-Payload-Digest:")):
            line = line.split(b":", 1)[0] + f": {digest}".encode()
        elif line.startswith(b"Content-Length:"):
            line = f"Content-Length: {len(new_block)}".encode()
        lines.append(line)
    packed = _gzip_member(b"\r\n".join(lines) + b"\r\n\r\n" + new_block + b"\r\n\r\n", length)
    assert packed is not None, "the forgery does not fit"
    path.write_bytes(data[:offset] + packed + data[offset + length :])


def _gzip_member(data: bytes, length: int) -> bytes | None:
    """A valid gzip member of `data`, exactly `length` bytes: its header comment pads it."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    deflated = compressor.compress(data) + compressor.flush()
    pad = length - (10 + len(deflated) + 8) - 1
    if pad < 0:
        return None
    header = b"\x1f\x8b\x08\x10" + b"\x00\x00\x00\x00" + b"\x02\xff" + b"x" * pad + b"\x00"
    trailer = struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    return header + deflated + trailer


def _problem_lines(capsys, settings: Settings) -> tuple[int, list[str]]:  # type: ignore[no-untyped-def]
    result = run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir))
    return result.code, [line for line in result.out.splitlines() if line.startswith("problem:")]


def test_every_record_written_is_in_the_index(settings: Settings, loopback: LoopbackServer) -> None:
    _fetch_three(settings, loopback)
    types = [row["record_type"] for row in _records(settings)]
    assert types.count("warcinfo") == 1 and types.count("metadata") == 3
    assert types.count("request") == 4 and types.count("response") == 4  # robots.txt too


def test_a_forged_metadata_record_in_an_open_warc_is_caught(
    settings: Settings, loopback: LoopbackServer, capsys
) -> None:  # type: ignore[no-untyped-def]
    _fetch_three(settings, loopback)
    target = [row for row in _records(settings) if row["record_type"] == "metadata"][1]
    path = settings.raw_dir / str(target["warc_file"])
    with Archive(settings) as archive:
        assert not archive.index.files()[0]["closed"]  # open: no whole-file digest to lean on
    _forge(
        path,
        int(target["offset"]),
        int(target["length"]),
        b"no robots.txt (HTTP 404)",
        b"allowed by robots.txt",
        b"timings:",
    )
    assert warcio("check", str(path)).returncode == 0  # self-consistent: only the index knows
    code, lines = _problem_lines(capsys, settings)
    assert code == 1
    assert lines == [
        f"problem: {target['warc_file']} offset {target['offset']}: metadata record {target['record_id']} "
        f"changed since it was written (the sha256 of its {target['length']} stored bytes differs from the "
        "index's): forged or damaged"
    ]


def test_a_forged_warcinfo_in_an_open_warc_is_caught(
    settings: Settings, loopback: LoopbackServer, capsys
) -> None:  # type: ignore[no-untyped-def]
    _fetch_three(settings, loopback)
    (target,) = [row for row in _records(settings) if row["record_type"] == "warcinfo"]
    path = settings.raw_dir / str(target["warc_file"])
    _forge(
        path, int(target["offset"]), int(target["length"]), b"incident-ingest/", b"forger/", b"description:"
    )
    assert warcio("check", str(path)).returncode == 0
    code, lines = _problem_lines(capsys, settings)
    assert code == 1 and len(lines) == 1
    assert lines[0].startswith(
        f"problem: {target['warc_file']} offset 0: warcinfo record {target['record_id']} changed"
    )


def test_one_flipped_byte_in_a_fetched_archive_is_one_line(
    settings: Settings, loopback: LoopbackServer, capsys
) -> None:  # type: ignore[no-untyped-def]
    _fetch_three(settings, loopback)
    with Archive(settings) as archive:
        target = [c for c in archive.captures() if c.kind == "response"][1]
    path = settings.raw_dir / target.warc_file
    data = bytearray(path.read_bytes())
    data[target.offset + target.length // 2] ^= 0x01
    path.write_bytes(bytes(data))
    result = run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir))
    lines = [line for line in result.out.splitlines() if line.startswith("problem:")]
    assert result.code == 1 and len(lines) == 1, lines
    assert lines[0].startswith(f"problem: {target.warc_file} offset {target.offset}: ")
    assert "response record" in lines[0] and f"(capture {target.id}, {target.url})" in lines[0]
    assert result.err == ""
    # the captures after it still read back
    with Archive(settings) as archive:
        last = [c for c in archive.captures() if c.kind == "response"][2]
        assert b"incident 2" in archive.read_payload(last.id)
