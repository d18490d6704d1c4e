"""`archive verify`: re-read every WARC, check digests, check the index points at real records."""

from __future__ import annotations

import contextlib
import hashlib
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

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


def _next_start(fh: BinaryIO, after: int, gzipped: bool, known: list[int]) -> int | None:
    """Where the next record begins after damage: the next offset the index knows (exact), else
    the next gzip header or WARC/ line (a guess, for records written before the index kept them)."""
    following = [offset for offset in known if offset >= after]
    if following:
        return following[0]
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


def _scan_file(
    path: Path, name: str, found: dict[tuple[str, int], Seen], known: list[int], exact: bool
) -> Iterator[Problem]:
    """Every record's block and payload digest; fills `found` with (file, offset) -> what it read.

    After a damaged record the scan resumes at the next record (the next offset the index knows,
    or the next gzip member), so one bad record is reported once and the records after it are
    still checked. `exact`: `known` holds every record's offset (a file we wrote), so a record
    read anywhere else means warcio skipped a damaged one. warcio's own warnings (printed to
    stderr, naming no file) are swallowed: the damage is reported here, with file and offset."""
    gzipped = name.endswith(".gz")
    with open(path, "rb") as fh, contextlib.redirect_stderr(io.StringIO()):
        offset = 0
        while True:
            fh.seek(offset)
            it = ArchiveIterator(fh, check_digests=True)
            try:
                for record in it:
                    sha256 = _drain(record.content_stream())
                    it.read_to_end(record)
                    start = it.get_record_offset()
                    length = it.get_record_length()
                    if exact and start != offset:
                        # warcio read past a damaged member into the next one without a word
                        raise ValueError(f"no record boundary at offset {offset}")
                    offset = start
                    headers = record.rec_headers
                    record_id = headers.get_header("WARC-Record-ID") or ""
                    found[(name, offset)] = Seen(
                        record_id,
                        length,
                        record.rec_type,
                        sha256,
                        headers.get_header("WARC-Payload-Digest"),
                    )
                    if record.digest_checker.passed is False:
                        for problem in record.digest_checker.problems:
                            yield Problem(
                                name,
                                offset,
                                f"{problem} ({record.rec_type} record {record_id}): the record was altered",
                            )
                    offset += length
                return
            except Exception as exc:  # noqa: BLE001 - zlib, EOF, ArchiveLoadFailed: whatever the damage looks like
                resume = _next_start(fh, offset + 1, gzipped, known)
                tail = f"; checking resumes at offset {resume}" if resume is not None else ""
                yield Problem(name, offset, f"damaged record, cannot be read ({_describe(exc)}){tail}")
                if resume is None:
                    return
                offset = resume


def _member_sha256(fh: BinaryIO, offset: int, length: int) -> str | None:
    """sha256 of the stored bytes of one record; None when the file ends before them."""
    fh.seek(offset)
    data = fh.read(length)
    return hashlib.sha256(data).hexdigest() if len(data) == length else None


def _check_records(path: Path, name: str, rows: list[Any]) -> Iterator[Problem]:
    """Each record against the sha256 the index stored as it was written: any type, any file."""
    with open(path, "rb") as fh:
        for row in rows:
            what = f"{row['record_type']} record {row['record_id']}"
            now = _member_sha256(fh, row["offset"], row["length"])
            if now is None:
                yield Problem(name, row["offset"], f"{what} is cut short (the file ends inside it)")
            elif now != row["sha256"]:
                yield Problem(
                    name,
                    row["offset"],
                    f"{what} changed since it was written (the sha256 of its {row['length']} "
                    "stored bytes differs from the index's): forged or damaged",
                )


