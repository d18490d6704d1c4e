"""The one place where a failing data directory becomes a DataDirError: one line naming the data
directory (or the file in it) and what to do.

What the storage layers raise when the disk, not the program, is at fault: OSError (ENOSPC,
EDQUOT, EROFS, EACCES, EIO), sqlite3's OperationalError ("disk I/O error", "database or disk is
full", "database is locked" once its timeout has passed, "attempt to write a readonly
database"), sqlite3's DatabaseError for a damaged database file, and filelock's Timeout for
raw/.lock held past its timeout. The CLI (flows/cli/__init__.py) and the per-source failures of
a run (flows/jobs.failure) both ask `data_dir_error`; anything it does not recognise is a bug and
is reported as one. A shared PostgreSQL database (INCIDENTS_DATABASE_URL) that fails is not the
data directory: flows/store/database.py says so itself, as a DatabaseError naming its URL.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from schema.errors import DataDirError

# Below this much free space, sqlite's bare "disk I/O error" is taken for a full disk (SQLite
# reports a failed write of its WAL index or journal as an I/O error, whatever the errno was).
NEARLY_FULL = 1 << 20

# The data directory of this command (set by the CLI once its settings are made): named when an
# error does not name a file of its own.
current_data_dir: Path | None = None

_FREE = "free some space (or give another --data-dir, INCIDENTS_DATA_DIR), then run the command again"
_RERUN = "then run the command again (what was done is kept; nothing is done twice)"


def _folder(data_dir: Path | None) -> str:
    return str(data_dir) if data_dir is not None else "the data directory"


def _nearly_full(data_dir: Path | None) -> bool:
    if data_dir is None:
        return False
    try:
        stats = os.statvfs(data_dir)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < NEARLY_FULL


def full(data_dir: Path | None, what: str = "") -> DataDirError:
    where = f"{what} in " if what else ""
    return DataDirError(f"cannot write {where}{_folder(data_dir)}: the disk is full; {_FREE}")


def _oserror(exc: OSError, data_dir: Path | None) -> DataDirError | None:
    from flows.store.atomic import unwritable

    if exc.filename is None and data_dir is not None:  # a write on an open file names none
        exc = OSError(exc.errno, exc.strerror, str(data_dir))
    said = unwritable(exc)  # full, over quota, read-only, no permission: its wording, with the file
    if said is not None:
        return DataDirError(said + ("" if exc.errno not in (errno.ENOSPC, errno.EDQUOT) else f"; {_RERUN}"))
    if exc.errno == errno.EIO:
        where = exc.filename or _folder(data_dir)
        return DataDirError(
            f"I/O error on {where}: the disk or file system failed (see `dmesg`); check it, "
            f"restore {_folder(data_dir)} from a backup if needed, {_RERUN}"
        )
    return None


def _sqlite(exc: sqlite3.Error, data_dir: Path | None) -> DataDirError | None:
    text = str(exc).lower()
    folder = _folder(data_dir)
    if "database or disk is full" in text or ("disk i/o error" in text and _nearly_full(data_dir)):
        return full(data_dir, "a database")
    if "disk i/o error" in text:
        return DataDirError(
            f"I/O error on a database in {folder} (raw/*.sqlite, records/): the disk or file system "
            f"failed, or it is full (see `df` and `dmesg`); fix it, {_RERUN}"
        )
    if "database is locked" in text or "database table is locked" in text:
        return DataDirError(
            f"a database in {folder} stayed locked by another process past the timeout (another "
            "`incidents ingest`, `archive` or `review` command, or a copy or backup holding it); "
            f"wait for it to end (`fuser {folder}/raw/*.sqlite` names it), {_RERUN}"
        )
    if "readonly database" in text or "unable to open database" in text:
        return DataDirError(
            f"cannot write the databases in {folder}: read-only or not ours to write; "
            "give a writable --data-dir (INCIDENTS_DATA_DIR)"
        )
    if "malformed" in text or "not a database" in text:
        return DataDirError(
            f"a database in {folder} is damaged ({exc}); if it is raw/index.sqlite, "
            "`incidents archive reindex` rebuilds it from the WARC files (the damaged one is kept "
            "aside); otherwise restore it from a backup"
        )
    return None


def data_dir_error(exc: BaseException, data_dir: Path | None = None) -> DataDirError | None:
    """The DataDirError `exc` stands for, when the data directory is at fault; else None."""
    data_dir = data_dir or current_data_dir
    if isinstance(exc, DataDirError):
        return exc
    from filelock import Timeout  # a TimeoutError, so an OSError: asked first

    if isinstance(exc, Timeout):
        return DataDirError(
            f"{exc.lock_file} stayed locked by another process past the timeout (another "
            f"`incidents ingest` or `archive` command writing to {_folder(data_dir)}); wait for it "
            f"to end (`fuser {exc.lock_file}` names it), {_RERUN}"
        )
    if isinstance(exc, OSError):
        return _oserror(exc, data_dir)
    if isinstance(exc, sqlite3.Error):
        return _sqlite(exc, data_dir)
    return None
