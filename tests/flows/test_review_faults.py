"""Fault injection on review decisions: a real kill -9 after each step of a decision (through the
injection points of flows/store/faults.py, in a real `incidents` process), a step failing as on a
full disk, and a real full disk (a 3 MiB tmpfs, when the tests run as root).

For each: no duplicate record, no lost or torn audit line, no traceback, the right exit code, and
recovery by simply running the command again; `incidents validate` is clean afterwards."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.review import Reviews
from flows.settings import Settings
from flows.store.queue import QueueStore
from tests.flows.factories import make_draft

APPROVE_STEPS = ["reserved", "intent", "record", "draft", "audit", "steps"]
REJECT_STEPS = ["intent", "draft", "audit", "steps"]


def incidents(data_dir: Path, *args: str, fault: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real command in its own process (so that a kill -9 kills only it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INCIDENTS_")}
    env["INCIDENTS_DATA_DIR"] = str(data_dir)
    if fault:
        env["INCIDENTS_FAULT"] = fault
    return subprocess.run(
        [sys.executable, "-m", "flows", *args], env=env, capture_output=True, text=True, timeout=120
    )


def queue_one(data_dir: Path, n: int = 7) -> str:
    draft = make_draft(n)
    QueueStore(Settings(data_dir=data_dir).queue_dir).add(draft)
    return draft.draft_id


def audit_lines(data_dir: Path) -> list[dict]:
    path = data_dir / "records" / "audit.jsonl"
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n"), "the audit log ends in a torn line"
    return [json.loads(line) for line in text.splitlines()]


def record_files(data_dir: Path) -> list[str]:
    return sorted(p.name for p in (data_dir / "records").glob("IL-*.json"))


def leftovers(data_dir: Path) -> list[str]:
    records = data_dir / "records"
    found = [p.name for p in records.glob(".IL-*")]
    found += [p.name for p in records.rglob("*.tmp")]
    found += [p.name for p in (records / ".journal").glob("*")] if (records / ".journal").is_dir() else []
    return found


def assert_validate_clean(data_dir: Path) -> None:
    result = incidents(data_dir, "validate")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("step", APPROVE_STEPS)
def test_approve_killed_after_each_step_is_finished_once_by_running_it_again(
    data_dir: Path, step: str
) -> None:
    draft_id = queue_one(data_dir)
    killed = incidents(data_dir, "review", "approve", draft_id, "--reviewer", "alice", fault=f"after:{step}")
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    again = incidents(data_dir, "review", "approve", draft_id, "--reviewer", "alice")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == f"approved {draft_id} as IL-0001"
    assert "Traceback" not in again.stderr
    if step != "reserved":  # killed before the intent: nothing to finish, the approval starts afresh
        assert f"note: finished an interrupted approval of {draft_id} as IL-0001 by alice" in again.stderr

    assert record_files(data_dir) == ["IL-0001.json"]
    approvals = [e for e in audit_lines(data_dir) if e["action"] == "approved"]
    assert len(approvals) == 1 and approvals[0]["record_id"] == "IL-0001" and approvals[0]["version"] == 2
    draft = QueueStore(data_dir / "records" / "queue").get(draft_id)
    assert draft.status == "approved" and draft.version == 2 and len(draft.history) == 2
    record = json.loads((data_dir / "records" / "IL-0001.json").read_text())
    assert record["sources"][0]["draft"] == draft_id
    assert leftovers(data_dir) == []
    assert_validate_clean(data_dir)


@pytest.mark.parametrize("step", REJECT_STEPS)
def test_reject_killed_after_each_step_is_finished_once(data_dir: Path, step: str) -> None:
    draft_id = queue_one(data_dir)
    args = ("review", "reject", draft_id, "--reviewer", "bob", "--reason", "a press release")
    assert incidents(data_dir, *args, fault=f"after:{step}").returncode == -signal.SIGKILL
    again = incidents(data_dir, *args)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == f"rejected {draft_id}"
    rejections = [e for e in audit_lines(data_dir) if e["action"] == "rejected"]
    assert len(rejections) == 1 and rejections[0]["reason"] == "a press release"
    draft = QueueStore(data_dir / "records" / "queue").get(draft_id)
    assert draft.status == "rejected" and draft.version == 2
    assert leftovers(data_dir) == [] and record_files(data_dir) == []
    assert_validate_clean(data_dir)


def test_any_command_finishes_an_interrupted_approval(data_dir: Path) -> None:
    draft_id = queue_one(data_dir)
    other = queue_one(data_dir, 8)
    killed = incidents(data_dir, "review", "approve", draft_id, "--reviewer", "alice", fault="after:record")
    assert killed.returncode == -signal.SIGKILL
    # An orphan record and a pending draft: before the journal, a retry published it twice.
    assert record_files(data_dir) == ["IL-0001.json"]
    listing = incidents(data_dir, "review", "list", "--status", "pending")
    assert listing.returncode == 0, listing.stderr
    assert "finished an interrupted approval" in listing.stderr
    assert draft_id not in listing.stdout and other in listing.stdout
    retried = incidents(data_dir, "review", "approve", draft_id, "--reviewer", "carol")
    assert retried.returncode == 1 and "already approved as IL-0001" in retried.stderr
    assert record_files(data_dir) == ["IL-0001.json"]
    assert_validate_clean(data_dir)


def test_a_kill_in_the_middle_of_the_audit_line_leaves_no_torn_line(data_dir: Path) -> None:
    first, second = queue_one(data_dir, 1), queue_one(data_dir, 2)
    assert incidents(data_dir, "review", "approve", first, "--reviewer", "alice").returncode == 0
    torn = incidents(data_dir, "review", "approve", second, "--reviewer", "alice", fault="torn:audit")
    assert torn.returncode == -signal.SIGKILL
    raw = (data_dir / "records" / "audit.jsonl").read_bytes()
    assert not raw.endswith(b"\n")  # the kill left half a line
    stats = incidents(data_dir, "review", "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["approved"] == 2  # finished first, then counted
    assert "moved aside to audit.jsonl.torn" in stats.stderr
    lines = audit_lines(data_dir)
    assert [e["record_id"] for e in lines] == ["IL-0001", "IL-0002"]
    assert (data_dir / "records" / "audit.jsonl.torn").is_file()
    assert_validate_clean(data_dir)


@pytest.mark.parametrize("step", ["intent", "record", "draft", "audit"])
def test_a_step_failing_as_on_a_full_disk_changes_nothing(data_dir: Path, step: str) -> None:
    draft_id = queue_one(data_dir)
    before = (data_dir / "records" / "queue" / f"{draft_id}.json").read_bytes()
    failed = incidents(data_dir, "review", "approve", draft_id, "--reviewer", "alice", fault=f"fail:{step}")
    assert failed.returncode == 1, failed.stderr
    assert failed.stderr.startswith("error: cannot write") and "full" in failed.stderr
    assert failed.stderr.count("\n") == 1 and "Traceback" not in failed.stderr
    assert record_files(data_dir) == [] and audit_lines(data_dir) == [] and leftovers(data_dir) == []
    assert (data_dir / "records" / "queue" / f"{draft_id}.json").read_bytes() == before
    retried = incidents(data_dir, "review", "approve", draft_id, "--reviewer", "alice")
    assert retried.returncode == 0 and retried.stdout.strip() == f"approved {draft_id} as IL-0001"
    assert len(audit_lines(data_dir)) == 1
    assert_validate_clean(data_dir)


def test_an_edit_killed_after_the_draft_is_saved_keeps_its_audit_line(data_dir: Path) -> None:
    draft_id = queue_one(data_dir)
    code = (
        "import sys; from pathlib import Path; from flows.review import Reviews; "
        "from flows.settings import Settings; "
        "Reviews(Settings(data_dir=Path(sys.argv[1]))).save_edits(sys.argv[2], reviewer='dana', "
        "edits={'root_cause': 'expired-certificate'}, expected_version=1)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("INCIDENTS_")}
    killed = subprocess.run(
        [sys.executable, "-c", code, str(data_dir), draft_id],
        env=env | {"INCIDENTS_FAULT": "after:draft"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert audit_lines(data_dir) == []  # the draft is saved, its audit line not yet written
    reviews = Reviews(Settings(data_dir=data_dir))
    assert [n.finished for n in reviews.notes] == [True]
    edits = audit_lines(data_dir)
    assert [e["action"] for e in edits] == ["edited"] and edits[0]["by"] == "dana"
    assert reviews.queue.get(draft_id).record.root_cause == "expired-certificate"
    assert_validate_clean(data_dir)


# A real full disk ------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MiB tmpfs, mounted for the test (root only)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a real full disk needs a small tmpfs, and mounting one needs root; not root here")
    where = tmp_path / "small"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(where)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (a container without the right): {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(folder: Path, leave: int) -> Path:
    """Fill the file system of `folder` until about `leave` bytes are free."""
    filler = folder / "filler"
    free = shutil.disk_usage(folder).free
    with open(filler, "wb") as handle:
        try:
            handle.write(b"\0" * max(0, free - leave))
            handle.flush()
            os.fsync(handle.fileno())
        except OSError:
            pass
    return filler


@pytest.mark.parametrize("leave", [0, 4096, 8192, 12288, 16384, 24576, 32768])
def test_a_real_full_disk_never_makes_an_orphan_record(small_disk: Path, leave: int) -> None:
    data_dir = small_disk / "data"
    data_dir.mkdir()
    draft_id = queue_one(data_dir)
    (data_dir / "records" / "audit.jsonl").write_text("")
    filler = fill(small_disk, leave)
    first = incidents(data_dir, "review", "approve", draft_id, "--reviewer", "alice")
    assert "Traceback" not in first.stderr
    if first.returncode == 0:
        assert first.stdout.strip() == f"approved {draft_id} as IL-0001"
    else:
        assert first.returncode == 1 and first.stderr.startswith("error: ") and "full" in first.stderr, (
            first.stderr
        )
        assert first.stderr.strip().count("\n") <= 1 or "note:" in first.stderr
    # The disk stays full: a listing still works, says what it could not finish, never crashes.
    listing = incidents(data_dir, "review", "list")
    assert listing.returncode == 0 and "Traceback" not in listing.stderr, listing.stderr
    filler.unlink()
    again = incidents(data_dir, "review", "approve", draft_id, "--reviewer", "alice")
    assert again.returncode in (0, 1) and "Traceback" not in again.stderr
    if again.returncode == 1:  # the first one had succeeded
        assert first.returncode == 0 and "already approved as IL-0001" in again.stderr
    assert record_files(data_dir) == ["IL-0001.json"]
    assert [e["record_id"] for e in audit_lines(data_dir)] == ["IL-0001"]
    assert leftovers(data_dir) == []
    assert_validate_clean(data_dir)
