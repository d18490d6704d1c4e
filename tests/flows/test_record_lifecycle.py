"""Corrections, several write-ups of one incident, and what `incidents validate` knows of them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flows.settings import Settings
from flows.store.queue import QueueStore
from schema.draft import Draft
from schema.record import SourceRef
from tests.cli import run
from tests.flows.factories import make_draft


def _queue(data_dir: Path, draft: Draft) -> str:
    QueueStore(Settings(data_dir=data_dir).queue_dir).add(draft)
    return draft.draft_id


def _with(draft: Draft, **fields: object) -> Draft:
    return draft.model_copy(update={"record": draft.record.model_copy(update=fields)})


def _approved(capsys: pytest.CaptureFixture[str], data_dir: Path, draft: Draft) -> str:
    result = run(capsys, "review", "approve", _queue(data_dir, draft), "--reviewer", "alice")
    assert result.code == 0, result.err
    return result.out.split()[-1]


def _edits(data_dir: Path, edits: object) -> str:
    path = data_dir / "edits.json"
    path.write_text(json.dumps(edits))
    return str(path)


def _audit(data_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (data_dir / "records" / "audit.jsonl").read_text().splitlines()]


def test_a_correction_clears_fields_and_keeps_the_earlier_version(capsys, data_dir: Path) -> None:
    draft = _with(make_draft(1), trigger={"en": "A wrong trigger."}, components=["dns"], root_cause="network")
    record_id = _approved(capsys, data_dir, draft)
    path = data_dir / "records" / f"{record_id}.json"
    before = json.loads(path.read_text())
    edits = {"trigger": None, "root_cause": None, "components": None, "summary": {"en": "Fixed summary."}}
    fixed = run(
        capsys, "review", "correct", record_id, "--reviewer", "bob", "--edits", _edits(data_dir, edits)
    )
    assert fixed.code == 0 and fixed.out.startswith(f"corrected {record_id}"), fixed.err
    after = json.loads(path.read_text())
    assert after["trigger"] == {} and after["components"] == [] and after["root_cause"] == "unknown"
    assert after["summary"] == {"en": "Fixed summary."} and after["review"]["reviewed_by"] == "bob"
    assert after["updated_at"] >= before["updated_at"]
    assert json.loads((data_dir / "records" / "history" / record_id / "1.json").read_text()) == before
    (line,) = [a for a in _audit(data_dir) if a["action"] == "corrected"]
    assert line["record_id"] == record_id and line["version"] == 2 and line["by"] == "bob"
    assert {c["field"] for c in line["changes"]} >= {"trigger.en", "root_cause", "components", "summary.en"}
    assert run(capsys, "validate").code == 0

    # an edit that changes nothing is reported, not silently accepted: {} or the value it has
    for same in ({"trigger": {}}, {"summary": {"en": "Fixed summary."}}, {"trigger": None}):
        again = run(
            capsys, "review", "correct", record_id, "--reviewer", "bob", "--edits", _edits(data_dir, same)
        )
        assert again.code == 1 and "change nothing" in again.err, (same, again.err)
    bad = run(
        capsys, "review", "correct", record_id, "--reviewer", "bob", "--edits", _edits(data_dir, {"nope": 1})
    )
    assert bad.code != 0 and "nope" in bad.err and "Traceback" not in bad.err
    missing = run(
        capsys, "review", "correct", "IL-0099", "--reviewer", "bob", "--edits", _edits(data_dir, {"org": "X"})
    )
    assert missing.code == 1 and "no record IL-0099" in missing.err
    assert sorted(p.name for p in (data_dir / "records" / "history" / record_id).iterdir()) == ["1.json"]
    helped = run(capsys, "review", "correct", "--help")
    assert '{"root_cause": null}' in helped.out and '{"summary": {"en":' in helped.out


def test_a_second_write_up_is_added_as_a_source(capsys, data_dir: Path) -> None:
    record_id = _approved(capsys, data_dir, _with(make_draft(1), components=["dns"]))
    # another post about the same incident: same organisation, a day later, a shared component
    second = _with(make_draft(2, title="DNS outage follow-up"), components=["dns"], date="2026-03-13")
    draft_id = _queue(data_dir, second)
    shown = run(capsys, "review", "show", draft_id)
    assert f"add as a source of {record_id}" in shown.out and "shared components: dns" in shown.out, shown.out
    added = run(capsys, "review", "approve", draft_id, "--reviewer", "bob", "--source-of", record_id)
    assert added.out.strip() == f"approved {draft_id} as a source of {record_id}", added.err
    records = sorted((data_dir / "records").glob("IL-*.json"))
    assert [p.stem for p in records] == [record_id]
    record = json.loads(records[0].read_text())
    assert [s["url"] for s in record["sources"]] == [make_draft(1).source.url, make_draft(2).source.url]
    assert record["title"] == {"en": "API outage"}  # the record keeps its own text
    (line,) = [a for a in _audit(data_dir) if a.get("source_of") == record_id]
    assert line["action"] == "approved" and line["draft_id"] == draft_id and line["record_version"] == 2
    assert line["evidence"]["summary"][0]["quote"] == "DNS outage follow-up number 2."
    assert QueueStore(data_dir / "records" / "queue").get(draft_id).status == "approved"
    assert all({"action", "at", "by", "version"} <= set(a) for a in _audit(data_dir))
    assert run(capsys, "validate").code == 0

    # a draft of a source a record already lists is not a new record
    copy = make_draft(2).model_copy(update={"draft_id": "d-" + "e" * 16})
    refused = run(capsys, "review", "approve", _queue(data_dir, copy), "--reviewer", "bob")
    assert refused.code == 1 and f"{record_id} already lists" in refused.err, refused.err


def test_a_later_incident_of_the_same_cause_is_a_recurrence_not_a_write_up(capsys, data_dir: Path) -> None:
    from flows.related import rank_related
    from flows.store.records import RecordStore

    first = _approved(capsys, data_dir, _with(make_draft(1), components=["dns"], root_cause="network"))
    later = _with(make_draft(3), components=["dns"], root_cause="network", date="2026-09-01").record
    same_time = _with(make_draft(4), components=["dns"], root_cause="network", date="2026-03-11").record
    records = [RecordStore(data_dir / "records").read(first)]
    assert rank_related(later, records)[0].may_recur
    assert not rank_related(same_time, records)[0].may_recur
    shown = run(
        capsys, "review", "show", _queue(data_dir, make_draft(3).model_copy(update={"record": later}))
    )
    assert "add as a source" not in shown.out


def test_validate_names_duplicate_sources_and_broken_histories(capsys, data_dir: Path) -> None:
    records = data_dir / "records"
    record_id = _approved(capsys, data_dir, make_draft(1))
    copy = json.loads((records / f"{record_id}.json").read_text()) | {"id": "IL-0002"}
    (records / "IL-0002.json").write_text(json.dumps(copy))
    result = run(capsys, "validate")
    assert result.code == 1
    assert "is also a source of IL-0002" in result.err and "is also a source of IL-0001" in result.err
    (records / "IL-0002.json").unlink()
    assert run(capsys, "validate").code == 0

    history = records / "history" / record_id
    history.mkdir(parents=True)
    shutil.copy(records / f"{record_id}.json", history / "2.json")
    broken = run(capsys, "validate")
    assert broken.code == 1 and "must run 1..n" in broken.err and "not newer" in broken.err, broken.err


def test_approve_clears_a_field_with_null(capsys, data_dir: Path) -> None:
    draft_id = _queue(
        data_dir, _with(make_draft(5), trigger={"en": "A wrong trigger."}, root_cause="network")
    )
    edits = _edits(data_dir, {"trigger": None, "root_cause": None})
    result = run(capsys, "review", "approve", draft_id, "--reviewer", "alice", "--edits", edits)
    assert result.code == 0, result.err
    record = json.loads((data_dir / "records" / "IL-0001.json").read_text())
    assert record["trigger"] == {} and record["root_cause"] == "unknown"
    (line,) = [a for a in _audit(data_dir) if a["action"] == "approved"]
    assert {c["field"] for c in line["changes"]} == {"trigger.en", "root_cause"}


def test_a_changed_write_up_added_as_a_source_updates_only_its_source(capsys, data_dir: Path) -> None:
    from flows.lifecycle import redraft
    from flows.review import Reviews

    settings = Settings(data_dir=data_dir)
    record_id = _approved(capsys, data_dir, _with(make_draft(1), components=["dns"]))
    second = _with(make_draft(2, title="Follow-up"), components=["dns"])
    Reviews(settings).approve(_queue(data_dir, second), reviewer="bob", source_of=record_id)
    earlier = QueueStore(settings.queue_dir).get(second.draft_id)
    url = second.source.url
    changed = _with(
        second,
        summary={"en": "The follow-up, rewritten."},
        sources=[SourceRef(url=url, archived="c-0000beef")],
    ).model_copy(update={"draft_id": "d-" + "b" * 16})
    draft, target = redraft(settings, earlier, changed)
    assert target == record_id and draft.supersedes == record_id
    assert [c["field"] for c in draft.changes] == ["sources"]
    assert draft.record.summary == {"en": "API outage number 1."}  # the record's own text stays
    assert [s.archived for s in draft.record.sources] == ["c-00000001", "c-0000beef"]
    Reviews(settings).approve(
        draft.draft_id if QueueStore(settings.queue_dir).add(draft) else "", reviewer="bob"
    )
    record = json.loads((data_dir / "records" / f"{record_id}.json").read_text())
    assert [s["archived"] for s in record["sources"]] == ["c-00000001", "c-0000beef"]
    assert record["title"] == {"en": "API outage"}
    assert run(capsys, "validate").code == 0


def test_validate_names_a_superseded_draft_that_was_approved(capsys, data_dir: Path) -> None:
    from flows.review import Reviews

    settings = Settings(data_dir=data_dir)
    draft_id = _queue(data_dir, make_draft(8))
    Reviews(settings).supersede(draft_id, newer="d-" + "c" * 16, by="incident-ingest")
    refused = run(capsys, "review", "approve", draft_id, "--reviewer", "alice")
    assert refused.code == 1 and "superseded by d-cccccccccccccccc" in refused.err
    # as if written by hand, or by an older version: the superseded draft approved anyway
    path = settings.queue_dir / f"{draft_id}.json"
    data = json.loads(path.read_text())
    data["history"].append({"at": "2026-03-13T10:00:00Z", "by": "mallory", "action": "approved"})
    path.write_text(json.dumps(data))
    result = run(capsys, "validate")
    assert result.code == 1 and f"draft {draft_id} was superseded and then approved" in result.err, result.err


def test_every_cli_decision_keeps_its_comment_in_the_audit_log(capsys, data_dir: Path) -> None:
    first = _queue(data_dir, make_draft(1))
    approved = run(capsys, "review", "approve", first, "--reviewer", "alice", "--comment", "clear case")
    assert approved.code == 0, approved.err
    record_id = approved.out.split()[-1]
    edits = _edits(data_dir, {"summary": {"en": "Better summary."}})
    fixed = run(
        capsys, "review", "correct", record_id, "--reviewer", "bob", "--edits", edits, "--comment", "typo"
    )
    assert fixed.code == 0, fixed.err
    second = _queue(data_dir, make_draft(2))
    rejected = run(
        capsys,
        "review",
        "reject",
        second,
        "--reviewer",
        "carol",
        "--reason",
        "dup",
        "--comment",
        "see IL-0001",
    )
    assert rejected.code == 0, rejected.err
    reopened = run(capsys, "review", "reopen", second, "--reviewer", "dan", "--comment", "not a dup")
    assert reopened.code == 0, reopened.err
    comments = {line["action"]: line.get("comment") for line in _audit(data_dir)}
    assert comments == {
        "approved": "clear case",
        "corrected": "typo",
        "rejected": "see IL-0001",
        "reopened": "not a dup",
    }
    # no comment given: no comment key (not an empty one)
    third = run(capsys, "review", "approve", second, "--reviewer", "erin")
    assert third.code == 0, third.err
    assert "comment" not in _audit(data_dir)[-1]
