from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flows.settings import Settings
from flows.store.queue import QueueStore
from tests.cli import run
from tests.flows.factories import make_draft

SEED = "000_86759986fefc91a4.txt"


@pytest.fixture
def queued(data_dir: Path) -> str:
    draft = make_draft(7)
    QueueStore(Settings(data_dir=data_dir).queue_dir).add(draft)
    return draft.draft_id


def _audit(data_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (data_dir / "records" / "audit.jsonl").read_text().splitlines()]


def test_approve_writes_record_marks_draft_and_audits(capsys, data_dir: Path, queued: str) -> None:
    edits = data_dir / "edits.json"
    edits.write_text(json.dumps({"root_cause": "expired-certificate", "impact": {"users": "3,400 accounts"}}))
    result = run(capsys, "review", "approve", queued, "--reviewer", "alice", "--edits", str(edits))
    assert result.code == 0, result.err
    assert result.out.strip() == f"approved {queued} as IL-0001"
    record = json.loads((data_dir / "records" / "IL-0001.json").read_text())
    assert record["review"]["written_by"] == "session"
    assert record["review"]["reviewed_by"] == "alice"
    assert record["review"]["reviewed_at"] == record["updated_at"]
    assert record["root_cause"] == "expired-certificate"
    assert record["impact"] == {"scope": "unknown", "users": "3,400 accounts", "region": "unknown"}
    assert record["url"] is None  # no library base URL set: no address of someone else's site

    draft = QueueStore(data_dir / "records" / "queue").get(queued)
    assert draft.status == "approved" and draft.version == 2
    assert draft.history[-1].action == "approved" and draft.history[-1].record_id == "IL-0001"
    (line,) = _audit(data_dir)
    assert line["action"] == "approved" and line["by"] == "alice" and line["record_id"] == "IL-0001"
    changed = {c["field"]: (c["from"], c["to"]) for c in line["changes"]}
    assert changed["root_cause"] == ("unknown", "expired-certificate")
    assert changed["impact.users"] == ("unknown", "3,400 accounts")
    assert "review.reviewed_by" not in changed
    assert run(capsys, "validate").code == 0


def test_approval_after_the_seed_gets_the_next_id_and_leaves_it_alone(
    capsys, data_dir: Path, queued: str, shared: Path
) -> None:
    records = data_dir / "records"
    shutil.copy(shared / "seeds" / SEED, records / "IL-0171.json")
    before = (records / "IL-0171.json").read_bytes()
    result = run(capsys, "review", "approve", queued, "--reviewer", "bob")
    assert result.code == 0, result.err
    assert (records / "IL-0172.json").exists()
    assert (records / "IL-0171.json").read_bytes() == before
    assert run(capsys, "validate").code == 0


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        ({"root_cause": "gremlins", "severity": "sev9"}, "root_cause: 'gremlins' is not a term"),
        ({"id": "IL-0005"}, "edits may not set id"),
        (["not", "an", "object"], "edits must be a JSON object"),
        ({"org": None}, "needs org"),
    ],
)
def test_invalid_edits_change_nothing(
    capsys, data_dir: Path, queued: str, edits: object, message: str
) -> None:
    path = data_dir / "edits.json"
    path.write_text(json.dumps(edits))
    queue_file = data_dir / "records" / "queue" / f"{queued}.json"
    before = queue_file.read_bytes()
    result = run(capsys, "review", "approve", queued, "--reviewer", "alice", "--edits", str(path))
    assert result.code == 1
    assert message in result.err
    assert result.err.count("\n") == 1
    assert queue_file.read_bytes() == before
    assert not list((data_dir / "records").glob("IL-*.json"))
    assert not (data_dir / "records" / "audit.jsonl").exists()


def test_severity_error_names_both_fields(capsys, data_dir: Path, queued: str) -> None:
    path = data_dir / "edits.json"
    path.write_text(json.dumps({"root_cause": "gremlins", "severity": "sev9"}))
    result = run(capsys, "review", "approve", queued, "--reviewer", "a", "--edits", str(path))
    assert "root_cause:" in result.err and "severity:" in result.err


