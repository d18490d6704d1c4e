"""`archive verify`: re-read every WARC, check digests, check the index points at real records."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from warcio.archiveiterator import ArchiveIterator

from flows.archive.capture import Capture
from flows.archive.index import Index
from flows.archive.warc import sha256_file


@dataclass(frozen=True)
class Problem:
    warc_file: str
    offset: int | None
    problem: str
    capture: str | None = None  # the index entry concerned, when there is one
    url: str | None = None

    def __str__(self) -> str:
        where = self.warc_file if self.offset is None else f"{self.warc_file} offset {self.offset}"
        about = f" (capture {self.capture}, {self.url})" if self.capture else ""
        return f"{where}: {self.problem}{about}"

    def as_dict(self) -> dict[str, object]:
        return {
            "file": self.warc_file,
            "offset": self.offset,
            "problem": self.problem,
            "capture": self.capture,
            "url": self.url,
        }


@dataclass(frozen=True)
class Seen:
    """What the scan read of one record: enough to hold it against its index entry."""

    record_id: str
    length: int
    rec_type: str
    payload_sha256: str  # of the payload as read back (de-chunked, content-decoded)
    payload_digest: str | None  # the WARC-Payload-Digest header as it now stands


@dataclass
class Report:
    files: int = 0
    records: int = 0
    entries: int = 0
    problems: list[Problem] | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def _drain(stream: object) -> str:
    """Read the stream to its end; the sha256 of what it gave."""
    digest = hashlib.sha256()
    read = stream.read  # type: ignore[attr-defined]
    while chunk := read(1 << 20):
        digest.update(chunk)
    return digest.hexdigest()


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


def _scan_file(path: Path, name: str, found: dict[tuple[str, int], Seen]) -> Iterator[Problem]:
    """Every record's block and payload digest; fills `found` with (file, offset) -> what it read.

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
                    sha256 = _drain(record.content_stream())
                    it.read_to_end(record)
                    offset = it.get_record_offset()
                    headers = record.rec_headers
                    record_id = headers.get_header("WARC-Record-ID") or ""
                    found[(name, offset)] = Seen(
                        record_id,
                        it.get_record_length(),
                        record.rec_type,
                        sha256,
                        headers.get_header("WARC-Payload-Digest"),
                    )
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
    found: dict[tuple[str, int], Seen] = {}
    known = {row["name"]: row for row in index.files()}
    on_disk = {
        str(p.relative_to(raw))
        for p in raw.rglob("*")
        if p.is_file() and p.name.endswith((".warc", ".warc.gz"))
    }
    for name in sorted(on_disk - set(known)):
        problems.append(
            Problem(
                name,
                None,
                "a WARC file the index does not know; `incidents archive reindex` rebuilds the index "
                "from every WARC file in raw/ (a file from elsewhere: `incidents archive import` it)",
            )
        )
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
        if row["sha256"] and sha256_file(path) != row["sha256"]:
            when = "imported" if row["origin"] == "imported" else "closed"
            problems.append(Problem(name, None, f"file changed since it was {when} (sha256 differs)"))
        before = len(found)
        problems.extend(_scan_file(path, name, found))
        report.records += len(found) - before
    for capture in index.captures():
        report.entries += 1
        hit = found.get((capture.warc_file, capture.offset))
        name, offset, cid, url = capture.warc_file, capture.offset, capture.id, capture.url
        if hit is None:
            problems.append(Problem(name, offset, f"index entry {cid} points at no record", cid, url))
        elif hit.record_id != capture.record_id or hit.length != capture.length:
            problems.append(
                Problem(
                    name,
                    offset,
                    f"index entry {cid} expects record {capture.record_id} of {capture.length} "
                    f"bytes, found {hit.record_id} of {hit.length}",
                    cid,
                    url,
                )
            )
        else:
            problems.extend(Problem(name, offset, text, cid, url) for text in _against_index(capture, hit))
    return report


def _against_index(capture: Capture, seen: Seen) -> Iterator[str]:
    """The record against the digests stored when it was captured. The record's own digest
    headers prove nothing on their own: whoever rewrites the payload can rewrite them too."""
    if seen.rec_type not in ("response", "resource") or capture.kind in ("revisit", "unchanged"):
        # A revisit holds no payload; its original is checked where it lies. (Archives written
        # before 304s were revisits hold them as empty `response` records, indexed `unchanged`
        # with the digests of the capture they confirm.)
        return
    if capture.payload_digest and seen.payload_digest != capture.payload_digest:
        yield (
            f"WARC-Payload-Digest is {seen.payload_digest}, the index stored {capture.payload_digest} "
            "at capture: the record was rewritten"
        )
    if capture.payload_sha256 and seen.payload_sha256 != capture.payload_sha256:
        yield (
            f"payload sha256 is {seen.payload_sha256[:16]}..., the index stored "
            f"{capture.payload_sha256[:16]}... at capture: the payload was rewritten"
        )
