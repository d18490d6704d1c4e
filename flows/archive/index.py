"""raw/index.sqlite: captures, the WARC files that hold them, and link-rot checks (WAL mode)."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

from flows.archive.capture import Capture
from flows.store.sqlite import in_chunks
from schema.errors import ArchiveError

INDEX_NAME = "index.sqlite"
# Seconds a write waits for another process's write to end before "database is locked" (which
# flows/failures.py turns into one line naming the data directory).
BUSY_TIMEOUT = 60.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS captures (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    canonical_url TEXT NOT NULL,
    captured_at TEXT NOT NULL,
    status INTEGER,
    mime TEXT,
    payload_sha256 TEXT,
    payload_digest TEXT,
    warc_file TEXT NOT NULL,
    offset INTEGER NOT NULL,
    length INTEGER NOT NULL,
    revisit_of TEXT,
    kind TEXT NOT NULL,
    record_id TEXT NOT NULL,
    content_type TEXT,
    etag TEXT,
    last_modified TEXT,
    source_path TEXT,
    requested_url TEXT
);
CREATE INDEX IF NOT EXISTS captures_canonical ON captures (canonical_url, captured_at);
CREATE INDEX IF NOT EXISTS captures_url ON captures (url, captured_at);
CREATE INDEX IF NOT EXISTS captures_digest ON captures (canonical_url, payload_digest);
-- latest() asks for a URL as canonical, as given or as first requested (before redirects): one
-- OR over three columns, which SQLite answers from indexes only when all three have one (without
-- this, every fetch scanned the whole table). record_id: the importer's revisit lookups.
CREATE INDEX IF NOT EXISTS captures_requested ON captures (requested_url, captured_at);
CREATE INDEX IF NOT EXISTS captures_record ON captures (record_id);
CREATE TABLE IF NOT EXISTS warc_files (
    name TEXT PRIMARY KEY,      -- relative to raw/
    origin TEXT NOT NULL,       -- written | imported
    size INTEGER NOT NULL,      -- bytes of complete records; a longer file has a torn tail
    closed INTEGER NOT NULL,    -- 1: never appended to again
    sha256 TEXT                 -- imported files: digest of the file as copied in
);
-- Records of imported files that are not captures of web pages (metadata://, dns:, directory
-- listings...), and why; added after the first release: CREATE IF NOT EXISTS is its migration.
CREATE TABLE IF NOT EXISTS import_skips (
    warc_file TEXT NOT NULL,
    offset INTEGER NOT NULL,
    record_type TEXT NOT NULL,
    url TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (warc_file, offset)
);
-- Every record we write, of every type (warcinfo, request, response, metadata...): where it is
-- and the sha256 of its stored bytes (the gzip member), so `archive verify` catches a forged or
-- damaged record in a file still open for appending (a closed file also has its whole sha256).
-- Added after the first release: records written before it are checked as they were.
CREATE TABLE IF NOT EXISTS records (
    warc_file TEXT NOT NULL,
    offset INTEGER NOT NULL,
    length INTEGER NOT NULL,
    record_type TEXT NOT NULL,
    record_id TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    PRIMARY KEY (warc_file, offset)
);
CREATE TABLE IF NOT EXISTS link_checks (
    canonical_url TEXT PRIMARY KEY,
    checked_at TEXT NOT NULL,
    result TEXT NOT NULL,       -- unchanged | changed | gone | failed
    detail TEXT,
    first_gone_at TEXT
);
"""

_FIELDS = tuple(Capture.__dataclass_fields__)


def _open_read_only(path: Path) -> sqlite3.Connection:
    """The index opened for reading only: mode=ro reads the WAL when its shared-memory file can
    be had; in a read-only folder without one, only immutable=1 opens (the folder is a snapshot:
    nothing can write to it, so there is nothing to miss)."""
    uri = path.resolve().as_uri()
    for query in ("mode=ro", "immutable=1"):
        db = sqlite3.connect(
            f"{uri}?{query}", uri=True, timeout=BUSY_TIMEOUT, check_same_thread=False, isolation_level=None
        )
        try:
            db.execute("SELECT count(*) FROM captures").fetchone()
        except sqlite3.OperationalError:
            db.close()
            continue
        return db
    raise sqlite3.OperationalError(f"cannot open {path} for reading")


def warc_files_in(raw: Path) -> list[str]:
    """The WARC files under raw/, relative to it, sorted."""
    if not raw.is_dir():
        return []
    return sorted(
        str(p.relative_to(raw))
        for p in raw.rglob("*")
        if p.name.endswith((".warc", ".warc.gz")) and p.is_file()
    )


def lost_index(path: Path) -> str | None:
    """Why the index at `path` must not be created afresh: it is missing while WARC files lie
    beside it (a new, empty index would hide every capture they hold); None when it may be."""
    if path.name != INDEX_NAME or path.exists():
        return None
    count = len(warc_files_in(path.parent))
    if not count:
        return None
    return (
        f"{path} is missing while {path.parent} holds {count} WARC file{'s' if count != 1 else ''}; "
        "`incidents archive reindex` rebuilds it from them (nothing else was changed)"
    )


