"""raw/ledger.sqlite: per source URL, the last snapshot digest and the draft made from it.

A derived index for speed: a re-run decides `duplicate` / `unchanged` without extracting again.
Losing it costs only speed: the queue's content-derived draft ids still catch every duplicate.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Entry:
    url: str
    digest: str
    draft_id: str
    snapshot: str | None
    skipped: str | None = None  # why the gate left it out, when it did


def connect(path: Path) -> sqlite3.Connection:
    """One autocommit connection shared by a process's threads (callers hold a lock around it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=60, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")  # readers never wait for the other processes' writers
    db.execute("PRAGMA synchronous=NORMAL")
    return db


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = connect(path)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS sources (url TEXT PRIMARY KEY, digest TEXT NOT NULL,"
                " draft_id TEXT NOT NULL, snapshot TEXT, skipped TEXT)"
            )

    def close(self) -> None:
        self._db.close()

    def get(self, url: str) -> Entry | None:
        with self._lock:
            row = self._db.execute(
                "SELECT url, digest, draft_id, snapshot, skipped FROM sources WHERE url = ?", (url,)
            ).fetchone()
        return Entry(*row) if row else None

    def put(self, entry: Entry) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO sources (url, digest, draft_id, snapshot, skipped) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT(url) DO UPDATE SET digest=excluded.digest, draft_id=excluded.draft_id,"
                " snapshot=excluded.snapshot, skipped=excluded.skipped",
                (entry.url, entry.digest, entry.draft_id, entry.snapshot, entry.skipped),
            )