def test_malformed_edits_file(capsys, data_dir: Path, queued: str) -> None:
    path = data_dir / "edits.json"
    path.write_text("{not json")
    result = run(capsys, "review", "approve", queued, "--reviewer", "a", "--edits", str(path))
    assert result.code == 1 and "not valid JSON" in result.err
    missing = run(
        capsys, "review", "approve", queued, "--reviewer", "a", "--edits", str(data_dir / "nope.json")
    )
    assert missing.code == 1 and "does not exist" in missing.err


def test_reject_keeps_draft_and_reason(capsys, data_dir: Path, queued: str) -> None:
    result = run(capsys, "review", "reject", queued, "--reviewer", "carol", "--reason", "not a postmortem")
    assert result.code == 0, result.err
    draft = QueueStore(data_dir / "records" / "queue").get(queued)
    assert draft.status == "rejected"
    assert draft.history[-1].reason == "not a postmortem" and draft.history[-1].by == "carol"
    assert _audit(data_dir)[-1]["reason"] == "not a postmortem"
    again = run(capsys, "review", "approve", queued, "--reviewer", "carol")
    assert again.code == 1 and "it was rejected" in again.err


def test_approving_twice_or_unknown_id_is_one_line_error(capsys, data_dir: Path, queued: str) -> None:
    assert run(capsys, "review", "approve", queued, "--reviewer", "a").code == 0
    twice = run(capsys, "review", "approve", queued, "--reviewer", "a")
    assert twice.code == 1 and "already approved as IL-0001" in twice.err
    assert twice.err.count("\n") == 1
    unknown = run(capsys, "review", "approve", "d-0000000000000000", "--reviewer", "a")
    assert unknown.code == 1 and "no draft" in unknown.err
    assert sorted(p.name for p in (data_dir / "records").glob("IL-*.json")) == ["IL-0001.json"]


def test_list_and_show(capsys, data_dir: Path, queued: str) -> None:
    listed = run(capsys, "review", "list", "--status", "pending", "--json")
    assert listed.code == 0
    assert [row["draft_id"] for row in json.loads(listed.out)] == [queued]
    assert queued in run(capsys, "review", "list").out
    assert "no approved drafts" in run(capsys, "review", "list", "--status", "approved").out
    shown = run(capsys, "review", "show", queued[:10], "--json")
    assert json.loads(shown.out)["draft_id"] == queued
    assert run(capsys, "review", "list", "--status", "bogus").code == 2


def test_a_record_gets_a_url_only_under_the_library_base_url(
    capsys, data_dir: Path, queued: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INCIDENTS_LIBRARY_BASE_URL", "https://incidents.example.org/cases/")
    result = run(capsys, "review", "approve", queued, "--reviewer", "alice")
    assert result.code == 0, result.err
    record = json.loads((data_dir / "records" / "IL-0001.json").read_text())
    assert record["url"] == "https://incidents.example.org/cases/IL-0001"


def test_a_draft_of_a_local_file_needs_its_web_address_before_approval(capsys, data_dir: Path) -> None:
    draft = make_draft(9)
    local = "file:///tmp/saved/outage.html"
    source = draft.record.sources[0].model_copy(update={"url": local})
    draft = draft.model_copy(update={"record": draft.record.model_copy(update={"sources": [source]})})
    QueueStore(Settings(data_dir=data_dir).queue_dir).add(draft)
    result = run(capsys, "review", "approve", draft.draft_id, "--reviewer", "alice")
    assert result.code == 1 and "sources.0.url" in result.err and "not an http or https URL" in result.err
    assert not list((data_dir / "records").glob("IL-*.json"))  # nothing written, no id spent
    edits = data_dir / "edits.json"
    web = {"url": "https://engineering.larkspur.example/posts/9/", "kind": "blog"}
    edits.write_text(json.dumps({"sources": [web]}))
    result = run(capsys, "review", "approve", draft.draft_id, "--reviewer", "alice", "--edits", str(edits))
    assert result.code == 0, result.err
    assert run(capsys, "validate").code == 0
