"""The stores on both backends (SQLite files, a real PostgreSQL): the same tests, through the one
database layer, with `database_url` parametrised over both (tests/postgres.py)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

import flows.store.database as database
from flows.archive import Archive
from flows.archive.capture import Capture
from flows.archive.index import Index
from flows.discover import SeenStore
from flows.settings import Settings
from flows.store.database import COMPONENTS, Database, shown_url, to_psycopg
from flows.store.ledger import Entry, Ledger
from schema.errors import DatabaseError
from tests.cli import run

KINDS = ("response", "revisit", "resource", "imported")


def _capture(n: int, url: str, at: str, **extra: object) -> Capture:
    fields: dict[str, object] = {
        "id": f"c-{n:020d}",
        "url": url,
        "canonical_url": url,
        "captured_at": at,
        "status": 200,
        "mime": "text/html",
        "payload_sha256": f"{n:064x}",
        "payload_digest": f"sha1:{n % 2}",
        "warc_file": f"warc/{n % 2}.warc.gz",
        "offset": 1000 * n,
        "length": 10 + n,
        "revisit_of": None,
        "kind": "response",
        "record_id": f"<urn:uuid:{n}>",
        **extra,
    }
    return Capture(**fields)  # type: ignore[arg-type]


def _index(tmp_path: Path, url: str) -> Index:
    return Index(tmp_path / "index.sqlite", fresh=True, database_url=url)


def test_the_index_answers_the_same_on_both(tmp_path: Path, database_url: str) -> None:
    index = _index(tmp_path, database_url)
    a, b = "https://blog.example.org/a_1%", "https://blog.example.org/b"
    same_time = "2026-01-01T00:00:00Z"
    with index.transaction() as db:
        db.execute(
            "INSERT INTO warc_files (name, origin, size, closed, sha256) VALUES (?, 'written', 5, 1, ?)",
            ("warc/0.warc.gz", "ab" * 32),
        )
        for n, (url, at) in enumerate(
            [(a, same_time), (b, same_time), (a, same_time), (b, "2025-01-01T00:00:00Z")]
        ):
            Index.insert(db, _capture(n, url, at, requested_url=f"https://old.example.org/{n}"))
            Index.insert_record(
                db, f"warc/{n % 2}.warc.gz", 1000 * n, 10 + n, "response", f"<urn:uuid:{n}>", "00"
            )
        Index.insert(db, _capture(0, "https://elsewhere.example.org/", same_time))  # same id: ignored
        # inside the transaction, a query in this thread sees what it wrote
        assert index.get(_capture(3, b, same_time).id) is not None
    assert len(index.captures()) == 4
    # the latest of equal times is the one inserted last (rowid on SQLite, seq on PostgreSQL)
    latest = index.latest(a, kinds=KINDS)
    assert latest is not None and latest.id == _capture(2, a, same_time).id
    assert index.latest("https://old.example.org/3", kinds=KINDS) == _capture(
        3, b, "2025-01-01T00:00:00Z", requested_url="https://old.example.org/3"
    )
    many = index.latest_many([a, b, "https://old.example.org/1", "https://none.example.org/"], kinds=KINDS)
    assert {k: v.id for k, v in many.items()} == {
        a: _capture(2, a, same_time).id,
        b: _capture(1, b, same_time).id,
        "https://old.example.org/1": _capture(1, b, same_time).id,
    }
    assert [c.id for c in index.captures(url_prefix="https://blog.example.org/a_1%")] == [
        _capture(0, a, same_time).id,
        _capture(2, a, same_time).id,
    ]
    assert index.captures(url_prefix="https://blog.example.org/a_1_") == []  # _ and % are literal
    found = index.with_digest(b, "sha1:1")
    assert found is not None and found.id == _capture(3, b, same_time).id  # the earlier capture
    assert [c.offset for c in index.in_file("warc/1.warc.gz")] == [1000, 3000]
    assert index.by_record_id("<urn:uuid:2>") == _capture(
        2, a, same_time, requested_url="https://old.example.org/2"
    )
    assert [(r["warc_file"], r["offset"]) for r in index.records()] == [
        ("warc/0.warc.gz", 0),
        ("warc/0.warc.gz", 2000),
        ("warc/1.warc.gz", 1000),
        ("warc/1.warc.gz", 3000),
    ]
    assert [dict(zip(r.keys(), r, strict=True)) for r in index.files()] == [
        {"name": "warc/0.warc.gz", "origin": "written", "size": 5, "closed": 1, "sha256": "ab" * 32}
    ]
    assert index.file_with_sha256("ab" * 32) == "warc/0.warc.gz"
    # link checks: first seen gone is kept until the page is back
    assert index.record_check(a, "t1", "gone", "404") == "t1"
    assert index.record_check(a, "t2", "gone", "404") == "t1"
    row = index.link_check(a)
    assert row is not None and row["checked_at"] == "t2" and row[4] == "t1"
    assert index.record_check(a, "t3", "unchanged", "") is None
    index.close()


def test_a_failed_transaction_leaves_nothing(tmp_path: Path, database_url: str) -> None:
    index = _index(tmp_path, database_url)
    with pytest.raises(RuntimeError), index.transaction() as db:
        Index.insert(db, _capture(1, "https://a.example.org/", "t"))
        raise RuntimeError("stop")
    with index.transaction() as db:  # a savepoint rolls back one job's rows, as warc.py does
        Index.insert(db, _capture(2, "https://a.example.org/", "t"))
        db.execute("SAVEPOINT job")
        Index.insert(db, _capture(3, "https://a.example.org/", "t"))
        db.execute("ROLLBACK TO job")
        db.execute("RELEASE job")
    assert [c.id for c in index.captures()] == [_capture(2, "x", "t").id]
    index.close()


def test_the_ledger_on_both(tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(database, "MAX_VARIABLES", 11)  # 2 URLs a query: several queries
    ledger = Ledger(tmp_path / "ledger.sqlite", database_url)
    urls = [f"https://blog.example.org/{n}" for n in range(5)]
    for n, url in enumerate(urls[:4]):
        ledger.put(Entry(url, f"sha256:{n}", f"d-{n}", None, skipped="not a postmortem" if n == 2 else None))
    ledger.put(Entry(urls[0], "sha256:new", "d-new", "c-1"))  # replaced, not added
    many = ledger.get_many([*urls, urls[1]])
    assert sorted(many) == urls[:4]
    assert all(many[url] == ledger.get(url) for url in urls[:4])
    assert ledger.get(urls[0]) == Entry(urls[0], "sha256:new", "d-new", "c-1")
    assert ledger.get(urls[4]) is None
    ledger.close()
    assert (tmp_path / "ledger.sqlite").exists() is (not database_url)


def test_discovery_state_on_both(tmp_path: Path, database_url: str) -> None:
    seen = SeenStore(tmp_path / "discovery.sqlite", database_url)
    url = "https://blog.example.org/feed/1"
    assert not seen.seen(url)
    seen.mark(url, "blog", "Outage 50% of requests?")
    seen.mark(url, "other", None)  # already there: kept as first marked
    assert seen.seen(url)
    row = seen.one("SELECT source, title, first_seen FROM seen WHERE url = ?", (url,))
    assert row is not None and row["source"] == "blog" and row[1] == "Outage 50% of requests?"
    assert str(row["first_seen"]).endswith("Z")  # the default, in the same form on both
    now = time.time()
    assert not seen.due(url, 3600, now) and seen.due(url, 3600, now + 7200)  # from first_seen
    seen.checked(url, now + 7200)
    seen.checked(url, now + 7300)  # replaced
    assert not seen.due(url, 3600, now + 7400) and seen.due(url, 3600, now + 7300 + 3600)
    seen.close()


def test_an_archive_written_on_either_verifies(
    tmp_path: Path, database_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INCIDENTS_DATABASE_URL", database_url)
    settings = Settings(data_dir=tmp_path / "data")
    with Archive(settings) as archive:
        first = archive.store_resource(b"<p>one</p>", url="https://example.org/1", content_type="text/html")
        archive.store_resource(b"<p>two</p>", url="https://example.org/2", content_type="text/html")
        again = archive.store_resource(b"<p>one</p>", url="https://example.org/1", content_type="text/html")
        assert again.kind == "revisit" and again.revisit_of == first.id
        assert archive.read_payload(again.id) == b"<p>one</p>"
    result = run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir))
    assert result.code == 0 and result.out.startswith("ok: 1 WARC files, 4 records, 3 index entries"), result
    assert (settings.raw_dir / "index.sqlite").exists() is (not database_url)


# -- migrations ------------------------------------------------------------------------------

# raw/index.sqlite, ledger.sqlite and discovery.sqlite as the code before migrations made them
# (its CREATE statements, verbatim): such a data directory opens and keeps working.
BEFORE_MIGRATIONS = {
    "index.sqlite": """
