"""Scaling out: pages/s with 1 and 2 workers on PostgreSQL and 1 (and 2) on SQLite, in one run,
and the database statements each page costs.

usage: .venv/bin/python bench/scale.py [--pages 120] [--hosts 4] [--postgres-url URL]

A worker is an `incidents ingest --from-file SHARE` process, what a Prefect process worker runs for
each flow run, against one running `prefect server` started here (so no run pays for Prefect's
temporary server). N workers share the pages (page i goes to worker i mod N) and one data
directory, and start together; pages/s is the pages drafted over the wall time from their start
to the last one's end, their start-up (imports, extraction workers) included.

Pages: our own three test pages (tests/data/pipeline) made unique by a numbered sentence,
served on 127.0.0.2... by a loopback server in a process of its own; politeness interval 0.

Round trips: every SQL statement the workers send to the data directory's databases is counted
by a wrapper loaded into each worker process (a sitecustomize on PYTHONPATH): sqlite3 connections
to files under the data directory get a trace callback, psycopg cursors a counting execute
(executemany: one per parameter set). On PostgreSQL each statement is a round trip to the
server; on SQLite it is a call into the library, the same count for comparison. Divided by the
pages drafted, BEGIN and COMMIT included.

PostgreSQL rows run when this checkout supports INCIDENTS_DATABASE_URL (Settings.database_url and
`incidents db upgrade`) and a server is at hand: --postgres-url (a database on a server where this
user may CREATE DATABASE), else one started from Debian's `postgresql` package by tests/postgres.py.
Otherwise the table says "PostgreSQL: not available (why)" and the SQLite rows still run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._temp import temp_dir  # noqa: E402
from bench.pipeline import serve_forever, templates  # noqa: E402

# Loaded by every worker process through PYTHONPATH: counts the statements sent to the data
# directory's databases and writes them to INCIDENTS_BENCH_SQL_DIR/<pid>.json at exit.
SITECUSTOMIZE = textwrap.dedent(
    """
    import atexit, itertools, json, os, sqlite3

    _out = os.environ.get("INCIDENTS_BENCH_SQL_DIR")
    if _out:
        _data = os.path.realpath(os.environ["INCIDENTS_DATA_DIR"]) + os.sep
        _sqlite, _postgres = itertools.count(), itertools.count()
        _connect = sqlite3.connect

        def _counted(database, *args, **kwargs):
            conn = _connect(database, *args, **kwargs)
            path = str(database)
            if path.startswith("file:"):
                path = path[5:].split("?", 1)[0]
            if os.path.realpath(path).startswith(_data):
                conn.set_trace_callback(lambda _sql: next(_sqlite))
            return conn

        sqlite3.connect = _counted
        if os.environ.get("INCIDENTS_DATABASE_URL"):
            import psycopg

            _execute, _many = psycopg.Cursor.execute, psycopg.Cursor.executemany

            def _counted_execute(self, *args, **kwargs):
                next(_postgres)
                return _execute(self, *args, **kwargs)

            def _counted_many(self, query, params_seq, *args, **kwargs):
                params_seq = list(params_seq)
                for _ in params_seq:
                    next(_postgres)
                return _many(self, query, params_seq, *args, **kwargs)

            psycopg.Cursor.execute, psycopg.Cursor.executemany = _counted_execute, _counted_many

        def _write():
            counts = {"sqlite": next(_sqlite), "postgresql": next(_postgres)}
            with open(os.path.join(_out, f"{os.getpid()}.json"), "w") as fh:
                json.dump(counts, fh)

        atexit.register(_write)
    """
)


@dataclass
class Row:
    backend: str
    workers: int
    pages: int = 0
    seconds: float = 0.0
    statements: dict[str, int] | None = None  # by database kind
    note: str = ""

    @property
    def rate(self) -> float:
        return self.pages / self.seconds if self.seconds else 0.0


def postgres_support() -> str | None:
    """Why this checkout cannot keep its state in PostgreSQL, or None when it can."""
    from flows.settings import Settings

    if "database_url" not in Settings.model_fields:
        return "this checkout has no INCIDENTS_DATABASE_URL setting (issue 39's database layer)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "the psycopg driver is not installed"
    return None


def postgres_databases(url: str | None) -> tuple[Callable[[], str] | None, str]:
    """A function making a fresh database (its URL) per row, and why not when there is none."""
    if url:
        import psycopg

        parts = urlsplit(url)
        counter = iter(range(1, 1000))

        def fresh() -> str:
            name = f"bench_scale_{os.getpid()}_{next(counter)}"
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {name}")
            return urlunsplit(parts._replace(path=f"/{name}"))

        return fresh, ""
    try:
        from tests.postgres import start  # the test suite's throwaway server (Debian's package)
    except ImportError:
        return None, "no --postgres-url and no tests/postgres.py to start a server with"
    try:
        server = start()
    except (OSError, RuntimeError) as exc:
        return None, f"could not start a PostgreSQL server: {str(exc).splitlines()[0][:120]}"
    import atexit

    atexit.register(server.stop)
    return server.create_database, ""


def free_port() -> int:
    from flows.schedule import free_port as port

    return port()


def prefect_server(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    from flows.schedule import answers

    api = f"http://127.0.0.1:{free_port()}/api"
    port = api.rsplit(":", 1)[1].split("/")[0]
    cmd = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", port]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if answers(api):
            return proc, api
        if proc.poll() is not None:
            raise SystemExit(f"prefect server exited with {proc.returncode}")
        time.sleep(0.5)
    proc.terminate()
    raise SystemExit("prefect server did not come up within 240 s")


def run_row(row: Row, urls: list[str], base_env: dict[str, str], work: Path, database: str = "") -> Row:
    data_dir = work / f"data-{row.backend}-{row.workers}"
    counts = work / f"sql-{row.backend}-{row.workers}"
    data_dir.mkdir()
    counts.mkdir()
    env = {**base_env, "INCIDENTS_DATA_DIR": str(data_dir)}
    if database:
        env["INCIDENTS_DATABASE_URL"] = database
        upgraded = subprocess.run(
            [sys.executable, "-m", "flows", "db", "upgrade"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if upgraded.returncode != 0:
            row.note = f"`incidents db upgrade` failed: {(upgraded.stderr or upgraded.stdout).strip()[:120]}"
            return row
    shares = []
    for w in range(row.workers):
        share = work / f"share-{row.backend}-{row.workers}-{w}.txt"
        share.write_text("\n".join(urls[w :: row.workers]) + "\n")
        shares.append(share)
    counted = {**env, "INCIDENTS_BENCH_SQL_DIR": str(counts), "PYTHONPATH": f"{work / 'shim'}:{ROOT}"}
    cmd = [sys.executable, "-m", "flows", "ingest", "--json", "--from-file"]
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            [*cmd, str(s)], env=counted, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for s in shares
    ]
    outs = [p.communicate() for p in procs]
    row.seconds = time.perf_counter() - start
    for proc, (out, err) in zip(procs, outs, strict=True):
        if proc.returncode != 0:
            row.note = f"a worker exited {proc.returncode}: {err.decode(errors='replace').strip()[-200:]}"
        else:
            row.pages += sum(o["status"] == "drafted" for o in json.loads(out))
    row.statements = {"postgresql": 0, "sqlite": 0}
    for found in counts.glob("*.json"):
        for kind, n in json.loads(found.read_text()).items():
            row.statements[kind] += n
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=120)
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--postgres-url", default=os.environ.get("INCIDENTS_BENCH_POSTGRES_URL"))
    args = parser.parse_args()

    work = temp_dir("bench-scale-")
    (work / "shim").mkdir()
    (work / "shim" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    addresses = [f"127.0.0.{i + 2}" for i in range(args.hosts)]
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("INCIDENTS_", "PREFECT_"))}
    base_env |= {
        "INCIDENTS_ALLOW_HOSTS": ",".join(addresses),
        "INCIDENTS_MIN_INTERVAL": "0",
        "PREFECT_HOME": str(work / "prefect"),
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_SERVER_LOGGING_LEVEL": "CRITICAL",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
    }
    _, pages = templates("fixtures")
    ctx = multiprocessing.get_context("spawn")
    replies = ctx.Queue()
    per_host = -(-args.pages // args.hosts)
    blog = ctx.Process(target=serve_forever, args=(pages, addresses, per_host, replies), daemon=True)
    blog.start()
    urls = replies.get(timeout=120)[: args.pages]

    print("starting a local prefect server ...", file=sys.stderr)
    server, api = prefect_server(base_env)
    base_env["PREFECT_API_URL"] = api
    rows: list[Row] = []
    try:
        warm = work / "warm"
        warm.mkdir()
        (warm / "one.txt").write_text(urls[0] + "\n")
        subprocess.run(  # the server's first flow run registers the flow: not part of any row
            [sys.executable, "-m", "flows", "ingest", "--from-file", str(warm / "one.txt")],
            env={**base_env, "INCIDENTS_DATA_DIR": str(warm)},
            cwd=ROOT,
            capture_output=True,
            check=False,
        )
        for workers in (1, 2):
            print(f"SQLite, {workers} worker(s) ...", file=sys.stderr)
            rows.append(run_row(Row("SQLite", workers), urls, base_env, work))
        why = postgres_support()
        fresh = None
        if why is None:
            fresh, why = postgres_databases(args.postgres_url)
        if fresh is not None:
            for workers in (1, 2):
                print(f"PostgreSQL, {workers} worker(s) ...", file=sys.stderr)
                rows.append(run_row(Row("PostgreSQL", workers), urls, base_env, work, fresh()))
    finally:
        server.terminate()
        server.wait(timeout=30)
        blog.terminate()

    print(
        f"\n{args.pages} pages on {args.hosts} loopback hosts, {os.cpu_count()} cores, one prefect server\n"
    )
    head = f"{'backend':<11} {'workers':>7} {'drafted':>7} {'seconds':>8} {'pages/s':>8}"
    print(f"{head} {'PostgreSQL stmts/page':>21} {'SQLite stmts/page':>17}")
    for row in rows:
        counts = row.statements or {}
        pg, lite = (
            f"{counts.get(k, 0) / row.pages:.1f}" if row.pages else "-" for k in ("postgresql", "sqlite")
        )
        line = f"{row.backend:<11} {row.workers:>7} {row.pages:>7} {row.seconds:>8.1f} {row.rate:>8.2f}"
        print(f"{line} {pg:>21} {lite:>17}" + (f"  ({row.note})" if row.note else ""))
    if fresh is None:
        print(f"PostgreSQL: not available ({why})")
    print(
        "\nstmts/page: SQL statements the workers sent to the data directory's databases, per page"
        " drafted, BEGIN/COMMIT included (PostgreSQL: each a round trip to the server; SQLite: a"
        " call into the library, on files in the data directory)."
    )


if __name__ == "__main__":
    main()
