"""A failing data directory is one line naming it and what to do, with an honest exit code: a full
disk (a real 3 MiB tmpfs), I/O errors, locks held past their timeout; at start or mid-run."""

from __future__ import annotations

import base64
import errno
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from flows.failures import data_dir_error
from flows.jobs import Outcome, failure
from tests.cli import run
from tests.conftest import DATA
from tests.flows.archive.foreign import write_foreign_warc
from tests.flows.pipeline_fixtures import process_env

ROOT = Path(__file__).resolve().parents[2]
PAGE = DATA / "pipeline" / "en-queue-outage.html"


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# -- the mapping, from real errors ---------------------------------------------------------


def _locked_error(tmp_path: Path) -> sqlite3.OperationalError:
    path = tmp_path / "held.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    other = sqlite3.connect(path, timeout=0.1, isolation_level=None)
    try:
        other.execute("INSERT INTO t VALUES (1)")
    except sqlite3.OperationalError as exc:
        return exc
    finally:
        other.close()
        holder.close()
    raise AssertionError("the second writer was not refused")


def test_a_lock_held_past_the_timeout_is_one_line_naming_the_data_directory(tmp_path: Path) -> None:
    mapped = data_dir_error(_locked_error(tmp_path), tmp_path / "data")
    assert mapped is not None
    assert str(tmp_path / "data") in str(mapped) and "locked by another process" in str(mapped)
    assert "run the command again" in str(mapped)


def test_raw_lock_held_past_its_timeout_names_the_lock_file(tmp_path: Path) -> None:
    lock = tmp_path / "raw" / ".lock"
    lock.parent.mkdir()
    with FileLock(str(lock)):
        script = f"from filelock import FileLock; FileLock({str(lock)!r}, timeout=0.1).acquire()"
        other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert "Timeout" in other.stderr  # what a second process really meets
    mapped = data_dir_error(Timeout(str(lock)), tmp_path)
    assert mapped is not None and str(lock) in str(mapped) and "fuser" in str(mapped)


def test_disk_and_io_errors_map_and_bugs_do_not(tmp_path: Path) -> None:
    full = data_dir_error(OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "raw" / "x")))
    assert full is not None and "full" in str(full) and "free some space" in str(full)
    eio = data_dir_error(OSError(errno.EIO, "Input/output error", str(tmp_path / "raw" / "x")), tmp_path)
    assert eio is not None and "I/O error on" in str(eio) and "dmesg" in str(eio)
    io = data_dir_error(sqlite3.OperationalError("disk I/O error"), tmp_path)
    assert io is not None and str(tmp_path) in str(io)
    damaged = data_dir_error(sqlite3.DatabaseError("file is not a database"), tmp_path)
    assert damaged is not None and "archive reindex" in str(damaged)
    assert data_dir_error(ValueError("a bug"), tmp_path) is None
    assert data_dir_error(OSError(errno.ECONNRESET, "reset"), tmp_path) is None
    assert data_dir_error(sqlite3.OperationalError("no such column: x"), tmp_path) is None


def test_a_source_that_meets_a_locked_database_mid_run_fails_in_words(tmp_path: Path) -> None:
    outcome = failure("a.html", _locked_error(tmp_path))
    assert outcome.status == "failed" and outcome.reason
    assert "locked by another process" in outcome.reason and "internal error" not in outcome.reason