class Index:
    """A thread-safe handle on the index; every writer also holds raw/.lock (see warc.py).

    A missing index beside WARC files is an ArchiveError pointing to `archive reindex`, never a
    new empty index; `fresh=True` (the rebuild itself) creates one wherever it is asked to."""

    def __init__(self, path: Path, *, fresh: bool = False) -> None:
        why = None if fresh else lost_index(path)
        if why:
            raise ArchiveError(why)
        self.read_only = path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))
        if self.read_only:
            # A read-only data directory (a snapshot, a mount): list, show and verify still read it.
            self._db = _open_read_only(path)
        else:
            self._db = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT, check_same_thread=False, isolation_level=None
            )
        self._db.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        if self.read_only:
            return
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    # -- captures ----------------------------------------------------------------------------

    @staticmethod
    def insert(db: sqlite3.Connection, capture: Capture) -> None:
        values = tuple(getattr(capture, name) for name in _FIELDS)
        marks = ", ".join("?" for _ in _FIELDS)
        db.execute(f"INSERT OR IGNORE INTO captures ({', '.join(_FIELDS)}) VALUES ({marks})", values)

    @staticmethod
    def insert_record(
        db: sqlite3.Connection,
        warc_file: str,
        offset: int,
        length: int,
        record_type: str,
        record_id: str,
        sha256: str,
    ) -> None:
        db.execute(
            "INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?)",
            (warc_file, offset, length, record_type, record_id, sha256),
        )

    def records(self) -> list[sqlite3.Row]:
        """Every record written here, by file and offset (see the `records` table)."""
        try:
            return self.query("SELECT * FROM records ORDER BY warc_file, offset")
        except sqlite3.OperationalError:  # a read-only index from before the table existed
            return []

    @staticmethod
    def _capture(row: sqlite3.Row) -> Capture:
        return Capture(**{name: row[name] for name in _FIELDS})

    def get(self, capture_id: str) -> Capture | None:
        rows = self.query("SELECT * FROM captures WHERE id = ?", (capture_id,))
        return self._capture(rows[0]) if rows else None

    def by_record_id(self, record_id: str) -> Capture | None:
        rows = self.query("SELECT * FROM captures WHERE record_id = ? LIMIT 1", (record_id,))
        return self._capture(rows[0]) if rows else None

    def latest(self, url: str, *, kinds: tuple[str, ...]) -> Capture | None:
        marks = ", ".join("?" for _ in kinds)
        rows = self.query(
            f"SELECT * FROM captures WHERE (canonical_url = ? OR url = ? OR requested_url = ?) "
            f"AND kind IN ({marks}) "
            "ORDER BY captured_at DESC, rowid DESC LIMIT 1",
            (url, url, url, *kinds),
        )
        return self._capture(rows[0]) if rows else None

    def latest_many(self, urls: Collection[str], *, kinds: tuple[str, ...]) -> dict[str, Capture]:
        """`latest` for many URLs at once (those with no capture are left out), a query a chunk."""
        wanted = set(urls)
        best: dict[str, tuple[tuple[str, int], Capture]] = {}
        marks = ", ".join("?" for _ in kinds)
        for chunk, ins in in_chunks(wanted, lists=3):
            rows = self.query(
                f"SELECT rowid AS row_number, * FROM captures WHERE kind IN ({marks}) AND "
                f"(canonical_url IN ({ins}) OR url IN ({ins}) OR requested_url IN ({ins}))",
                (*kinds, *chunk, *chunk, *chunk),
            )
            for row in rows:
                order = (row["captured_at"], row["row_number"])
                for key in {row["canonical_url"], row["url"], row["requested_url"]} & wanted:
                    if key not in best or best[key][0] < order:
                        best[key] = (order, self._capture(row))
        return {key: capture for key, (_order, capture) in best.items()}

    def with_digest(self, canonical_url: str, digest: str) -> Capture | None:
        """The first capture of this URL whose stored payload has this digest (for revisits)."""
        rows = self.query(
            "SELECT * FROM captures WHERE canonical_url = ? AND payload_digest = ? "
            "AND kind IN ('response', 'resource', 'imported') ORDER BY captured_at, rowid LIMIT 1",
            (canonical_url, digest),
        )
        return self._capture(rows[0]) if rows else None

    def captures(self, *, url_prefix: str | None = None) -> list[Capture]:
        if url_prefix:
            escaped = url_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            rows = self.query(
                "SELECT * FROM captures WHERE url LIKE ? ESCAPE '\\' OR canonical_url LIKE ? ESCAPE '\\' "
                "ORDER BY captured_at, rowid",
                (escaped + "%", escaped + "%"),
            )
        else:
            rows = self.query("SELECT * FROM captures ORDER BY captured_at, rowid")
        return [self._capture(row) for row in rows]

    def in_file(self, warc_file: str) -> list[Capture]:
        rows = self.query("SELECT * FROM captures WHERE warc_file = ? ORDER BY offset", (warc_file,))
        return [self._capture(row) for row in rows]

    # -- files -------------------------------------------------------------------------------

    def files(self) -> list[sqlite3.Row]:
        return self.query("SELECT * FROM warc_files ORDER BY name")

    def file_with_sha256(self, sha256: str) -> str | None:
        rows = self.query("SELECT name FROM warc_files WHERE sha256 = ?", (sha256,))
        return str(rows[0]["name"]) if rows else None

    # -- link checks -------------------------------------------------------------------------

    def link_check(self, canonical_url: str) -> sqlite3.Row | None:
        rows = self.query("SELECT * FROM link_checks WHERE canonical_url = ?", (canonical_url,))
        return rows[0] if rows else None

    def record_check(self, canonical_url: str, checked_at: str, result: str, detail: str) -> str | None:
        """Store a refresh outcome; returns when the URL was first seen gone (if it is gone)."""
        with self.transaction() as db:
            row = db.execute(
                "SELECT first_gone_at FROM link_checks WHERE canonical_url = ?", (canonical_url,)
            ).fetchone()
            first_gone = row["first_gone_at"] if row else None
            if result == "gone":
                first_gone = first_gone or checked_at
            elif result in ("unchanged", "changed"):
                first_gone = None
            db.execute(
                "INSERT OR REPLACE INTO link_checks VALUES (?, ?, ?, ?, ?)",
                (canonical_url, checked_at, result, detail, first_gone),
            )
        return first_gone
