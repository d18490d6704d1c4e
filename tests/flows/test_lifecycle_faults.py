"""A correction and an update are journal decisions too: killed after any step, the next command
finishes them (one new version, one history file, one audit line); a step failing as on a full
disk leaves nothing written. Real `incidents` processes, real kill -9 (flows/store/faults.py)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.flows.test_review_faults import audit_lines, incidents, queue_one

STEPS = ["intent", "history", "record", "audit", "steps"]


def _approved(data_dir: Path) -> str:
    draft_id = queue_one(data_dir)
    done = incidents(data_dir, "review", "approve", draft_id, "--reviewer", "alice")
    assert done.returncode == 0, done.stderr
    return "IL-0001"


@pytest.mark.parametrize("step", STEPS)
def test_a_correction_killed_after_a_step_is_finished_by_the_next_command(data_dir: Path, step: str) -> None:
    record_id = _approved(data_dir)
    edits = data_dir / "fix.json"
    edits.write_text(json.dumps({"summary": {"en": "Corrected."}, "root_cause": None}))
    killed = incidents(
        data_dir,
        "review",
        "correct",
        record_id,
        "--reviewer",
        "bob",
        "--edits",
        str(edits),
        fault=f"after:{step}",
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    checked = incidents(data_dir, "validate")
    assert checked.returncode == 0, checked.stderr
    record = json.loads((data_dir / "records" / f"{record_id}.json").read_text())
    assert record["summary"] == {"en": "Corrected."} and record["review"]["reviewed_by"] == "bob"
    history = data_dir / "records" / "history" / record_id
    assert sorted(p.name for p in history.iterdir()) == ["1.json"]
    assert json.loads((history / "1.json").read_text())["review"]["reviewed_by"] == "alice"
    assert [a["action"] for a in audit_lines(data_dir)] == ["approved", "corrected"]
    again = incidents(data_dir, "review", "correct", record_id, "--reviewer", "bob", "--edits", str(edits))
    assert again.returncode == 1 and "change nothing" in again.stderr


@pytest.mark.parametrize("step", ["history", "record", "audit"])
def test_a_correction_on_a_full_disk_writes_nothing(data_dir: Path, step: str) -> None:
    record_id = _approved(data_dir)
    before = (data_dir / "records" / f"{record_id}.json").read_text()
    edits = data_dir / "fix.json"
    edits.write_text(json.dumps({"summary": {"en": "Corrected."}}))
    failed = incidents(
        data_dir,
        "review",
        "correct",
        record_id,
        "--reviewer",
        "bob",
        "--edits",
        str(edits),
        fault=f"fail:{step}",
    )
    assert failed.returncode == 1 and "Traceback" not in failed.stderr, failed.stderr
    assert (data_dir / "records" / f"{record_id}.json").read_text() == before
    assert not list((data_dir / "records" / "history").glob("*/*.json"))
    assert [a["action"] for a in audit_lines(data_dir)] == ["approved"]
    assert incidents(data_dir, "validate").returncode == 0
