"""Appending WARC/1.1 records (gzip per record) to files this process owns, with size rotation.

Each writing process appends only to WARC files it created, named by the time it started
writing, its host and its process id (`incidents-<stamp>-<host>-<pid>-<serial>.warc.gz`), so
processes on several machines can share one raw/ directory without any lock on the files: the
only thing they share is the index, and its database does the locking. A process never
appends to another's file; a file left open by a process that is gone is closed by the next
writer on the same host (which can tell that the process is gone), its torn tail cut."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path
from typing import Any, BinaryIO, Generic, TypeVar

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from flows.archive.index import Index
from flows.settings import VERSION
from flows.store import faults
from flows.store.atomic import fsync_dir

T = TypeVar("T")

WARC_DIR = "warc"
IMPORTED_DIR = "imported"


def warc_date(when: datetime | None = None) -> str:
    """WARC/1.1 date with microseconds, UTC."""
    when = when or datetime.now(UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


def capture_id(record_id: str) -> str:
    """Stable capture id: derived from the WARC-Record-ID, so a re-index gives the same id."""
    return "c-" + hashlib.sha256(record_id.encode()).hexdigest()[:20]


def sha1_base32(stream: BinaryIO) -> str:
    """WARC-Payload-Digest in the form warcio and wget write (sha1, base32)."""
    digest = hashlib.sha1()
    for chunk in iter(lambda: stream.read(1 << 20), b""):
        digest.update(chunk)
    stream.seek(0)
    return "sha1:" + base64.b32encode(digest.digest()).decode("ascii")


@dataclass
class Written:
    """Where a record landed: file relative to raw/, offset and length of its gzip member."""

    warc_file: str
    offset: int
    length: int


class _Digesting:
    """The file as WARCWriter sees it: every byte written also goes into a sha256."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self.sha256 = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        return self._out.write(data)

    def flush(self) -> None:
        self._out.flush()

    def tell(self) -> int:
        return self._out.tell()


class Batch:
    """Records written inside one `WarcAppender.append()`; all or none become part of the file.

    Each record's place, type and the sha256 of its stored bytes (its gzip member) go into the
    index's `records` table in the same transaction, so `archive verify` holds every record, of
    every type, against what was written, in an open file as in a closed one."""

    def __init__(self, out: BinaryIO, name: str, db: Any) -> None:
        self._out = out
        self._writer = WARCWriter(out, gzip=True, warc_version="1.1")
        self.name = name
        self.db = db  # the sqlite connection, inside the append's transaction
        self.warcinfo_id: str | None = None  # this run's warcinfo record in this file

    @property
    def builder(self) -> WARCWriter:
        return self._writer

    def write(self, record: Any) -> Written:
        """Append one record; it names this run's warcinfo record (WARC-Warcinfo-ID)."""
        headers = record.rec_headers
        if self.warcinfo_id and record.rec_type != "warcinfo" and not headers.get_header("WARC-Warcinfo-ID"):
            headers.add_header("WARC-Warcinfo-ID", self.warcinfo_id)
        offset = self._out.tell()
        tee = _Digesting(self._out)
        self._writer.out = tee
        try:
            self._writer.write_record(record)
        finally:
            self._writer.out = self._out
        written = Written(self.name, offset, self._out.tell() - offset)
        Index.insert_record(
            self.db,
            written.warc_file,
            written.offset,
            written.length,
            str(record.rec_type),
            str(headers.get_header("WARC-Record-ID") or ""),
            tee.sha256.hexdigest(),
        )
        return written

    def tell(self) -> int:
        return self._out.tell()

    def cut(self, offset: int) -> None:
        """Drop what one failed job wrote (still uncommitted, so never seen by a reader)."""
        self._out.flush()
        self._out.truncate(offset)
        self._out.seek(offset)  # O_APPEND writes at the end anyway; this keeps tell() honest


class _Job(Generic[T]):
    def __init__(self, build: Callable[[Batch], T]) -> None:
        self.build = build
        self.result: T | None = None
        self.error: BaseException | None = None
        self.done = False


def writer_host() -> str:
    """This machine's name as it goes into WARC file names: letters, digits, `.`, `_` and `-`."""
    host = re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname())[:63]
    return host or "localhost"


_NAME = re.compile(
    r"incidents-(?P<stamp>\d{20})-"
    r"(?:(?P<host>[A-Za-z0-9._-]+)-(?P<pid>\d+)-(?P<serial>\d{5,})|(?P<old_pid>\d+)-[0-9a-f]{6})"
    r"\.warc\.gz$"
)


