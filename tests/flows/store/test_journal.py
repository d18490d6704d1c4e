"""Intents (records/.journal/), their recovery, the clean-up of crash leftovers, and file modes."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows.store import journal
from flows.store.audit import AuditLog, audit_entry
from tests.flows.factories import make_draft


def _line(n: int = 1) -> dict:
    return audit_entry(action="approved", at=f"2026-03-12T10:00:0{n}Z", by="alice", version=2, draft_id="d-1")


def _intent(data_dir: Path, **kw):  # type: ignore[no-untyped-def]
    records = data_dir / "records"
    return journal.intent(
        data_dir,
        action="approved",
        by="alice",
        draft_id="d-1",
        version=2,
        record_id="IL-0001",
        steps=[
            journal.write("record", records / "IL-0001.json", "record\n"),
            journal.write("draft", records / "queue" / "d-1.json", "draft v2\n"),
            journal.audit(_line()),
        ],
        **kw,
    )


def _setup(data_dir: Path) -> None:
    (data_dir / "records" / "queue").mkdir(parents=True)
    (data_dir / "records" / "queue" / "d-1.json").write_text("draft v1\n")


def test_an_intent_writes_its_steps_in_order_and_goes(data_dir: Path) -> None:
    _setup(data_dir)
    reservation = data_dir / "records" / ".IL-0001.reserved"
    reservation.touch()
    with _intent(data_dir, cleanup=[reservation]) as made:
        assert (journal.folder_of(data_dir) / f"{made.id}.json").is_file()
        assert (data_dir / "records" / "IL-0001.json").read_text() == "record\n"
    assert (data_dir / "records" / "queue" / "d-1.json").read_text() == "draft v2\n"
    assert AuditLog(data_dir / "records" / "audit.jsonl").entries() == [_line()]
    assert journal.pending(data_dir) == [] and not reservation.exists()


@pytest.mark.parametrize("step", ["record", "draft", "audit"])
def test_a_failing_step_rolls_back_the_steps_before_it(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    _setup(data_dir)
    monkeypatch.setenv("INCIDENTS_FAULT", f"fail:{step}")
    with pytest.raises(OSError, match="No space left"), _intent(data_dir):
        pass
    assert not (data_dir / "records" / "IL-0001.json").exists()
    assert (data_dir / "records" / "queue" / "d-1.json").read_text() == "draft v1\n"
    assert AuditLog(data_dir / "records" / "audit.jsonl").entries() == []
    assert journal.pending(data_dir) == []


def test_a_failure_after_the_audit_line_is_finished_not_undone(data_dir: Path) -> None:
    _setup(data_dir)
    with pytest.raises(RuntimeError), _intent(data_dir):
        raise RuntimeError("after every step")
    assert len(journal.pending(data_dir)) == 1  # kept: the decision is logged, so it is finished
    notes = journal.recover(data_dir)
    assert [n.finished for n in notes] == [True] and journal.pending(data_dir) == []
    assert AuditLog(data_dir / "records" / "audit.jsonl").entries() == [_line()]  # once


def _dead_intent(data_dir: Path, done: int) -> Path:
    """An intent as a killed process leaves it, its first `done` steps written."""
    _setup(data_dir)
    folder = journal.folder_of(data_dir)
    folder.mkdir(parents=True)
    records = data_dir / "records"
    steps = [
        {
            "name": "record",
            "kind": "write",
            "path": "records/IL-0001.json",
            "before": None,
            "after": "record\n",
        },
        {
            "name": "draft",
            "kind": "write",
            "path": "records/queue/d-1.json",
            "before": "draft v1\n",
            "after": "draft v2\n",
        },
        {"name": "audit", "kind": "audit", "entry": _line()},
    ]
    if done >= 1:
        (records / "IL-0001.json").write_text("record\n")
    if done >= 2:
        (records / "queue" / "d-1.json").write_text("draft v2\n")
    path = folder / "0000000000001-1-abcdef.json"
    made = {"id": path.stem, "action": "approved", "by": "alice", "draft_id": "d-1", "version": 2}
    path.write_text(json.dumps(made | {"record_id": "IL-0001", "steps": steps, "cleanup": []}))
    return path


@pytest.mark.parametrize("done", [0, 1, 2])
def test_recover_finishes_a_dead_intent_from_where_it_stopped(data_dir: Path, done: int) -> None:
    _dead_intent(data_dir, done)
    notes = journal.recover(data_dir)
    assert [str(n) for n in notes] == [
        "finished an interrupted approval of d-1 as IL-0001 by alice (0000000000001-1-abcdef.json)"
    ]
    assert (data_dir / "records" / "IL-0001.json").read_text() == "record\n"
    assert (data_dir / "records" / "queue" / "d-1.json").read_text() == "draft v2\n"
    assert AuditLog(data_dir / "records" / "audit.jsonl").entries() == [_line()]
    assert journal.recover(data_dir) == []  # nothing twice


def test_a_live_intent_is_left_to_its_writer(data_dir: Path) -> None:
    path = _dead_intent(data_dir, 1)
    fd = os.open(path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as the writer holds it while it works
    try:
        assert journal.recover(data_dir) == []
        assert path.exists()
    finally:
        os.close(fd)
    assert [n.finished for n in journal.recover(data_dir)] == [True]


def test_a_file_changed_since_is_left_as_it_is_and_said(data_dir: Path) -> None:
    _dead_intent(data_dir, 1)
    (data_dir / "records" / "queue" / "d-1.json").write_text("draft v3, by someone else\n")
    (note,) = journal.recover(data_dir)
    assert note.problem and "records/queue/d-1.json changed since, left as it is" in str(note)
    assert (data_dir / "records" / "queue" / "d-1.json").read_text() == "draft v3, by someone else\n"


def test_an_unreadable_intent_is_named(data_dir: Path) -> None:
    path = _dead_intent(data_dir, 0)
    path.write_text('{"id": "trunc')
    (note,) = journal.recover(data_dir)
    assert note.problem and str(note).startswith(f"{path}: (intent): cannot be read")


def _old(path: Path) -> Path:
    past = time.time() - 60
    os.utime(path, (past, past))
    return path


def test_leftovers_are_cleaned_and_reported_live_ones_kept(data_dir: Path) -> None:
    records = data_dir / "records"
    (records / "queue").mkdir(parents=True)
    dead_tmp = records / ".IL-0004.json.x1y2z3.tmp"
    dead_tmp.write_text('{"id": "IL-0004"}')
    _old(dead_tmp)
    queue_tmp = records / "queue" / ".d-1.json.abc.tmp"
    queue_tmp.write_text("{")
    _old(queue_tmp)
    fresh_tmp = records / ".IL-0005.json.new.tmp"
    fresh_tmp.write_text("{")  # just made: its writer may not have locked it yet
    dead_reservation = records / ".IL-0003.reserved"
    dead_reservation.touch()  # reservations are told by their lock alone (taken under the records lock)
    live_reservation = records / ".IL-0006.reserved"
    live_reservation.touch()
    fd = os.open(live_reservation, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        notes = [str(n) for n in journal.recover(data_dir)]
    finally:
        os.close(fd)
    assert sorted(notes) == sorted(
        [
            f"removed {dead_reservation}: an id reservation of an approval that was killed before it wrote "
            "anything (the id is free again)",
            f"removed {dead_tmp}: a temp file of a write that was killed (the file it was for is whole)",
            f"removed {queue_tmp}: a temp file of a write that was killed (the file it was for is whole)",
        ]
    )
    assert fresh_tmp.exists() and live_reservation.exists()
    assert not dead_tmp.exists() and not dead_reservation.exists() and not queue_tmp.exists()


def test_audit_appends_move_a_torn_tail_aside(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    log.append(_line(1))
    with open(log.path, "ab") as handle:
        handle.write(b'{"at": "2026-03-12T1')  # a kill in the middle of a write
    read = log.read()
    assert read.entries == [_line(1)]
    assert [(b.number, b.why.split(" (")[0]) for b in read.bad] == [(2, "torn")]
    log.append(_line(2))
    assert log.entries() == [_line(1), _line(2)] and log.read().bad == []
    assert log.torn_path.read_bytes() == b'{"at": "2026-03-12T1\n'


def test_audit_readers_skip_and_name_bad_lines(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    log.path.write_bytes(
        json.dumps(_line(1)).encode() + b"\n"
        b"garbage\n"
        b"[1, 2]\n"
        b'{"action": "approved"}\n'
        b"\xff\xfe\n" + json.dumps(_line(2)).encode() + b"\n"
    )
    read = log.read()
    assert read.entries == [_line(1), _line(2)]
    assert [str(b) for b in read.bad] == [
        f"{log.path} line 2: not JSON (Expecting value); skipped",
        f"{log.path} line 3: not a JSON object; skipped",
        f"{log.path} line 4: not an audit entry (no at, by); skipped",
        f"{log.path} line 5: not UTF-8 text; skipped",
    ]


def test_every_audit_line_has_action_at_by_version(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    with pytest.raises(ValueError, match="version"):
        log.append({"action": "gone", "at": "2026-03-12T10:00:00Z", "by": "incidents ingest"})
    for action in ("superseded", "corrected", "updated", "source-added", "gone", "reopened"):
        log.append(audit_entry(action=action, at="2026-03-12T10:00:00Z", by="x", version=3, record_id="IL-1"))
    assert [e["action"] for e in log.entries()] == [
        "superseded",
        "corrected",
        "updated",
        "source-added",
        "gone",
        "reopened",
    ]


@pytest.mark.parametrize(("umask", "mode"), [(0o027, 0o640), (0o002, 0o664)])
def test_files_are_created_honouring_the_umask(data_dir: Path, umask: int, mode: int) -> None:
    from flows.settings import Settings
    from flows.store.queue import QueueStore

    draft = make_draft(3)
    env = {k: v for k, v in os.environ.items() if not k.startswith("INCIDENTS_")}
    code = (
        "import sys; from pathlib import Path; from flows.store.queue import QueueStore; "
        "from schema.draft import Draft; "
        "QueueStore(Path(sys.argv[1])).add(Draft.model_validate_json(sys.argv[2]))"
    )
    queue_dir = Settings(data_dir=data_dir).queue_dir

    def as_user() -> None:
        os.umask(umask)

    subprocess.run(
        [sys.executable, "-c", code, str(queue_dir), draft.model_dump_json()],
        env=env,
        check=True,
        preexec_fn=as_user,
    )
    approved = subprocess.run(
        [sys.executable, "-m", "flows", "review", "approve", draft.draft_id, "--reviewer", "alice"],
        env=env | {"INCIDENTS_DATA_DIR": str(data_dir)},
        capture_output=True,
        text=True,
        preexec_fn=as_user,
    )
    assert approved.returncode == 0, approved.stderr
    records = data_dir / "records"
    for path in (
        records / "IL-0001.json",
        QueueStore(queue_dir).path_for(draft.draft_id),
        records / "audit.jsonl",
    ):
        assert path.stat().st_mode & 0o777 == mode, path
