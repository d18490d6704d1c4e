"""The one SQL layer under the stores: SQLite files in raw/ (the embedded default) or PostgreSQL
(INCIDENTS_DATABASE_URL=postgresql://...), behind one interface.

Stores write SQL with `?` placeholders and the portable subset both engines speak (INSERT ...
ON CONFLICT, SAVEPOINT); what still differs lives here: placeholders (`%s` for psycopg), the
column that orders rows as inserted (SQLite's rowid, PostgreSQL's `seq`), PRAGMAs (SQLite only),
how many variables a statement takes. Rows are read by column name (or position) on both.

Schemas are versioned migrations, data files in migrations/<component>/NNNN_name.sql (a
`NNNN_name.postgresql.sql` beside one replaces it on PostgreSQL). A SQLite file upgrades itself
when opened; a PostgreSQL database is upgraded by `incidents db upgrade` only, and opening one
whose schema is behind is a DatabaseError (one line, exit 2) saying so.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from schema.errors import DatabaseError

MIGRATIONS = Path(__file__).parent / "migrations"
# Seconds a write waits for another process's write to end before "database is locked" (which
# flows/failures.py turns into one line naming the data directory).
BUSY_TIMEOUT = 60.0
# SQLite allows 999 variables a statement (older builds; newer allow more); psycopg 65535.
MAX_VARIABLES = 999
# Every component; SQLite keeps each in a file of its own, PostgreSQL all in one database.
COMPONENTS = ("index", "ledger", "discovery", "review")
# Components that only exist in a shared database (on one machine they are files: see records.py).
SHARED_ONLY = ("review",)


_SCHEMA_VERSION = (
    "CREATE TABLE IF NOT EXISTS schema_version (component TEXT NOT NULL, version INTEGER NOT NULL,"
    " name TEXT NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (component, version))"
)
_APPLIED = "INSERT INTO schema_version (component, version, name, applied_at) VALUES (?, ?, ?, ?)"


class Row(Protocol):
    """A result row: row["column"] or row[0]; iterating gives the values (as sqlite3.Row)."""

    def __getitem__(self, key: int | str, /) -> Any: ...
    def keys(self) -> list[str]: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __len__(self) -> int: ...


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


def in_chunks(values: Collection[str], *, lists: int = 1) -> Iterator[tuple[list[str], str]]:
    """The distinct values, sorted, in chunks small enough for `lists` IN (...) lists of them in
    one statement, each with its placeholders ("?, ?, ...")."""
    listed = sorted(set(values))
    size = max(1, (MAX_VARIABLES - 9) // lists)  # 9 left for the statement's other variables
    for start in range(0, len(listed), size):
        chunk = listed[start : start + size]
        yield chunk, ", ".join("?" for _ in chunk)


def is_url(target: str | Path | None) -> bool:
    return isinstance(target, str) and target.lower().startswith(("postgresql://", "postgres://"))


def shown_url(url: str) -> str:
    """The URL without its password (in the authority or as ?password=), for messages."""
    scheme, sep, rest = url.partition("://")
    authority, slash, tail = rest.partition("/")
    if "@" in authority:
        who, where = authority.rsplit("@", 1)
        authority = f"{who.split(':', 1)[0]}@{where}"
    path, _, query = tail.partition("?")
    kept = "&".join(p for p in query.split("&") if p and p.split("=", 1)[0].lower() != "password")
    return f"{scheme}{sep}{authority}{slash}{path}{'?' if kept else ''}{kept}"


def upsert_sql(table: str, columns: Sequence[str], key: Sequence[str]) -> str:
    """INSERT of `columns` that replaces the row with the same `key` (both engines' syntax)."""
    names = ", ".join(quote(c) for c in columns)
    marks = ", ".join("?" for _ in columns)
    keys = ", ".join(quote(c) for c in key)
    sets = ", ".join(f"{quote(c)} = excluded.{quote(c)}" for c in columns if c not in key)
    return f"INSERT INTO {table} ({names}) VALUES ({marks}) ON CONFLICT ({keys}) DO UPDATE SET {sets}"


def insert_ignore_sql(table: str, columns: Sequence[str]) -> str:
    """INSERT of `columns` that does nothing when the row's key is already there."""
    names = ", ".join(quote(c) for c in columns)
    marks = ", ".join("?" for _ in columns)
    return f"INSERT INTO {table} ({names}) VALUES ({marks}) ON CONFLICT DO NOTHING"


_RESERVED = frozenset({"offset", "order", "user", "limit", "group"})


def quote(column: str) -> str:
    """A column name as both engines accept it (`offset` is reserved in PostgreSQL)."""
    return f'"{column}"' if column in _RESERVED else column


_TOKENS = re.compile(r"'(?:[^']|'')*'|\?|%")


def to_psycopg(sql: str) -> str:
    """`?` placeholders as psycopg's `%s`; a literal `%` doubled (string literals keep `?`)."""

    def swap(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "?":
            return "%s"
        if token == "%":
            return "%%"
        return token.replace("%", "%%")

    return _TOKENS.sub(swap, sql)


class _PgRow:
    """A psycopg row as sqlite3.Row reads: by name or position; iterating gives the values."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: dict[str, int], values: Sequence[Any]) -> None:
        self._names = names
        self._values = values

    def __getitem__(self, key: int | str) -> Any:
        return self._values[key if isinstance(key, int) else self._names[key]]

    def keys(self) -> list[str]:
        return list(self._names)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Row({dict(zip(self._names, self._values, strict=True))!r})"


def _pg_rows(cursor: Any) -> Any:
    names = {column.name: i for i, column in enumerate(cursor.description or ())}
    return lambda values: _PgRow(names, values)


class Database:
    """One connection behind a re-entrant lock, shared by a process's threads (a transaction
    holds the lock, so reads in the same thread see its writes)."""

    dialect: str
    # The column that orders a table's rows as inserted (captures: see migrations/index).
    row_order: str
    # What messages name: the file, or the URL without its password.
    name: str

    def __init__(self) -> None:
        self._lock = threading.RLock()
        # Statements sent (round trips on PostgreSQL), for benchmarks: bench/ reads it.
        self.statements = 0

    @staticmethod
    def open(target: str | Path, *, read_only: bool = False) -> Database:
        """A PostgreSQL URL or a SQLite file's path."""
        if is_url(target):
            return PostgresDatabase(str(target))
        return SqliteDatabase(Path(target), read_only=read_only)

    def close(self) -> None:
        raise NotImplementedError

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        raise NotImplementedError

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        with self._lock:
            row: Row | None = self.execute(sql, params).fetchone()
            return row

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with self._lock:
            return list(self.execute(sql, params).fetchall())

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        raise NotImplementedError

    def columns(self, table: str) -> list[str]:
        """The table's column names, in order."""
        with self._lock:
            cursor: Any = self.execute(f"SELECT * FROM {table} LIMIT 0")
            cursor.fetchall()
            return [str(d[0]) for d in cursor.description or ()]

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        """BEGIN (a write transaction at once on SQLite) ... COMMIT, or ROLLBACK on error."""
        with self._lock:
            self._begin()
            try:
                yield self
            except BaseException:
                self.execute("ROLLBACK")
                raise
            self.execute("COMMIT")

    def _begin(self) -> None:
        self.execute("BEGIN")

    def tables(self) -> set[str]:
        raise NotImplementedError

    # -- migrations --------------------------------------------------------------------------

    def versions(self) -> dict[str, int]:
        """The schema version of each component here (0: none yet)."""
        if "schema_version" not in self.tables():
            return {}
        rows = self.all("SELECT component, max(version) AS version FROM schema_version GROUP BY component")
        return {str(row["component"]): int(row["version"]) for row in rows}

    def upgrade(self, components: Sequence[str]) -> list[str]:
        """Apply the pending migrations of `components`, each in a transaction; what was applied."""
        applied: list[str] = []
        if not self.behind(components):  # the usual open: one read, no write lock
            return applied
        with self.transaction() as db:
            db._migration_lock()
            db.execute(_SCHEMA_VERSION)
            have = db.versions()
            for component in components:
                for migration in migrations(component, self.dialect):
                    if migration.version <= have.get(component, 0):
                        continue
                    for statement in migration.statements():
                        db.execute(statement)
                    when = datetime.now(UTC).isoformat()
                    db.execute(_APPLIED, (component, migration.version, migration.name, when))
                    applied.append(f"{component}/{migration.name}")
        return applied

    def _migration_lock(self) -> None:
        """Held while migrating (SQLite's BEGIN IMMEDIATE already is)."""

    def behind(self, components: Sequence[str]) -> dict[str, tuple[int, int]]:
        """Components whose schema here is not the program's: name -> (here, the program's)."""
        have = self.versions()
        out: dict[str, tuple[int, int]] = {}
        for component in components:
            latest = latest_version(component)
            if have.get(component, 0) != latest:
                out[component] = (have.get(component, 0), latest)
        return out

    def require(self, components: Sequence[str]) -> None:
        """A DatabaseError, one line, unless every component's schema here is the program's."""
        behind = self.behind(components)
        if not behind:
            return
        newer = {c: v for c, v in behind.items() if v[0] > v[1]}
        if newer:
            c, (here, ours) = next(iter(newer.items()))
            raise DatabaseError(
                f"the database at {self.name} has {c} schema version {here}, newer than this "
                f"program's {ours}: upgrade incident-ingest on this machine"
            )
        said = "; ".join(f"{c}: version {here}, needs {ours}" for c, (here, ours) in behind.items())
        raise DatabaseError(
            f"the database at {self.name} has an old or no schema ({said}): run `incidents db upgrade`"
        )


class SqliteDatabase(Database):
    dialect = "sqlite"
    row_order = "rowid"

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        super().__init__()
        self.path = path
        self.name = str(path)
        self.read_only = read_only
        if read_only:
            self._db = _open_read_only(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT, check_same_thread=False, isolation_level=None
            )
        self.connection = self._db  # for tests that trace the SQL run
        self._db.row_factory = sqlite3.Row
        if not read_only:
            with self._lock:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")

    def close(self) -> None:
        self._db.close()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        with self._lock:
            self.statements += 1
            return self._db.execute(sql, tuple(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._lock:
            self.statements += 1
            self._db.executemany(sql, rows)

    def _begin(self) -> None:
        self.execute("BEGIN IMMEDIATE")

    def tables(self) -> set[str]:
        return {str(r[0]) for r in self.all("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def checkpoint(self) -> None:
        self.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A SQLite file opened for reading only: mode=ro reads the WAL when its shared-memory file
    can be had; in a read-only folder without one, only immutable=1 opens (the folder is a
    snapshot: nothing can write to it, so there is nothing to miss)."""
    uri = path.resolve().as_uri()
    for query in ("mode=ro", "immutable=1"):
        db = sqlite3.connect(
            f"{uri}?{query}", uri=True, timeout=BUSY_TIMEOUT, check_same_thread=False, isolation_level=None
        )
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            db.close()
            continue
        return db
    raise sqlite3.OperationalError(f"cannot open {path} for reading")


class PostgresDatabase(Database):
    dialect = "postgresql"
    row_order = "seq"

    def __init__(self, url: str) -> None:
        super().__init__()

        self.url = url
        self.name = shown_url(url)
        self._depth = 0  # transactions open in this connection
        self._db = self._connect()

    def _connect(self) -> Any:
        import psycopg

        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=10, row_factory=_pg_rows)
        except psycopg.Error as exc:
            why = " ".join(str(exc).split()) or type(exc).__name__
            raise DatabaseError(
                f"cannot reach the database at {self.name} ({why[:200]}): start the server or set "
                "INCIDENTS_DATABASE_URL to one that answers (empty: SQLite files in raw/)"
            ) from None

    def close(self) -> None:
        self._db.close()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        import psycopg

        with self._lock:
            if self._db.broken and self._depth == 0:  # the server restarted since: connect again
                self._db = self._connect()
            self.statements += 1
            try:
                cursor: Cursor = self._db.execute(to_psycopg(sql), tuple(params))
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                why = " ".join(str(exc).split())[:200] or type(exc).__name__
                raise DatabaseError(
                    f"the database at {self.name} failed ({why}): check the server "
                    "(INCIDENTS_DATABASE_URL), then run the command again (what was done is kept)"
                ) from exc
            return cursor

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        with self._lock:
            if self._db.broken and self._depth == 0:
                self._db = self._connect()
            self._depth += 1
            try:
                with super().transaction() as db:
                    yield db
            finally:
                self._depth -= 1

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._lock, self._db.cursor() as cursor:
            self.statements += 1
            cursor.executemany(to_psycopg(sql), rows)

    def _migration_lock(self) -> None:
        self.execute("SELECT pg_advisory_xact_lock(3939)")

    def tables(self) -> set[str]:
        rows = self.all("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        return {str(r[0]) for r in rows}


# -- migrations as data files --------------------------------------------------------------------

_MIGRATION = re.compile(r"^(\d{4})_([a-z0-9_]+)(?:\.(sqlite|postgresql))?\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path

    def statements(self) -> list[str]:
        """The file's statements, one by one (comments and blank lines dropped)."""
        out: list[str] = []
        buffer = ""
        for line in self.path.read_text(encoding="utf-8").splitlines():
            if not buffer and (not line.strip() or line.lstrip().startswith("--")):
                continue
            buffer += line + "\n"
            if sqlite3.complete_statement(buffer):
                out.append(buffer.strip())
                buffer = ""
        if buffer.strip():
            out.append(buffer.strip())
        return out


def migrations(component: str, dialect: str) -> list[Migration]:
    """The component's migrations for this dialect, oldest first."""
    chosen: dict[int, Migration] = {}
    specific: set[int] = set()
    for path in sorted((MIGRATIONS / component).glob("*.sql")):
        match = _MIGRATION.match(path.name)
        if match is None:
            continue
        version, name, only = int(match.group(1)), match.group(2), match.group(3)
        if only is not None and only != dialect:
            continue
        if only is None and version in specific:
            continue
        chosen[version] = Migration(version, name, path)
        if only is not None:
            specific.add(version)
    return [chosen[v] for v in sorted(chosen)]


@functools.lru_cache
def latest_version(component: str) -> int:
    found = migrations(component, "sqlite") + migrations(component, "postgresql")
    return max((m.version for m in found), default=0)


def open_component(target: str | Path, component: str, *, read_only: bool = False) -> Database:
    """The database of one store: a SQLite file upgrades itself (unless read-only); PostgreSQL
    must already hold this program's schema (`incidents db upgrade`)."""
    db = Database.open(target, read_only=read_only)
    try:
        if isinstance(db, SqliteDatabase):
            if not read_only:
                db.upgrade([component])
        else:
            db.require([component])
    except BaseException:
        db.close()
        raise
    return db


class Store:
    """A store of one component's tables: `path` (a SQLite file) on one machine, or the
    database at `database_url` (Settings.database_url) when one is given."""

    component: str = ""

    def __init__(self, path: Path, database_url: str = "") -> None:
        self.path = path
        self.database = open_component(database_url or path, self.component)

    def close(self) -> None:
        self.database.close()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.database.execute(sql, params)

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        return self.database.one(sql, params)

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self.database.all(sql, params)
