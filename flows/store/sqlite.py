"""A small SQLite table store shared by a process's threads: the ledger and discovery's seen list."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

# SQLite allows 999 variables a statement (older builds; newer allow more)
MAX_VARIABLES = 999


def in_chunks(values: Collection[str], *, lists: int = 1) -> Iterator[tuple[list[str], str]]:
    """The distinct values, sorted, in chunks small enough for `lists` IN (...) lists of them in
    one statement, each with its placeholders ("?, ?, ...")."""
    listed = sorted(set(values))
    size = max(1, (MAX_VARIABLES - 9) // lists)  # 9 left for the statement's other variables
    for start in range(0, len(listed), size):
        chunk = listed[start : start + size]
        yield chunk, ", ".join("?" for _ in chunk)


class SqliteStore:
    """One autocommit connection behind a lock, in WAL mode so other processes' writers never block reads."""

    def __init__(self, path: Path, schema: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, timeout=60, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(schema)

    def close(self) -> None:
        self._db.close()

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        with self._lock:
            self._db.execute(sql, params)

    def one(self, sql: str, params: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        with self._lock:
            return self._db.execute(sql, params).fetchone()

    def all(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()
