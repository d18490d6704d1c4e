"""`archive verify`: re-read every WARC, check digests, check the index points at real records."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from warcio.archiveiterator import ArchiveIterator

from flows.archive.index import Index


@dataclass(frozen=True)
class Problem:
    warc_file: str
    offset: int | None
    problem: str

    def __str__(self) -> str:
        where = self.warc_file if self.offset is None else f"{self.warc_file} offset {self.offset}"
        return f"{where}: {self.problem}"


@dataclass
class Report:
    files: int = 0
    records: int = 0
    entries: int = 0
    problems: list[Problem] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _drain(stream: object) -> None:
    read = stream.read  # type: ignore[attr-defined]
    while read(1 << 20):
        pass


def _describe(exc: Exception) -> str:
    text = str(exc).split(", first line", 1)[0].split("\n", 1)[0]
    text = text.encode("ascii", "replace").decode("ascii")[:120]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _next_start(fh: BinaryIO, after: int, gzipped: bool) -> int | None:
    """Where the next record may begin after damage: the next gzip header, or WARC/ line."""
    magic = b"\x1f\x8b\x08" if gzipped else b"\r\nWARC/1."
    fh.seek(after)
    carry = b""
    base = after
    while chunk := fh.read(1 << 20):
        window = carry + chunk
        at = window.find(magic)
        if at >= 0:
            return base - len(carry) + at + (0 if gzipped else 2)
        carry = window[-len(magic) :]
        base += len(chunk)
    return None


def _scan_file(path: Path, name: str, found: dict[tuple[str, int], tuple[str, int]]) -> Iterator[Problem]:
    """Every record's block and payload digest; fills `found` with (file, offset) -> (id, length).

    After a damaged record the scan resumes at the next record boundary, so one bad record is
    reported once and the records after it are still checked."""
    gzipped = name.endswith(".gz")
    with open(path, "rb") as fh:
        offset = 0
        while True:
            fh.seek(offset)
            it = ArchiveIterator(fh, check_digests=True)
            try:
                for record in it:
                    _drain(record.content_stream())
                    it.read_to_end(record)
                    offset = it.get_record_offset()
                    record_id = record.rec_headers.get_header("WARC-Record-ID") or ""
                    found[(name, offset)] = (record_id, it.get_record_length())
                    if record.digest_checker.passed is False:
                        for problem in record.digest_checker.problems:
                            yield Problem(
                                name, offset, f"{problem} (record {record_id}): the record was altered"
                            )
                    offset += it.get_record_length()
                return
            except Exception as exc:  # noqa: BLE001 - zlib, EOF, ArchiveLoadFailed: whatever the damage looks like
                resume = _next_start(fh, offset + 1, gzipped)
                tail = f"; checking resumes at offset {resume}" if resume is not None else ""
                yield Problem(name, offset, f"damaged record, cannot be read ({_describe(exc)}){tail}")
                if resume is None:
                    return
                offset = resume


def verify(raw: Path, index: Index) -> Report:
    report = Report(problems=[])
    problems = report.problems
    assert problems is not None
    found: dict[tuple[str, int], tuple[str, int]] = {}
    known = {row["name"]: row for row in index.files()}
    on_disk = {
        str(p.relative_to(raw))
        for p in raw.rglob("*")
        if p.is_file() and p.name.endswith((".warc", ".warc.gz"))
    }
    for name in sorted(on_disk - set(known)):
        problems.append(Problem(name, None, "a WARC file the index does not know; import it or remove it"))
    for name, row in sorted(known.items()):
        path = raw / name
        if not path.exists():
            problems.append(Problem(name, None, "missing: restore it from a backup"))
            continue
        report.files += 1
        size = path.stat().st_size
        if size < row["size"]:
            problems.append(
                Problem(name, size, f"truncated: {size} bytes on disk, {row['size']} were written")
            )
        elif size > row["size"] and row["origin"] == "written":
            problems.append(
                Problem(
                    name,
                    row["size"],
                    f"{size - row['size']} bytes after the last complete record "
                    "(an interrupted write; the next append cuts them)",
                )
            )
        if row["sha256"] and _sha256(path) != row["sha256"]:
            problems.append(Problem(name, None, "file changed since it was imported (sha256 differs)"))
        before = len(found)
        problems.extend(_scan_file(path, name, found))
        report.records += len(found) - before
    for capture in index.captures():
        report.entries += 1
        hit = found.get((capture.warc_file, capture.offset))
        if hit is None:
            problems.append(
                Problem(capture.warc_file, capture.offset, f"index entry {capture.id} points at no record")
            )
        elif hit[0] != capture.record_id or hit[1] != capture.length:
            problems.append(
                Problem(
                    capture.warc_file,
                    capture.offset,
                    f"index entry {capture.id} expects record {capture.record_id} of {capture.length} "
                    f"bytes, found {hit[0]} of {hit[1]}",
                )
            )
    return report