def test_a_locked_index_is_one_line_and_exit_1(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`archive import` while another process holds the index's write lock past the timeout."""
    import flows.store.database

    foreign = tmp_path / "crawl.warc.gz"
    write_foreign_warc(foreign)
    assert run(capsys, "archive", "list").code == 0  # the index exists
    monkeypatch.setattr(flows.store.database, "BUSY_TIMEOUT", 0.5)
    hold = (
        "import sqlite3, sys, time\n"
        f"db = sqlite3.connect({str(data_dir / 'raw' / 'index.sqlite')!r}, isolation_level=None)\n"
        "db.execute('BEGIN EXCLUSIVE'); print('held', flush=True); time.sleep(60)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        result = run(capsys, "archive", "import", str(foreign))
    finally:
        holder.kill()
        holder.wait()
    assert result.code == 1
    line = _one_line(result.err)
    assert str(data_dir) in line and "locked by another process" in line
    again = run(capsys, "archive", "import", str(foreign))  # the lock gone, the same command works
    assert again.code == 0 and again.out.startswith("imported")


# -- a run's exit code ---------------------------------------------------------------------


def test_a_run_where_nothing_came_through_and_something_failed_exits_1() -> None:
    from flows.cli.ingest import failed_run

    def of(*statuses: str) -> list[Outcome]:
        return [Outcome(source=f"s{n}", status=s) for n, s in enumerate(statuses)]  # type: ignore[arg-type]

    assert failed_run(of("failed", "failed"), strict=False)
    assert failed_run(of("failed", "skipped"), strict=False)
    assert not failed_run(of("failed", "drafted"), strict=False)
    assert not failed_run(of("failed", "unchanged"), strict=False)
    assert not failed_run(of("skipped"), strict=False)  # skipped on purpose is no failure
    assert not failed_run([], strict=False)
    assert failed_run(of("failed", "drafted"), strict=True)
    assert not failed_run(of("drafted", "skipped"), strict=True)


# -- a full disk: a real 3 MiB tmpfs -------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MiB tmpfs, mounted for this test (root only)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if not shutil.which("mount"):
        pytest.skip("needs the mount command to make a small file system that fills up")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(
            f"mounting a 3 MiB tmpfs needs root (or CAP_SYS_ADMIN), which this test does not have: "
            f"{done.stderr.strip()}"
        )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)


def _fill(disk: Path, leave: int = 0) -> Path:
    """Fill the file system but `leave` bytes; the filler, to remove to free it again."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    os.ftruncate(fd, max(0, os.fstat(fd).st_size - leave))
    os.close(fd)
    return filler


def _incidents(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`incidents ARGS` as a cron job runs it: its own process, no terminal."""
    env = process_env(data_dir)
    cmd = [sys.executable, "-m", "flows", *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_a_full_disk_at_start_and_mid_run_is_one_line_exit_1_and_recovers(
    small_disk: Path, tmp_path: Path
) -> None:
    data = small_disk / "data"
    data.mkdir()
    # At start: the disk is full before the first write of the run.
    filler = _fill(small_disk)
    started = _incidents(data, "ingest", str(PAGE))
    assert started.returncode == 1, started.stdout + started.stderr
    assert "Traceback" not in started.stderr
    line = started.stderr.strip().splitlines()[-1]
    assert line.startswith("error: ") and str(data) in line and "free some space" in line, started.stderr
    verify = _incidents(data, "archive", "verify")  # a verify that cannot even open its index
    assert verify.returncode == 1 and "Traceback" not in verify.stderr, verify.stderr
    filler.unlink()

    # Mid-run: the run starts (150 KiB free), and each page's archive write (pages of 400 KB that
    # do not compress) meets the full disk. Each source fails in words; no source came through,
    # so the run exits 1 without --strict.
    assert _incidents(data, "archive", "list").returncode == 0  # space again: the index is made
    filler = _fill(small_disk, leave=150 * 1024)
    pages = []
    for n in range(2):
        page = tmp_path / f"page-{n}.html"
        noise = base64.b64encode(os.urandom(300_000)).decode()
        text = PAGE.read_text(encoding="utf-8").replace("</body>", f"<p>{noise}</p></body>")
        page.write_text(text, encoding="utf-8")
        pages.append(str(page))
    middle = _incidents(data, "ingest", *pages)
    assert middle.returncode == 1, middle.stdout + middle.stderr
    assert "Traceback" not in middle.stderr, middle.stderr
    lines = middle.stdout.splitlines()
    assert len(lines) == 2 and all(x.startswith("failed") for x in lines), middle.stdout + middle.stderr
    assert all(str(data) in x and "full" in x and "free some space" in x for x in lines), middle.stdout

    # Space freed: the same command again drafts them, and the data directory is clean.
    filler.unlink()
    again = _incidents(data, "ingest", *pages)
    assert again.returncode == 0, again.stdout + again.stderr
    assert [x.split()[0] for x in again.stdout.splitlines()] == ["drafted", "drafted"], again.stdout
    assert _incidents(data, "archive", "verify").returncode == 0
    checked = _incidents(data, "validate")
    assert checked.returncode == 0, checked.stdout + checked.stderr
