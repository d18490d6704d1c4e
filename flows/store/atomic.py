"""Crash-safe file writes: temp file in the same folder, fsync, os.replace, fsync the folder."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # not POSIX: file_lock falls back on filelock
    fcntl = None  # type: ignore[assignment]

from pydantic import BaseModel


def fsync_dir(folder: Path) -> None:
    # The rename is only durable once the directory entry is on disk too.
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (made if missing) across threads and processes.

    A blocking flock(): a waiter sleeps in the kernel (the GIL released) and wakes when the lock
    is free, where filelock polls every 50 ms; about 10 system calls where filelock's FileLock
    makes about 40 (~0.3 ms an acquisition on this machine). The same flock() FileLock takes on
    POSIX, so the two exclude each other on one lock file. Closing the file releases the lock."""
    if fcntl is None:
        from filelock import FileLock

        with FileLock(str(path)):
            yield
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


_UMASK: int | None = None


def umask() -> int:
    """This process's umask, read once (from /proc where it is there: setting it to read it
    would race with threads creating files meanwhile)."""
    global _UMASK
    if _UMASK is None:
        try:
            with open("/proc/self/status", encoding="ascii") as status:
                line = next(x for x in status if x.startswith("Umask:"))
            _UMASK = int(line.split()[1], 8)
        except (OSError, StopIteration, ValueError, IndexError):
            _UMASK = os.umask(0o022)
            os.umask(_UMASK)
    return _UMASK


def file_mode() -> int:
    """The mode a new file of ours gets: 0666 less the umask, like any file a user creates."""
    return 0o666 & ~umask()


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new temp file in `path`'s folder (made if missing: tried after, to spare two system
    calls on every write into a folder that is there), with the umask's mode (mkstemp makes
    0600) and locked (flock) while it is written, so that the clean-up of a crash's leftovers
    (flows/store/journal.py) tells a live temp file from a dead one."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:
        os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise
    return fd, tmp


def _written_beside(path: Path, data: bytes) -> tuple[int, str]:
    """A temp file beside `path` holding `data`, fsynced: what both kinds of write put in place.
    Its descriptor stays open (and the file locked) until the caller has put it in place."""
    fd, tmp = _temp_beside(path)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise
    return fd, tmp


def write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that readers see the old file or the new one, never half."""
    fd, tmp = _written_beside(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
    fsync_dir(path.parent)


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def create_bytes(path: Path, data: bytes) -> None:
    """Write a new file at `path`, never replacing one: FileExistsError if the name is taken.

    Written to a temp file, fsynced, then hard-linked into place (link() fails if the name
    exists), so readers see the whole file or none; the folder is fsynced after."""
    fd, tmp = _written_beside(path, data)
    try:
        os.link(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
        os.close(fd)
    fsync_dir(path.parent)


def dumps_json(data: Any) -> str:
    """The on-disk JSON style: 2-space indent, real UTF-8, trailing newline; key order as given."""
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def _floats_agree(text: str) -> bool:
    """False when pydantic may have written a float that json.dumps writes otherwise: the two
    differ only below 1e-4 (0.00001 / 1e-05) and in exponents (1e-7 / 1e-07), and pydantic
    writes those as 0.0000... or with e- / e+ after a digit. Plain string searches: a regex over
    the whole draft cost more than the serializer saved."""
    if "0.0000" in text:
        return False
    for marker in ("e-", "e+"):
        at = text.find(marker)
        while at > 0:
            if text[at - 1].isdigit():
                return False
            at = text.find(marker, at + 2)
    return True


def dumps_model(model: BaseModel) -> str:
    """`dumps_json(model.model_dump(mode="json"))`, byte for byte, written by pydantic's Rust
    serializer: json.dumps runs in pure Python when it indents, about 5x slower on a draft."""
    text = model.model_dump_json(indent=2) + "\n"
    if not _floats_agree(text):
        return dumps_json(model.model_dump(mode="json"))
    return text


def write_json(path: Path, data: Any) -> None:
    write_text(path, dumps_json(data))


def open_append(path: Path) -> int:
    """`path` opened for appending, and reading with pread (made, with the umask's mode, if
    missing; its folder too)."""
    try:
        return os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)


def append_whole(fd: int, data: bytes, path: Path, *, sync: bool = True) -> None:
    """One O_APPEND write of `data`, checked for length and fsynced (unless `sync` is False: the
    caller fsyncs after releasing its lock); a short or failed write is cut off again, so the
    file holds all of `data` or none of it (ENOSPC when the disk filled)."""
    size = os.fstat(fd).st_size
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(errno.ENOSPC, "No space left on device (short write)", str(path))
        if sync:
            os.fsync(fd)
    except BaseException:
        # If even that fails, the reader skips and reports a torn tail; the next append moves it aside.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)
        raise


def append_line(path: Path, line: str) -> None:
    """Append one line and fsync: the line is either wholly there or not at all."""
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    fd = open_append(path)
    try:
        append_whole(fd, data, path)
    finally:
        os.close(fd)


# What a write into the data directory fails with when the directory, not the program, is at fault.
UNWRITABLE = {errno.EROFS: "read-only", errno.EACCES: "not writable", errno.EPERM: "not writable"}
FULL = {errno.ENOSPC: "full", errno.EDQUOT: "over its quota"}


def unwritable(exc: OSError) -> str | None:
    """One line naming the path a write failed on and what to do, when the failure is the data
    directory's (read-only, no permission, disk full); None for any other OSError."""
    state = UNWRITABLE.get(exc.errno or 0) or FULL.get(exc.errno or 0)
    if state is None:
        return None
    where = exc.filename or "the data directory"
    fix = (
        "free some space, or give another --data-dir (INCIDENTS_DATA_DIR)"
        if exc.errno in FULL
        else "give a writable --data-dir (INCIDENTS_DATA_DIR); read-only copies serve "
        "`archive list|show|verify`, `review list|show` and `validate`"
    )
    return f"cannot write {where}: the file system is {state} ({exc.strerror}); {fix}"


def check_writable(folder: Path, *parts: str) -> None:
    """Raise the OSError a write into `folder` (and its `parts` subfolders, made if missing)
    would meet, before any work starts: nothing is written but an empty probe, removed at once."""
    try:
        for part in ("", *parts):
            (folder / part).mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".write-probe.", suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:  # named by the folder the user gave, not by our probe's name
        raise OSError(exc.errno, exc.strerror, str(folder)) from exc