@dataclass(frozen=True)
class Writer:
    """Who wrote a WARC file of ours, read from its name: since when, on which host, which process.

    Files written before names carried the host (`incidents-<stamp>-<pid>-<hex>.warc.gz`) have
    `host` None: they were written on the machine that holds raw/."""

    stamp: str
    host: str | None
    pid: int

    @property
    def started(self) -> float:
        return datetime.strptime(self.stamp, "%Y%m%d%H%M%S%f").replace(tzinfo=UTC).timestamp()


def writer_of(name: str) -> Writer | None:
    """The writer a WARC file's name names (None for a file not named by incident-ingest)."""
    found = _NAME.search(Path(name).name)
    if found is None:
        return None
    if found["old_pid"] is not None:
        return Writer(found["stamp"], None, int(found["old_pid"]))
    return Writer(found["stamp"], found["host"], int(found["pid"]))


class Owner:
    """This process as the owner of its WARC files in one raw/ directory.

    One per (process, raw/): every appender of the process shares it, so they take turns on one
    open file, and a forked child (another pid) gets its own."""

    _owners: dict[tuple[int, Path], Owner] = {}
    _guard = threading.Lock()

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")
        self.host = writer_host()
        self.pid = os.getpid()
        self.serial = 0
        self.current: str | None = None  # the open file, relative to raw/

    @classmethod
    def of(cls, raw_dir: Path) -> Owner:
        key = (os.getpid(), raw_dir.resolve())
        with cls._guard:
            owner = cls._owners.get(key)
            if owner is None:
                owner = cls._owners[key] = cls()
            return owner

    def next_name(self) -> str:
        self.serial += 1
        return f"{WARC_DIR}/incidents-{self.stamp}-{self.host}-{self.pid}-{self.serial:05d}.warc.gz"

    def owns(self, name: str) -> bool:
        return writer_of(name) == Writer(self.stamp, self.host, self.pid)