CREATE TABLE IF NOT EXISTS captures (id TEXT PRIMARY KEY, url TEXT NOT NULL, canonical_url TEXT NOT NULL,
    captured_at TEXT NOT NULL, status INTEGER, mime TEXT, payload_sha256 TEXT, payload_digest TEXT,
    warc_file TEXT NOT NULL, offset INTEGER NOT NULL, length INTEGER NOT NULL, revisit_of TEXT, kind TEXT NOT NULL,
    record_id TEXT NOT NULL, content_type TEXT, etag TEXT, last_modified TEXT, source_path TEXT, requested_url TEXT);
CREATE INDEX IF NOT EXISTS captures_canonical ON captures (canonical_url, captured_at);
CREATE TABLE IF NOT EXISTS warc_files (name TEXT PRIMARY KEY, origin TEXT NOT NULL, size INTEGER NOT NULL,
    closed INTEGER NOT NULL, sha256 TEXT);
CREATE TABLE IF NOT EXISTS link_checks (canonical_url TEXT PRIMARY KEY, checked_at TEXT NOT NULL,
    result TEXT NOT NULL, detail TEXT, first_gone_at TEXT);
INSERT INTO captures VALUES ('c-1', 'https://a.example.org/', 'https://a.example.org/', 't', 200, 'text/html',
    NULL, NULL, 'warc/a.warc.gz', 0, 10, NULL, 'response', '<urn:uuid:1>', NULL, NULL, NULL, NULL, NULL);
