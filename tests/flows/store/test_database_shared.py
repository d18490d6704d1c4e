"""What several machines share through the database: record ids, the queue's index and its lock,
and moving a one-machine data directory into PostgreSQL (`incidents db copy`)."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

import flows.store.queue as queue_module
from flows.archive import Archive
from flows.discover import SeenStore
from flows.review import Reviews
from flows.settings import Settings
from flows.store.database import Database
from flows.store.ledger import Entry, Ledger
from flows.store.queue import QueueStore
from flows.store.records import RecordStore
from schema.errors import DataDirError
from schema.record import Record
from tests.cli import run
from tests.conftest import DATA
from tests.flows.factories import make_draft

OURS = json.loads((DATA / "records" / "IL-0042.json").read_text(encoding="utf-8"))


def _build(record_id: str) -> Record:
    return Record.model_validate(OURS | {"id": record_id})


def _allocate(folder: str, url: str, n: int, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    store = RecordStore(Path(folder), url)
    out.put([store.create(_build).id for _ in range(n)])


def test_record_ids_are_dense_and_unique_across_processes(tmp_path: Path, database_url: str) -> None:
    # With a database, the third process writes into a folder of its own (another machine's
    # view of records/, which the others' files have not reached): the counter still holds.
    folders = [tmp_path / "a", tmp_path / "a", tmp_path / ("b" if database_url else "a")]
    for folder in folders:
        folder.mkdir(exist_ok=True)
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_allocate, args=(str(f), database_url, 10, out)) for f in folders]
    for p in procs:
        p.start()
    ids = [i for _ in procs for i in out.get(timeout=120)]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert sorted(ids) == [f"IL-{n:04d}" for n in range(1, 31)]
    written = sorted(p.name for f in set(folders) for p in f.glob("IL-*.json"))
    assert written == [f"{i}.json" for i in sorted(ids)]


def test_a_failing_build_spends_no_shared_id(tmp_path: Path, postgres_upgraded_url: str) -> None:
    # (the file-based allocation has this test in tests/flows/store/test_records.py)
    database_url = postgres_upgraded_url

    def bad(record_id: str) -> Record:
        raise ValueError("invalid")

    store = RecordStore(tmp_path, database_url)
    with pytest.raises(ValueError):
        store.create(bad)
    assert store.create(_build).id == "IL-0001"
    (tmp_path / "IL-0007.json").write_text("{}")  # written while no database was configured
    assert store.create(_build).id == "IL-0008"  # past the highest file, never over it


def test_the_queue_index_follows_drafts_and_decisions(data_dir: Path, database_url: str) -> None:
    settings = Settings(data_dir=data_dir, database_url=database_url)
    queue = QueueStore(settings.queue_dir, database_url)
    drafts = [make_draft(n) for n in (1, 2, 3)]
    for draft in drafts:
        assert queue.add(draft)
    assert not queue.add(drafts[0])  # a duplicate
    reviewer = Reviews(settings)
    record = reviewer.approve(drafts[0].draft_id, reviewer="rev@example.org")
    reviewer.reject(drafts[1].draft_id, reviewer="rev@example.org", reason="not an incident")
    expected = sorted(d.draft_id for d in drafts)
    assert queue.indexed_ids() == expected
    assert queue.indexed_ids("approved") == [drafts[0].draft_id]
    assert queue.indexed_ids("pending") == [drafts[2].draft_id]
    if database_url:
        db = Database.open(database_url)
        rows = {r["draft_id"]: (r["status"], r["version"]) for r in db.all("SELECT * FROM queue")}
        db.close()
        assert rows == {
            drafts[0].draft_id: ("approved", 2),
            drafts[1].draft_id: ("rejected", 2),
            drafts[2].draft_id: ("pending", 1),
        }
        assert not (settings.queue_dir / ".locks").exists()  # the database's lock, not files
    assert record.id == "IL-0001" and (settings.records_dir / "IL-0001.json").exists()
    queue.close()


def test_a_draft_locked_on_another_machine_waits_then_says_so(
    tmp_path: Path, postgres_upgraded_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (on one machine the lock is a file lock: tests/flows/test_review_processes.py)
    database_url = postgres_upgraded_url
    monkeypatch.setattr(queue_module, "LOCK_TIMEOUT", 0.3)
    here, there = QueueStore(tmp_path / "q", database_url), QueueStore(tmp_path / "q", database_url)
    with here.lock_for("d-1"):
        with pytest.raises(DataDirError, match="d-1 stayed locked by another reviewer"):
            there.lock_for("d-1").__enter__()
        with there.lock_for("d-2"):  # another draft: no wait
            pass
    with there.lock_for("d-1"):  # released
        pass
    here.close()
    there.close()


def test_db_copy_moves_a_data_directory_and_verify_passes(
    data_dir: Path, postgres_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A data directory as one machine makes it: SQLite files, a record, a queue.
    settings = Settings(data_dir=data_dir)
    with Archive(settings) as archive:
        for n in range(3):
            archive.store_resource(
                f"<p>{n}</p>".encode(), url=f"https://example.org/{n}", content_type="text/html"
            )
        archive.index.record_check("https://example.org/1", "2026-01-01T00:00:00Z", "gone", "404")
    ledger = Ledger(settings.raw_dir / "ledger.sqlite")
    ledger.put(Entry("https://example.org/0", "sha256:0", "d-0", None))
    ledger.close()
    seen = SeenStore(settings.raw_dir / "discovery.sqlite")
    seen.mark("https://example.org/feed/1", "blog", "One")
    seen.checked("https://example.org/feed/1", 1.5)
    seen.close()
    queue = QueueStore(settings.queue_dir)
    for n in (1, 2):
        queue.add(make_draft(n))
    Reviews(settings).approve(make_draft(1).draft_id, reviewer="rev@example.org")
    assert run(capsys, "archive", "verify").code == 0

    monkeypatch.setenv("INCIDENTS_DATABASE_URL", postgres_url)
    copied = run(capsys, "db", "copy")
    assert copied.code == 0, copied
    assert "3 captures" in copied.out and "1 link_checks" in copied.out and "2 queue" in copied.out
    verified = run(capsys, "archive", "verify")
    assert verified.code == 0 and verified.out.startswith("ok: 1 WARC files, 4 records, 3 index entries")
    listed = run(capsys, "archive", "list", "--json")
    assert [c["url"] for c in json.loads(listed.out)] == [f"https://example.org/{n}" for n in range(3)]
    status = run(capsys, "db", "status", "--json")
    rows = {s["component"]: s["rows"] for s in json.loads(status.out)}
    assert rows["ledger"] == {"sources": 1} and rows["discovery"] == {"seen": 1, "checked": 1}
    assert rows["review"] == {"queue": 2}
    shared = Settings(data_dir=data_dir, database_url=postgres_url)
    assert Ledger(shared.raw_dir / "ledger.sqlite", postgres_url).get("https://example.org/0") is not None
    # the next approval takes the id after the copied records'
    record = Reviews(shared).approve(make_draft(2).draft_id, reviewer="rev@example.org")
    assert record.id == "IL-0002"
    again = run(capsys, "db", "copy")  # never over a database in use
    assert again.code == 2 and "already holds" in again.err and len(again.err.splitlines()) == 1


def test_db_upgrade_then_up_to_date(
    data_dir: Path, postgres_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INCIDENTS_DATABASE_URL", postgres_url)
    before = run(capsys, "archive", "list")
    assert (
        before.code == 2 and "run `incidents db upgrade`" in before.err and len(before.err.splitlines()) == 1
    )
    first = run(capsys, "db", "upgrade")
    assert first.code == 0 and first.out.startswith("upgraded postgresql://") and "index/initial" in first.out
    assert run(capsys, "db", "upgrade").out.endswith("is up to date\n")
    assert run(capsys, "archive", "list").code == 0