class _Problems:
    """One line per place: problems found at the same file and offset are merged into one, so a
    damaged record is reported once, with every capture it concerns."""

    def __init__(self) -> None:
        self._at: dict[tuple[str, int | None], Problem] = {}
        self._file_level: list[Problem] = []

    def add(self, problem: Problem, *, only_if_new: bool = False) -> None:
        if problem.offset is None:
            self._file_level.append(problem)
            return
        key = (problem.warc_file, problem.offset)
        old = self._at.get(key)
        if old is None:
            self._at[key] = problem
        elif not only_if_new and problem.problem not in old.problem:
            self._at[key] = replace(
                old,
                problem=f"{old.problem}; {problem.problem}",
                capture=old.capture or problem.capture,
                url=old.url or problem.url,
            )
        elif problem.capture and not old.capture:
            self._at[key] = replace(old, capture=problem.capture, url=problem.url)

    def extend(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            self.add(problem)

    def files_with_record_problems(self) -> set[str]:
        return {name for name, _offset in self._at}

    def all(self) -> list[Problem]:
        placed = sorted(self._at.values(), key=lambda p: (p.warc_file, p.offset or 0))
        return self._file_level + placed


def verify(raw: Path, index: Index) -> Report:
    report = Report(problems=[])
    problems = _Problems()
    found: dict[tuple[str, int], Seen] = {}
    known = {row["name"]: row for row in index.files()}
    records: dict[str, list[Any]] = {}
    starts: dict[str, set[int]] = {}  # where each file's records begin, as far as the index knows
    for row in index.records():
        records.setdefault(row["warc_file"], []).append(row)
        starts.setdefault(row["warc_file"], set()).add(row["offset"])
    captures = index.captures()
    for capture in captures:
        starts.setdefault(capture.warc_file, set()).add(capture.offset)
    for name in sorted(_on_disk(raw) - set(known)):
        problems.add(
            Problem(
                name,
                None,
                "a WARC file the index does not know; `incidents archive reindex` rebuilds the index "
                "from every WARC file in raw/ (a file from elsewhere: `incidents archive import` it)",
            )
        )
    changed: list[Problem] = []
    for name, row in sorted(known.items()):
        path = raw / name
        if not path.exists():
            problems.add(Problem(name, None, "missing: restore it from a backup"))
            continue
        report.files += 1
        before = len(found)
        changed += _check_file(path, name, row, problems)
        problems.extend(_scan_file(path, name, found, sorted(starts.get(name, ())), name in records))
        problems.extend(_check_records(path, name, records.get(name, [])))
        report.records += len(found) - before
    placed = problems.files_with_record_problems()
    # The whole file's digest, unless the digests of its records (a file we wrote) said which.
    problems.extend(p for p in changed if p.warc_file not in placed or p.warc_file not in records)
    types = {(name, row["offset"]): row["record_type"] for name, rows in records.items() for row in rows}
    for (name, offset), seen in found.items():
        expected = types.get((name, offset))
        if expected is not None and expected != seen.rec_type:
            problems.add(
                Problem(name, offset, f"a {seen.rec_type} record where a {expected} record was written")
            )
    report.entries = len(captures)
    for capture in captures:
        for problem in _check_capture(capture, found.get((capture.warc_file, capture.offset))):
            problems.add(problem, only_if_new=problem.problem.endswith("points at no record"))
    report.problems = problems.all()
    return report


def _on_disk(raw: Path) -> set[str]:
    return {
        str(p.relative_to(raw))
        for p in raw.rglob("*")
        if p.is_file() and p.name.endswith((".warc", ".warc.gz"))
    }


def _check_types(
    records: dict[str, list[Any]], found: dict[tuple[str, int], Seen], problems: _Problems
) -> None:
    for name, rows in records.items():
        for row in rows:
            seen = found.get((name, row["offset"]))
            if seen is not None and seen.rec_type != row["record_type"]:
                problems.add(
                    Problem(
                        name,
                        row["offset"],
                        f"a {seen.rec_type} record where a {row['record_type']} record was written",
                    )
                )


def _check_file(path: Path, name: str, row: Any, problems: _Problems) -> list[Problem]:
    """Size against what was written; returns the whole-file digest problem, if any, apart."""
    size = path.stat().st_size
    if size < row["size"]:
        problems.add(Problem(name, size, f"truncated: {size} bytes on disk, {row['size']} were written"))
    elif size > row["size"] and row["origin"] == "written":
        problems.add(
            Problem(
                name,
                row["size"],
                f"{size - row['size']} bytes after the last complete record "
                "(an interrupted write; the next append cuts them)",
            )
        )
    if row["sha256"] and sha256_file(path) != row["sha256"]:
        when = "imported" if row["origin"] == "imported" else "closed"
        return [Problem(name, None, f"file changed since it was {when} (sha256 differs)")]
    return []


def _check_capture(capture: Capture, hit: Seen | None) -> Iterator[Problem]:
    name, offset, cid, url = capture.warc_file, capture.offset, capture.id, capture.url
    if hit is None:
        # Where the scan already reported damage there, that line names the capture instead.
        yield Problem(name, offset, f"index entry {cid} points at no record", cid, url)
    elif hit.record_id != capture.record_id or hit.length != capture.length:
        yield Problem(
            name,
            offset,
            f"index entry {cid} expects record {capture.record_id} of {capture.length} "
            f"bytes, found {hit.record_id} of {hit.length}",
            cid,
            url,
        )
    else:
        for text in _against_index(capture, hit):
            yield Problem(name, offset, text, cid, url)


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
