"""A real PostgreSQL for tests, from Debian's `postgresql` package: initdb in a temporary folder,
listening only on a Unix socket in that folder, stopped when the test session ends.

Fixtures (registered for every test by tests/conftest.py):
- `postgres_server`: the running server (session scope), or a skip naming what is missing.
- `postgres_url`: a fresh, empty database on it for one test, as the URL to give
  INCIDENTS_DATABASE_URL (or Settings(database_url=...)); its schema not yet upgraded.
- `postgres_upgraded_url`: the same, upgraded to this program's schema (`incidents db upgrade`).
- `database_url`: parametrised over both backends: "" (SQLite files in raw/) and a fresh
  PostgreSQL database upgraded to this program's schema. A test that asks for it runs twice.
"""

from __future__ import annotations

import atexit
import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PORT = 5439  # names the socket file in our own folder; nothing listens on TCP


def binaries() -> Path | None:
    """The newest /usr/lib/postgresql/*/bin holding initdb and pg_ctl, or None."""
    found = sorted(
        (Path(p) for p in glob.glob("/usr/lib/postgresql/*/bin") if (Path(p) / "initdb").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    return found[-1] if found else None


@dataclass
class Server:
    folder: Path
    bin: Path
    _names: itertools.count  # type: ignore[type-arg]

    @property
    def socket_dir(self) -> Path:
        return self.folder

    def url(self, database: str = "postgres") -> str:
        return f"postgresql:///{database}?host={self.socket_dir}&port={PORT}&user=postgres"

    def create_database(self) -> str:
        """A new empty database; its URL."""
        import psycopg

        name = f"t{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        if (self.folder / "data" / "postmaster.pid").exists():
            _as_postgres(
                [str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate", "-w", "stop"]
            )
        shutil.rmtree(self.folder, ignore_errors=True)


def _as_postgres(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run a server program as the `postgres` user when we are root (initdb refuses root)."""
    if os.geteuid() == 0:
        argv = ["runuser", "-u", "postgres", "--", *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def start() -> Server:
    """initdb + pg_ctl start in a new temporary folder; raises RuntimeError with the server's words."""
    bin_dir = binaries()
    if bin_dir is None:
        raise FileNotFoundError("no /usr/lib/postgresql/*/bin/initdb")
    folder = Path(tempfile.mkdtemp(prefix="incidents-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    data = folder / "data"
    done = _as_postgres(
        [
            str(bin_dir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        ]
    )
    if done.returncode != 0:
        raise RuntimeError(f"initdb failed: {done.stderr.strip()[-500:]}")
    options = f"-k {folder} -p {PORT} -c listen_addresses='' -F -c max_connections=200"
    done = _as_postgres(
        [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start"]
    )
    if done.returncode != 0:
        log = (folder / "log").read_text(errors="replace") if (folder / "log").exists() else ""
        raise RuntimeError(f"pg_ctl start failed: {done.stderr.strip()[-300:]} {log[-500:]}")
    server = Server(folder, bin_dir, itertools.count(1))
    atexit.register(server.stop)  # also when the session is interrupted
    return server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    if binaries() is None:
        pytest.skip(
            "PostgreSQL is not installed here (no /usr/lib/postgresql/*/bin/initdb): install Debian's "
            "`postgresql` package (.ci/run does) to run the PostgreSQL half of the store tests"
        )
    server = start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: Server) -> str:
    return postgres_server.create_database()


@pytest.fixture
def postgres_upgraded_url(postgres_url: str) -> str:
    """A fresh database with this program's schema, as `incidents db upgrade` leaves it."""
    from flows.store.database import COMPONENTS, Database

    db = Database.open(postgres_url)
    try:
        db.upgrade(COMPONENTS)
    finally:
        db.close()
    return postgres_url


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> str:
    if request.param == "sqlite":
        return ""
    url: str = request.getfixturevalue("postgres_upgraded_url")
    return url
