from __future__ import annotations

import json
import multiprocessing
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
