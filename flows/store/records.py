"""records/IL-NNNN.json: approved records, one pretty-printed file each, ids allocated under a lock:
a file lock in records/ on one machine, or the counter row of INCIDENTS_DATABASE_URL's database
(`record_ids`, migrations/review/) when several machines approve into one records/ folder."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None  # type: ignore[assignment]

from flows.store import faults
from flows.store.atomic import create_bytes, dumps_model, file_lock
from flows.store.damaged import load
from flows.store.database import Database, open_component
from schema.record import Record

RECORD_FILE = re.compile(r"^IL-(\d{4,})\.json$")
# `.IL-NNNN.reserved`: an id allocated under the lock whose record is still being written.
RESERVED_FILE = re.compile(r"^\.IL-(\d{4,})\.reserved$")

# One in-process lock per records folder: threads of one server queue here, and the file lock
# (flock) is only ever waited on by other processes.
_LOCAL_LOCKS: dict[str, threading.Lock] = {}
_LOCAL_LOCKS_GUARD = threading.Lock()


def _local_lock(folder: Path) -> threading.Lock:
    with _LOCAL_LOCKS_GUARD:
        return _LOCAL_LOCKS.setdefault(str(folder.resolve()), threading.Lock())


def record_text(record: Record) -> str:
    """The on-disk form: the model's key order, 2-space indent, trailing newline."""
    return dumps_model(record)


# The counter row's update: its row lock is held until the allocating transaction ends; `floor`
# (the highest id in records/) keeps it past ids written while no database was configured.
_NEXT = "UPDATE record_ids SET last = GREATEST(last, ?) + 1 WHERE name = 'IL' RETURNING last"


def set_counter(db: Database, highest: int) -> None:
    """The shared counter at least `highest` (`incidents db copy`: the ids records/ already has)."""
    db.execute("UPDATE record_ids SET last = GREATEST(last, ?) WHERE name = 'IL'", (highest,))


class RecordStore:
    def __init__(self, folder: Path, database_url: str = "") -> None:
        self.folder = folder
        self._local = _local_lock(folder)
        self._database_url = database_url
        self._database: Database | None = None  # opened by the first allocation

    def _lock(self) -> AbstractContextManager[None]:
        return file_lock(self.folder / ".records.lock")

    def paths(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.iterdir() if RECORD_FILE.match(p.name))

    def highest_number(self) -> int:
        """The highest id number written or reserved (a record being written outside the lock)."""
        # Names only: building and sorting Paths cost ~20 ms an approval at a few hundred records.
        if not self.folder.is_dir():
            return 0
        return max(
            (
                int(m.group(1))
                for n in os.listdir(self.folder)
                if (m := RECORD_FILE.match(n) or RESERVED_FILE.match(n))
            ),
            default=0,
        )

    def _reservation(self, record_id: str) -> Path:
        return self.folder / f".{record_id}.reserved"

    def path_for(self, record_id: str) -> Path:
        return self.folder / f"{record_id}.json"

    def read(self, record_id: str) -> Record:
        """The record; `Damaged` (an InputError naming the file) when its file cannot be read."""
        return load(self.path_for(record_id), Record, "record")

    def create(self, build: Callable[[str], Record]) -> Record:
        """Allocate the next id, and write the record `build(id)` makes.

        The id is allocated and `build` runs under the lock, which then reserves the id with an
        O_EXCL `.IL-NNNN.reserved` file; the record is written and fsynced after the lock is
        released (and never over an existing file), so approvals in other threads and processes
        allocate meanwhile and never get the same id. `build` may raise, and then nothing is
        written and no id is spent. A reservation left by a crash is removed by the next command
        (`flows.store.journal.leftovers`).
        """
        with self.reserve(build) as (record, _reservation):
            create_bytes(self.path_for(record.id), record_text(record).encode("utf-8"))
        return record

    @contextmanager
    def reserve(self, build: Callable[[str], Record]) -> Iterator[tuple[Record, Path]]:
        """Allocate the next id and yield (`build(id)`, the reservation file); the caller writes
        the record (through a journal intent) inside the block. The reservation is held (and
        locked, so that a crash's leftover is told from a live one) until the block ends."""
        # Listed before the lock is taken (~0.4 ms at 800 names): the lock is held only to probe
        # the few ids allocated since, one after another by holders of this same lock.
        seen = self.highest_number()
        record, reservation, fd = self._allocate(build, seen)
        try:
            faults.after("reserved")
            yield record, reservation
        finally:
            reservation.unlink(missing_ok=True)
            os.close(fd)

    def _allocate(self, build: Callable[[str], Record], seen: int) -> tuple[Record, Path, int]:
        if self._database_url:
            return self._allocate_shared(build, seen)
        with self._local, self._lock():
            number = seen + 1
            # The reservation first: a writer links its record, then removes its reservation, so
            # one of the two is there at every moment, but the record may appear just after we
            # looked for it and the reservation vanish before we look for that.
            while (
                self._reservation(f"IL-{number:04d}").exists() or self.path_for(f"IL-{number:04d}").exists()
            ):
                number += 1
            return self._build_reserved(build, f"IL-{number:04d}")

    def _allocate_shared(self, build: Callable[[str], Record], seen: int) -> tuple[Record, Path, int]:
        """The next id from the database's counter row, in a transaction that `build` raising
        rolls back (no id spent); the reservation file as on one machine, for the journal."""
        if self._database is None:
            self._database = open_component(self._database_url, "review")
        with self._local, self._database.transaction() as db:
            row = db.execute(_NEXT, (seen,)).fetchone()
            return self._build_reserved(build, f"IL-{int(row[0]):04d}")

    def _build_reserved(self, build: Callable[[str], Record], record_id: str) -> tuple[Record, Path, int]:
        """The record `build` makes for this id, and the id's reservation file, created and locked.

        No fsync: after a crash the record is either durable (and the reservation moot) or not
        written, and then a surviving reservation only skips its id."""
        record = build(record_id)
        if record.id != record_id:
            raise ValueError(f"build() made {record.id} for id {record_id}: it must use the id given")
        reservation = self._reservation(record_id)
        fd = os.open(reservation, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return record, reservation, fd
