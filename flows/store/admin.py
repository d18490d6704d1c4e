"""`incidents db ...`: upgrade a shared database's schema, copy a data directory's SQLite state
into it, and say what each store holds where."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flows.settings import Settings
from flows.store.database import (
    COMPONENTS,
    SHARED_ONLY,
    Database,
    is_url,
    latest_version,
    open_component,
    quote,
    shown_url,
)
from schema.errors import ArchiveError, DatabaseError

# Each component's SQLite file in raw/, and its tables in the order a copy fills them.
FILES = {"index": "index.sqlite", "ledger": "ledger.sqlite", "discovery": "discovery.sqlite"}
TABLES = {
    "index": ("warc_files", "captures", "import_skips", "records", "link_checks"),
    "ledger": ("sources",),
    "discovery": ("seen", "checked"),
    "review": ("queue",),
}
BATCH = 1000


def shared_url(settings: Settings) -> str:
    if not settings.database:
        raise DatabaseError(
            "INCIDENTS_DATABASE_URL is not set: give the PostgreSQL database to use as "
            "postgresql://user@host/database (SQLite files in raw/ upgrade themselves when opened)"
        )
    return settings.database


def upgrade(settings: Settings) -> list[str]:
    """Bring the shared database's schema to this program's; the migrations applied."""
    db = Database.open(shared_url(settings))
    try:
        return db.upgrade(COMPONENTS)
    finally:
        db.close()


@dataclass
class StoreStatus:
    component: str
    where: str
    version: int
    wanted: int
    rows: dict[str, int] = field(default_factory=dict)
    shared: bool = False
    exists: bool = True

    @property
    def state(self) -> str:
        if not self.exists:
            return "not created yet"
        if self.version == self.wanted:
            return "ok"
        if self.version > self.wanted:
            return f"newer than this program (has {self.version}): upgrade incident-ingest"
        if self.shared:
            return f"needs `incidents db upgrade` (has {self.version})"
        return f"upgrades itself when next opened (has {self.version})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "where": self.where,
            "version": self.version,
            "wanted": self.wanted,
            "state": self.state,
            "rows": self.rows,
        }


def status(settings: Settings) -> list[StoreStatus]:
    """Each store: where it lives, its schema version against the program's, rows per table."""
    url = settings.database
    found: list[StoreStatus] = []
    shared = Database.open(url) if url else None
    try:
        for component in COMPONENTS:
            if shared is None and component in SHARED_ONLY:
                continue
            path = settings.raw_dir / FILES.get(component, "")
            db = shared if shared is not None else (Database.open(path) if path.exists() else None)
            where = shown_url(url) if url else str(path)
            if db is None:
                found.append(StoreStatus(component, where, 0, latest_version(component), exists=False))
                continue
            try:
                version = db.versions().get(component, 0)
                tables = db.tables()
                rows = {t: int(_count(db, t)) for t in TABLES[component] if t in tables}
            finally:
                if db is not shared:
                    db.close()
            wanted = latest_version(component)
            found.append(StoreStatus(component, where, version, wanted, rows, shared=shared is not None))
    finally:
        if shared is not None:
            shared.close()
    return found


def _count(db: Database, table: str) -> int:
    row = db.one(f"SELECT count(*) FROM {table}")
    return int(row[0]) if row is not None else 0


def copy(settings: Settings, source: Path | None = None) -> dict[str, int]:
    """Copy the SQLite state of `source` (a data directory; default: settings.data_dir) into the
    shared database, in one transaction: the archive index, ledger and discovery state, then the
    record counter (the highest record id in records/) and the queue's index (records/queue/).
    The database must hold none of it yet. Rows copied, by table."""
    url = shared_url(settings)
    source_settings = settings.model_copy(update={"data_dir": source}) if source else settings
    raw = source_settings.raw_dir
    from flows.archive.index import lost_index

    why = lost_index(raw / FILES["index"])
    if why:
        raise ArchiveError(why)
    target = Database.open(url)
    try:
        target.upgrade(COMPONENTS)
        held = {t: n for c in COMPONENTS for t in TABLES[c] if (n := _count(target, t))}
        if held:
            said = ", ".join(f"{n} {t}" for t, n in held.items())
            raise DatabaseError(
                f"the database at {target.name} already holds {said}: copy into an empty database "
                "(a new one made with `createdb`), or keep using this one"
            )
        copied: dict[str, int] = {}
        with target.transaction():
            for component, name in FILES.items():
                path = raw / name
                if not path.exists():
                    continue
                db = open_component(path, component)
                try:
                    for table in TABLES[component]:
                        copied[table] = copy_table(db, target, table)
                finally:
                    db.close()
            copied.update(_copy_review(source_settings, target))
        return copied
    finally:
        target.close()


def copy_table(source: Database, target: Database, table: str) -> int:
    columns = [c for c in source.columns(table) if c in set(target.columns(table))]
    names = ", ".join(quote(c) for c in columns)
    insert = f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' for _ in columns)})"
    rows = source.all(f"SELECT {names} FROM {table} ORDER BY {source.row_order}")  # as inserted
    for start in range(0, len(rows), BATCH):
        target.executemany(insert, [tuple(row) for row in rows[start : start + BATCH]])
    return len(rows)


def _copy_review(settings: Settings, target: Database) -> dict[str, int]:
    """The record counter from records/, the queue's index from records/queue/."""
    from flows.store.queue import QueueStore
    from flows.store.records import RecordStore, set_counter

    highest = RecordStore(settings.records_dir).highest_number()
    set_counter(target, highest)
    indexed = QueueStore(settings.queue_dir).reindex(target)
    return {"as the last record number": highest, "queue": indexed}


__all__ = ["copy", "copy_table", "is_url", "status", "upgrade"]
