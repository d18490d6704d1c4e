from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli import run
from tests.conftest import DATA

OURS = DATA / "records" / "IL-0042.json"


def test_valid_records_pass(capsys, data_dir: Path) -> None:
    records = data_dir / "records"
    records.mkdir()
    shutil.copy(OURS, records / "IL-0042.json")
    result = run(capsys, "validate")
    assert result.code == 0 and "1 record(s) valid" in result.out


def test_seed_passes(capsys, shared: Path) -> None:
    assert run(capsys, "validate", str(shared / "seeds" / "000_86759986fefc91a4.txt")).code == 0


def test_every_bad_file_and_field_is_named(capsys, data_dir: Path) -> None:
    records = data_dir / "records"
    records.mkdir()
    good = json.loads(OURS.read_text())
    (records / "IL-0001.json").write_text(json.dumps(good | {"id": "IL-0001", "root_cause": "gremlins"}))
    (records / "IL-0002.json").write_text(json.dumps(good | {"id": "IL-0003"}))
    (records / "IL-0003.json").write_text(json.dumps(good | {"id": "IL-0003"}))
    (records / "IL-0004.json").write_text("{oops")
    (records / "IL-0005.json").write_text(json.dumps(good | {"id": "IL-5"}))
    result = run(capsys, "validate")
    assert result.code == 1
    err = result.err
    assert "IL-0001.json: root_cause: 'gremlins' is not a term" in err
    assert "IL-0002.json: id: file name says IL-0002 but the record is IL-0003" in err
    assert "IL-0003.json: id: IL-0003 is also the id in" in err
    assert "IL-0004.json: (file): not JSON" in err
    assert "IL-0005.json: id:" in err
    assert "5 of 5 file(s) invalid" in err


def test_missing_path(capsys, tmp_path: Path) -> None:
    result = run(capsys, "validate", str(tmp_path / "nope.json"))
    assert result.code == 1 and "no such file" in result.err


def _approve_two(capsys, data_dir: Path) -> list[str]:
    from flows.settings import Settings
    from flows.store.queue import QueueStore
    from tests.flows.factories import make_draft

    queue = QueueStore(Settings(data_dir=data_dir).queue_dir)
    drafts = [make_draft(n) for n in (1, 2)]
    for draft in drafts:
        queue.add(draft)
        assert run(capsys, "review", "approve", draft.draft_id, "--reviewer", "alice").code == 0
    return [d.draft_id for d in drafts]


def test_two_records_from_one_draft_are_reported(capsys, data_dir: Path) -> None:
    ids = _approve_two(capsys, data_dir)
    records = data_dir / "records"
    copy = json.loads((records / "IL-0001.json").read_text()) | {"id": "IL-0003"}
    (records / "IL-0003.json").write_text(json.dumps(copy))  # as a retried approval once made it
    result = run(capsys, "validate")
    assert result.code == 1
    assert (
        f"{records / 'IL-0003.json'}: sources.0.draft: draft {ids[0]} also made IL-0001 (IL-0001.json): "
        "one draft, two records; keep one and remove the other file"
    ) in result.err.splitlines()
    # and IL-0003 has no audit line of its own: it was not approved through review
    assert f"{records / 'IL-0003.json'}: (audit): IL-0003 was approved from a draft" in result.err


def test_a_record_without_its_audit_line_is_reported(capsys, data_dir: Path) -> None:
    _approve_two(capsys, data_dir)
    audit = data_dir / "records" / "audit.jsonl"
    audit.write_text(audit.read_text().splitlines()[0] + "\n")  # the second approval's line lost
    result = run(capsys, "validate")
    assert result.code == 1
    assert result.err.splitlines()[0] == (
        f"{data_dir / 'records' / 'IL-0002.json'}: (audit): IL-0002 was approved from a draft but no "
        "line of audit.jsonl records it: the record was written outside `incidents review`, or the log "
        "lost lines"
    )


def test_validate_cleans_leftovers_and_says_so(capsys, data_dir: Path) -> None:
    import os
    import time

    _approve_two(capsys, data_dir)
    records = data_dir / "records"
    leftover = records / ".IL-0002.json.abc123.tmp"
    leftover.write_text((records / "IL-0002.json").read_text())
    past = time.time() - 60
    os.utime(leftover, (past, past))
    (records / ".IL-0007.reserved").touch()
    result = run(capsys, "validate")
    assert result.code == 0, result.err
    assert f"note: removed {leftover}: a temp file of a write that was killed" in result.err
    assert f"note: removed {records / '.IL-0007.reserved'}: an id reservation" in result.err
    assert "2 record(s) valid" in result.out
    again = run(capsys, "validate")
    assert again.code == 0 and again.err == ""