""",
    "ledger.sqlite": """
CREATE TABLE IF NOT EXISTS sources (url TEXT PRIMARY KEY, digest TEXT NOT NULL, draft_id TEXT NOT NULL,
    snapshot TEXT, skipped TEXT);
INSERT INTO sources VALUES ('https://a.example.org/', 'sha256:1', 'd-1', 'c-1', NULL);
""",
    "discovery.sqlite": """
CREATE TABLE IF NOT EXISTS seen (url TEXT PRIMARY KEY, source TEXT, title TEXT,
    first_seen TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')));
INSERT INTO seen (url, source, title) VALUES ('https://a.example.org/', 'blog', 'A');
""",
}


def test_sqlite_files_from_before_migrations_upgrade_themselves(tmp_path: Path) -> None:
    for name, script in BEFORE_MIGRATIONS.items():
        db = sqlite3.connect(tmp_path / name)
        db.executescript(script)
        db.close()
    index = Index(tmp_path / "index.sqlite")
    assert index.get("c-1") is not None and index.records() == []  # the table the old one lacked
    index.close()
    ledger = Ledger(tmp_path / "ledger.sqlite")
    assert ledger.get("https://a.example.org/") == Entry("https://a.example.org/", "sha256:1", "d-1", "c-1")
    ledger.close()
    seen = SeenStore(tmp_path / "discovery.sqlite")
    assert seen.seen("https://a.example.org/")
    seen.checked("https://a.example.org/", 1.0)  # the table added later
    seen.close()
    for name, component in (
        ("index.sqlite", "index"),
        ("ledger.sqlite", "ledger"),
        ("discovery.sqlite", "discovery"),
    ):
        db = Database.open(tmp_path / name)
        assert db.versions() == {component: database.latest_version(component)}
        db.close()


def test_postgresql_needs_db_upgrade_and_says_so(postgres_url: str, tmp_path: Path) -> None:
    with pytest.raises(DatabaseError) as caught:
        Ledger(tmp_path / "ledger.sqlite", postgres_url)
    message = str(caught.value)
    assert "\n" not in message and shown_url(postgres_url) in message and "`incidents db upgrade`" in message
    db = Database.open(postgres_url)
    applied = db.upgrade(COMPONENTS)
    assert applied == [f"{c}/initial" for c in COMPONENTS]
    assert db.upgrade(COMPONENTS) == []  # nothing left to do
    Ledger(tmp_path / "ledger.sqlite", postgres_url).close()
    # a schema older than the program's (as when a new migration ships): the same line
    db.execute("DELETE FROM schema_version WHERE component = 'ledger'")
    with pytest.raises(DatabaseError, match=r"\(ledger: version 0, needs 1\): run `incidents db upgrade`"):
        Ledger(tmp_path / "ledger.sqlite", postgres_url)
    db.execute("INSERT INTO schema_version VALUES ('index', 99, 'future', 'now')")
    with pytest.raises(DatabaseError, match="newer than this program's"):
        Index(tmp_path / "index.sqlite", database_url=postgres_url)
    db.close()


def test_an_unreachable_server_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"postgresql://curator:s3cret@/incidents?host={tmp_path}&port=5999"  # no server there
    monkeypatch.setenv("INCIDENTS_DATABASE_URL", url)
    result = run(capsys, "archive", "list", "--data-dir", str(tmp_path / "data"))
    assert result.code == 2 and result.out == ""
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: cannot reach the database at postgresql://curator@/incidents"
    )
    assert "s3cret" not in result.err and "INCIDENTS_DATABASE_URL" in lines[0]


def test_placeholders_and_passwords() -> None:
    assert to_psycopg("SELECT '?', x FROM t WHERE a = ? AND b LIKE '50%' AND c = ?") == (
        "SELECT '?', x FROM t WHERE a = %s AND b LIKE '50%%' AND c = %s"
    )
    assert shown_url("postgresql://u:pw@db.example.org:5432/x?password=pw&sslmode=require") == (
        "postgresql://u@db.example.org:5432/x?sslmode=require"
    )


def test_a_lost_connection_is_one_line_then_connects_again(postgres_url: str, tmp_path: Path) -> None:
    db = Database.open(postgres_url)
    db.upgrade(COMPONENTS)
    ledger = Ledger(tmp_path / "ledger.sqlite", postgres_url)
    ledger.put(Entry("https://a.example.org/", "sha256:1", "d-1", None))
    pid = ledger.one("SELECT pg_backend_pid()")
    assert pid is not None
    db.execute("SELECT pg_terminate_backend(?)", (pid[0],))  # as a server restart does
    with pytest.raises(DatabaseError, match="failed .*check the server") as caught:
        ledger.get("https://a.example.org/")
    assert "\n" not in str(caught.value)
    assert ledger.get("https://a.example.org/") is not None  # the next statement connects again
    ledger.close()
    db.close()


def test_reindex_rebuilds_the_index_where_it_lives(
    tmp_path: Path, database_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INCIDENTS_DATABASE_URL", database_url)
    settings = Settings(data_dir=tmp_path / "data")
    with Archive(settings) as archive:
        saved = [
            archive.store_resource(
                f"<p>{n}</p>".encode(), url=f"https://example.org/{n}", content_type="text/html"
            )
            for n in range(3)
        ]
        archive.index.record_check("https://example.org/1", "2026-01-01T00:00:00Z", "gone", "404")
        with archive.index.transaction() as db:  # a stray row the WARC files do not back
            Index.insert(db, _capture(99, "https://stray.example.org/", "t"))
    result = run(capsys, "archive", "reindex", "--data-dir", str(settings.data_dir))
    assert result.code == 0, result
    assert result.out.startswith(f"rebuilt {shown_url(database_url) if database_url else settings.raw_dir}")
    with Archive(settings) as archive:
        assert [c.id for c in archive.captures()] == [c.id for c in saved]
        assert archive.index.link_check("https://example.org/1") is not None
    assert run(capsys, "archive", "verify", "--data-dir", str(settings.data_dir)).code == 0


def test_ingest_and_review_run_the_same_on_both(data_dir: Path, database_url: str) -> None:
    """Fetch (with a 304 on the re-run), archive, draft, queue, approve: one code path, either store."""
    from flows.ingest import ingest_jobs, job_for
    from flows.review import Reviews
    from tests.httpserver import LoopbackServer, Reply, Request

    sample = Path(__file__).resolve().parents[3] / "examples" / "postmortem.html"

    def page(request: Request) -> Reply:
        if request.headers.get("If-None-Match") == '"v1"':
            return Reply(304, headers={"ETag": '"v1"'})
        return Reply(body=sample.read_bytes(), headers={"Content-Type": "text/html", "ETag": '"v1"'})

    settings = Settings(data_dir=data_dir, allow_hosts="127.0.0.1", min_interval=0, database_url=database_url)
    with LoopbackServer(("127.0.0.1",)) as server:
        server.route("/pm.html", page)
        jobs = [job_for(server.url("/pm.html")), job_for(str(sample))]
        first = ingest_jobs(jobs, settings=settings)
        again = ingest_jobs(jobs, settings=settings)
    assert sorted(o.status for o in first) == ["drafted", "duplicate"], first  # the same text twice
    assert {o.source: o.status for o in again} == {jobs[0].source: "unchanged", jobs[1].source: "duplicate"}
    assert first[0].draft_id and all(o.draft_id == first[0].draft_id for o in [*first, *again])
    record = Reviews(settings).approve(first[0].draft_id, reviewer="rev@example.org")
    assert record.id == "IL-0001"
    with Archive(settings) as archive:
        assert {c.kind for c in archive.captures()} >= {"response", "resource"}
    assert (data_dir / "raw" / "ledger.sqlite").exists() is (not database_url)


def test_settings_never_show_the_password(monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.settings import describe

    monkeypatch.setenv("INCIDENTS_DATABASE_URL", "postgresql://curator:s3cret@db.example.org/incidents")
    rows = {row["name"]: row["value"] for row in describe(Settings())}
    assert rows["INCIDENTS_DATABASE_URL"] == "postgresql://curator@db.example.org/incidents"
    settings = Settings()
    assert settings.database == "postgresql://curator:s3cret@db.example.org/incidents"
    assert "s3cret" not in json.dumps(
        settings.model_dump(mode="json")
    )  # as Prefect stores a run's parameters
    monkeypatch.setenv("INCIDENTS_DATABASE_URL", "mysql://db.example.org/x")
    with pytest.raises(ValueError, match="give a postgresql://"):
        Settings()


def test_db_status_on_one_machine_names_the_files(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Ledger(data_dir / "raw" / "ledger.sqlite").close()
    result = run(capsys, "db", "status")
    lines = result.out.splitlines()
    assert result.code == 0 and [line.split()[0] for line in lines] == ["index", "ledger", "discovery"]
    assert (
        "v1 not created yet" in lines[0]
        and f"v1 ok  {data_dir / 'raw' / 'ledger.sqlite'}  0 sources" in lines[1]
    )
