"""The archive index: captures, the WARC files that hold them, every record written, link-rot
checks. raw/index.sqlite (WAL mode) on one machine, or the tables of INCIDENTS_DATABASE_URL's
PostgreSQL database; its schema is flows/store/migrations/index/."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

from flows.archive.capture import Capture
from flows.store.database import (
    Database,
    Row,
    SqliteDatabase,
    in_chunks,
    insert_ignore_sql,
    open_component,
    quote,
    upsert_sql,
)
from schema.errors import ArchiveError

INDEX_NAME = "index.sqlite"


_FIELDS = tuple(Capture.__dataclass_fields__)
_INSERT = insert_ignore_sql("captures", _FIELDS)
_RECORD = upsert_sql(
    "records",
    ("warc_file", "offset", "length", "record_type", "record_id", "sha256"),
    ("warc_file", "offset"),
)
UPSERT_CHECK = upsert_sql(
    "link_checks", ("canonical_url", "checked_at", "result", "detail", "first_gone_at"), ("canonical_url",)
)
_OFFSET = quote("offset")


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

    `database_url` (Settings.database_url): the index lives in that PostgreSQL database, not in
    `path`. A missing SQLite index beside WARC files is an ArchiveError pointing to `archive
    reindex`, never a new empty index; `fresh=True` (the rebuild itself) creates one wherever it
    is asked to."""

    def __init__(self, path: Path, *, fresh: bool = False, database_url: str = "") -> None:
        self.read_only = False
        if database_url:
            self._db: Database = open_component(database_url, "index")
            return
        why = None if fresh else lost_index(path)
        if why:
            raise ArchiveError(why)
        # A read-only data directory (a snapshot, a mount): list, show and verify still read it.
        self.read_only = path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))
        self._db = open_component(path, "index", read_only=self.read_only)

    @property
    def database(self) -> Database:
        return self._db

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        """A write transaction; `execute` on what it yields (and `query` in this thread) sees it."""
        with self._db.transaction() as db:
            yield db

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[Row]:
        return self._db.all(sql, params)

    def checkpoint(self) -> None:
        """Fold a SQLite index's WAL into its file (before it is moved); nothing on PostgreSQL."""
        if isinstance(self._db, SqliteDatabase):
            self._db.checkpoint()

    # -- captures ----------------------------------------------------------------------------

    @staticmethod
    def insert(db: Database, capture: Capture) -> None:
        db.execute(_INSERT, tuple(getattr(capture, name) for name in _FIELDS))

    @staticmethod
    def insert_record(
        db: Database,
        warc_file: str,
        offset: int,
        length: int,
        record_type: str,
        record_id: str,
        sha256: str,
    ) -> None:
        db.execute(_RECORD, (warc_file, offset, length, record_type, record_id, sha256))

    def records(self) -> list[Row]:
        """Every record written here, by file and offset (see the `records` table)."""
        try:
            return self.query(f"SELECT * FROM records ORDER BY warc_file, {_OFFSET}")
        except sqlite3.OperationalError:  # a read-only index from before the table existed
            return []

    @staticmethod
    def _capture(row: Row) -> Capture:
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
            f"ORDER BY captured_at DESC, {self._db.row_order} DESC LIMIT 1",
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
                f"SELECT {self._db.row_order} AS row_number, * FROM captures WHERE kind IN ({marks}) AND "
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
            f"AND kind IN ('response', 'resource', 'imported') ORDER BY captured_at, {self._db.row_order} "
            "LIMIT 1",
            (canonical_url, digest),
        )
        return self._capture(rows[0]) if rows else None

    def captures(self, *, url_prefix: str | None = None) -> list[Capture]:
        if url_prefix:
            escaped = url_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            rows = self.query(
                "SELECT * FROM captures WHERE url LIKE ? ESCAPE '\\' OR canonical_url LIKE ? ESCAPE '\\' "
                f"ORDER BY captured_at, {self._db.row_order}",
                (escaped + "%", escaped + "%"),
            )
        else:
            rows = self.query(f"SELECT * FROM captures ORDER BY captured_at, {self._db.row_order}")
        return [self._capture(row) for row in rows]

    def in_file(self, warc_file: str) -> list[Capture]:
        rows = self.query(f"SELECT * FROM captures WHERE warc_file = ? ORDER BY {_OFFSET}", (warc_file,))
        return [self._capture(row) for row in rows]

    # -- files -------------------------------------------------------------------------------

    def files(self) -> list[Row]:
        return self.query("SELECT * FROM warc_files ORDER BY name")

    def file_with_sha256(self, sha256: str) -> str | None:
        rows = self.query("SELECT name FROM warc_files WHERE sha256 = ?", (sha256,))
        return str(rows[0]["name"]) if rows else None

    # -- link checks -------------------------------------------------------------------------

    def link_check(self, canonical_url: str) -> Row | None:
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
            db.execute(UPSERT_CHECK, (canonical_url, checked_at, result, detail, first_gone))
        return first_gone
