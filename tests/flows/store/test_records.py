from __future__ import annotations

import json
import multiprocessing
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from flows.store.records import RecordStore
from schema.record import Record
from tests.conftest import DATA

OURS = json.loads((DATA / "records" / "IL-0042.json").read_text(encoding="utf-8"))


def _build(record_id: str) -> Record:
    return Record.model_validate(OURS | {"id": record_id})


def test_first_id_is_il_0001_and_file_is_pretty(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    record = store.create(_build)
    assert record.id == "IL-0001"
    text = (tmp_path / "IL-0001.json").read_text(encoding="utf-8")
    assert text.startswith('{\n  "id": "IL-0001",\n  "org": "Larkspur",')
    assert text.endswith("}\n")


def test_next_id_follows_the_highest(tmp_path: Path) -> None:
    (tmp_path / "IL-0171.json").write_text("{}")
    (tmp_path / "IL-0009.json").write_text("{}")
    (tmp_path / "notes.json").write_text("{}")
    assert RecordStore(tmp_path).create(_build).id == "IL-0172"


def test_a_failing_build_writes_nothing(tmp_path: Path) -> None:
    def bad(record_id: str) -> Record:
        raise ValueError("invalid")

    store = RecordStore(tmp_path)
    with pytest.raises(ValueError):
        store.create(bad)
    assert store.paths() == []


def _allocate(folder: str, n: int, out: multiprocessing.Queue) -> None:
    store = RecordStore(Path(folder))
    out.put([store.create(_build).id for _ in range(n)])


def test_concurrent_processes_never_share_an_id(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_allocate, args=(str(tmp_path), 10, out)) for _ in range(3)]
    for p in procs:
        p.start()
    ids = [i for _ in procs for i in out.get(timeout=60)]
    for p in procs:
        p.join(timeout=60)
    assert len(ids) == 30 == len(set(ids))
    assert sorted(ids) == [f"IL-{n:04d}" for n in range(1, 31)]
    assert len(RecordStore(tmp_path).paths()) == 30


def test_a_reserved_id_is_not_allocated_again(tmp_path: Path) -> None:
    # An id reserved by a writer still writing its record (another thread or process).
    (tmp_path / "IL-0003.json").write_text("{}")
    (tmp_path / ".IL-0004.reserved").touch()
    store = RecordStore(tmp_path)
    assert store.create(_build).id == "IL-0005"
    assert [p.name for p in store.paths()] == ["IL-0003.json", "IL-0005.json"]
    assert (tmp_path / ".IL-0004.reserved").exists()  # not ours to remove
    assert not (tmp_path / ".IL-0005.reserved").exists()  # ours, removed once the record is written


def test_a_build_using_another_id_writes_nothing(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    with pytest.raises(ValueError, match="must use the id given"):
        store.create(lambda record_id: _build("IL-0099"))
    assert store.paths() == []
    assert store.create(_build).id == "IL-0001"  # the id was not spent


def test_a_failed_write_leaves_no_reservation_and_never_replaces(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    taken = tmp_path / "IL-0001.json"

    def sneaky(record_id: str) -> Record:
        taken.write_text("someone else's\n")  # a file appears after the id was allocated
        return _build(record_id)

    with pytest.raises(FileExistsError):
        store.create(sneaky)
    assert taken.read_text() == "someone else's\n"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == ["IL-0001.json"]


def test_threads_writing_at_once_get_distinct_ids_and_whole_files(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    with ThreadPoolExecutor(max_workers=16) as pool:
        ids = list(pool.map(lambda _: store.create(_build).id, range(80)))
    assert sorted(ids) == [f"IL-{n:04d}" for n in range(1, 81)]
    for record_id in ids:
        assert store.read(record_id).id == record_id
    assert not list(tmp_path.glob(".IL-*"))  # no reservation or temp file left


def test_ids_taken_after_the_listing_are_skipped_under_the_lock(tmp_path: Path) -> None:
    # create() lists the folder before it takes the lock; another writer may allocate between.
    store = RecordStore(tmp_path)
    (tmp_path / "IL-0001.json").write_text("{}")
    (tmp_path / ".IL-0002.reserved").touch()
    record, reservation, fd = store._allocate(_build, 0)  # as if the listing had seen nothing
    os.close(fd)
    assert record.id == "IL-0003"
    assert reservation.name == ".IL-0003.reserved" and reservation.exists()


def test_a_writer_finishing_during_the_probe_is_not_missed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another writer holds IL-0002 and finishes (links its record, drops its reservation) just
    # after the allocator's first look at IL-0002: one of its two names is there at every moment,
    # and the allocator must still see one of them.
    store = RecordStore(tmp_path)
    reservation = tmp_path / ".IL-0002.reserved"
    reservation.touch()
    real_exists = Path.exists
    pending = [True]

    def exists(self: Path, **kwargs: bool) -> bool:
        found = real_exists(self, **kwargs)
        if pending and self.name in ("IL-0002.json", ".IL-0002.reserved"):
            pending.clear()
            (tmp_path / "IL-0002.json").write_text("{}")
            reservation.unlink()
        return found

    monkeypatch.setattr(Path, "exists", exists)
    record, _, fd = store._allocate(_build, 1)
    os.close(fd)
    assert record.id == "IL-0003"