def writer_gone(writer: Writer) -> bool:
    """Whether the process that wrote a file has ended, as far as this host can tell.

    Only a process of this host can be looked up (another host's files wait for a writer
    there); a pid now held by a process that started after the file's writer is a reuse."""
    if writer.host is not None and writer.host != writer_host():
        return False
    if writer.pid == os.getpid():
        return True  # an earlier process with this pid (this one's own files are not asked about)
    try:
        os.kill(writer.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    started = _process_started(writer.pid)
    return started is not None and started > writer.started + 2


def _process_started(pid: int) -> float | None:
    """When a process of this host started (Linux /proc; None where that cannot be read)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = next(
            float(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        ticks = float(stat.rsplit(")", 1)[1].split()[19])
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def close_abandoned(raw: Path, db: Any) -> list[str]:
    """Close the open files whose writers are gone from this host: torn tails cut, digests kept.

    Another writer's file is never appended to; closing one whose writer has ended only cuts
    bytes that were never indexed and freezes it, as the writer would have."""
    closed: list[str] = []
    me = Owner.of(raw)
    rows = db.execute("SELECT name, size FROM warc_files WHERE origin = 'written' AND closed = 0").fetchall()
    for row in rows:
        name = str(row["name"])
        writer = writer_of(name)
        if me.owns(name) or writer is None or not writer_gone(writer):
            continue
        actual = _cut_to(raw / name, row["size"])
        _close(raw, db, name, whole=actual == row["size"])
        closed.append(name)
    return closed


def _cut_to(path: Path, size: int) -> int:
    """Cut a torn batch past `size` (see WarcAppender); the file's size after (-1: missing)."""
    actual = path.stat().st_size if path.exists() else -1
    if actual > size:
        with open(path, "r+b") as fh:
            fh.truncate(size)
            os.fsync(fh.fileno())
        actual = size
    return actual


def _close(raw: Path, db: Any, name: str, *, whole: bool) -> None:
    path = raw / name
    db.execute(
        "UPDATE warc_files SET closed = 1, sha256 = ? WHERE name = ?",
        (sha256_file(path) if whole else None, name),
    )
    if path.exists():
        _freeze(path)


class WarcAppender:
    """Appends to this process's open WARC file (see `Owner`); one batch at a time per process.

    Crash safety: a batch is fsynced before its index rows commit, and warc_files.size records
    the end of the last committed batch. Bytes past that end can only be a batch torn by a kill
    (never indexed): the owner cuts them before its next append, and when the owner is gone, the
    next writer on its host cuts them as it closes the file; everything before them stays
    readable. A file at or past the size limit is marked closed and never opened for writing."""

    def __init__(
        self, raw_dir: Path, index: Index, max_bytes: int, info: dict[str, str] | None = None
    ) -> None:
        self._raw = raw_dir
        self._index = index
        self._max = max_bytes
        self._info = info or {}
        # A warcinfo record opens each run's writing in each file (this appender is one run):
        # many runs append to one file, and each says who wrote what follows, and how.
        self._warcinfo: dict[str, str] = {}
        # A warcinfo record is dated before every record it introduces: at the start of this
        # run, or earlier when a record to write is dated earlier (a fetch starts before it is
        # archived). `submit(..., date=)` lowers it before its job can be written.
        self._first_date = warc_date()
        self._owner = Owner.of(raw_dir)
        self._queue: list[_Job[Any]] = []
        self._cv = threading.Condition()
        self._leading = False

    def submit(self, build: Callable[[Batch], T], *, date: str | None = None) -> T:
        """Run `build(batch)` inside an append and return its result, once it is on disk.

        Group commit: threads that arrive while another thread is writing queue up, and the
        next leader writes all their records in one append, under one lock and one fsync. The
        fsync dominates the cost of a record (about 5 ms here), so this is what lets archiving
        keep up with many fetch threads. A job that raises has its bytes cut and its index rows
        rolled back; the others in the batch are unaffected."""
        job: _Job[T] = _Job(build)
        with self._cv:
            if date is not None:
                self._first_date = min(self._first_date, date)
            self._queue.append(job)
            while not job.done:
                if self._leading:
                    self._cv.wait()
                    continue
                self._leading = True
                jobs, self._queue = self._queue, []
                self._cv.release()
                try:
                    self._run(jobs)
                finally:
                    self._cv.acquire()
                    self._leading = False
                    self._cv.notify_all()
        if job.error is not None:
            raise job.error
        return job.result  # type: ignore[return-value]

    def _run(self, jobs: list[_Job[Any]]) -> None:
        try:
            with self.append() as batch:
                for job in jobs:
                    start = batch.tell()
                    batch.db.execute("SAVEPOINT job")
                    try:
                        job.result = job.build(batch)
                    except Exception as exc:  # noqa: BLE001 - the job's own error: raised in its thread
                        job.error = exc
                        batch.cut(start)
                        batch.db.execute("ROLLBACK TO job")
                    batch.db.execute("RELEASE job")
        except BaseException as exc:
            for job in jobs:
                job.error = job.error or exc
            if not isinstance(exc, Exception):
                raise
        finally:
            for job in jobs:
                job.done = True

    @contextmanager
    def append(self) -> Iterator[Batch]:
        with self._owner.lock:  # the appenders of this process take turns on its file
            # The file is chosen (a new one registered) in a transaction of its own: a run killed
            # in its first batch leaves a known file whose torn tail the next writer cuts, never
            # a WARC file the index does not know.
            with self._index.transaction() as db:
                name = self._current(db)
            with self._index.transaction() as db:
                path = self._raw / name
                with open(path, "ab") as out:
                    batch = Batch(out, name, db)
                    info_id = self._warcinfo.get(name)
                    if info_id is None:
                        info = self._warcinfo_record(batch.builder, name)
                        batch.write(info)
                        info_id = str(info.rec_headers.get_header("WARC-Record-ID"))
                    batch.warcinfo_id = info_id
                    yield batch
                    out.flush()
                    os.fsync(out.fileno())
                    faults.after("warc")  # on disk, not yet indexed: the next writer cuts it
                    size = out.tell()
                closed = size >= self._max
                db.execute(
                    "UPDATE warc_files SET size = ?, closed = ?, sha256 = ? WHERE name = ?",
                    (size, int(closed), sha256_file(path) if closed else None, name),
                )
                if closed:
                    _freeze(path)
        faults.after("index")  # the batch and its index rows are committed
        self._warcinfo[name] = info_id  # only once the batch that holds it is committed

    def _current(self, db: Any) -> str:
        """This process's open file, its torn tail cut; a new one when it is full or damaged."""
        owner = self._owner
        if owner.current is not None:
            row = db.execute(
                "SELECT size, closed FROM warc_files WHERE name = ?", (owner.current,)
            ).fetchone()
            if row is not None and not row["closed"]:
                name = owner.current
                actual = _cut_to(self._raw / name, row["size"])
                if actual == row["size"] and actual < self._max:
                    return name
                # Full, or shorter than we wrote (damaged): leave it for `verify` to report. A
                # full one's digest is recorded as it is closed, so later changes are caught.
                _close(self._raw, db, name, whole=actual == row["size"])
        # Each new file of ours is a moment to close what gone writers of this host left open.
        close_abandoned(self._raw, db)
        name = owner.next_name()
        (self._raw / WARC_DIR).mkdir(parents=True, exist_ok=True)
        (self._raw / name).touch()
        fsync_dir(self._raw / WARC_DIR)
        db.execute("INSERT INTO warc_files (name, origin, size, closed) VALUES (?, 'written', 0, 0)", (name,))
        owner.current = name
        return name

    def _warcinfo_record(self, builder: WARCWriter, name: str) -> Any:
        record = builder.create_warcinfo_record(Path(name).name, warcinfo_fields(self._info))
        record.rec_headers.replace_header("WARC-Date", self._first_date)
        return record


def warcinfo_fields(info: dict[str, str]) -> dict[str, str]:
    """The warcinfo block: who ran the crawl, from where, with what, under which rules.

    Field names as Heritrix, Browsertrix and the WARC 1.1 annex use them; `info` adds the
    operator, contact, User-Agent and robots policy of this run (empty values are left out)."""
    fields = {
        "software": f"incident-ingest/{VERSION} (warcio/{_version('warcio')})",
        "hostname": socket.gethostname(),
        "format": "WARC File Format 1.1",
        "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
        **info,
    }
    return {key: value for key, value in fields.items() if value}


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _freeze(path: Path) -> None:
    """A closed WARC file is read-only from now on (a reminder to people and tools, not a lock)."""
    path.chmod(0o444)


def http_response_headers(
    status: int, reason: str, http_version: str, headers: list[tuple[str, str]]
) -> StatusAndHeaders:
    """The response head as served, except Transfer-Encoding: httpx hands us the de-chunked body,
    so the header is kept under the name pywb and others use for it, and replay does not try to
    de-chunk again."""
    kept = [
        ("X-Archive-Orig-Transfer-Encoding", v) if k.lower() == "transfer-encoding" else (k, v)
        for k, v in headers
    ]
    protocol = http_version if http_version.startswith("HTTP/") else "HTTP/1.1"
    return StatusAndHeaders(f"{status} {reason}".strip(), kept, protocol=protocol)


def http_request_headers(request_line: str, headers: list[tuple[str, str]]) -> StatusAndHeaders:
    return StatusAndHeaders(request_line, headers, is_http_request=True)


WARC_FIELDS = "application/warc-fields"


def warc_fields(fields: dict[str, object]) -> bytes:
    """`name: value` lines (WARC 1.1's application/warc-fields, as Heritrix writes metadata).

    A list gives one line per item; a dict or other structured value is written as compact
    JSON on its line; None is left out. Keys keep their order."""
    lines: list[str] = []
    for key, value in fields.items():
        for item in value if isinstance(value, list) else [value]:
            if item is None:
                continue
            text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, sort_keys=True)
            lines.append(f"{key}: {' '.join(str(text).splitlines())}")
    return "".join(line + "\r\n" for line in lines).encode("utf-8")


def parse_warc_fields(data: bytes) -> dict[str, list[str]]:
    """The inverse of warc_fields for reading a metadata record back: name -> its values."""
    out: dict[str, list[str]] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out.setdefault(key.strip(), []).append(value.strip())
    return out


def metadata_record(
    builder: WARCWriter, uri: str, fields: dict[str, object], warc_headers: dict[str, str]
) -> Any:
    """A metadata record about the capture `warc_headers` names in WARC-Concurrent-To.

    Typed application/warc-fields, so replay tools (pywb, ReplayWeb.page, cdxj-indexer) never
    index it as a capture of `uri` (as JSON it was what pywb replayed for the page)."""
    body = warc_fields(fields)
    return builder.create_warc_record(
        uri,
        "metadata",
        payload=BytesIO(body),
        length=len(body),
        warc_content_type=WARC_FIELDS,
        warc_headers_dict=warc_headers,
    )
