"""A truncated or garbage draft, record or audit line is named in one line, never a crash or a
silence, and the other files keep working: `review list|show|stats`, `validate`, the web queue."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from flows.settings import Settings
from flows.store.queue import QueueStore
from flows.web.app import create_app
from tests.cli import run
from tests.conftest import DATA
from tests.flows.factories import make_draft


@pytest.fixture
def queue(data_dir: Path) -> tuple[list[str], Path]:
    """Three drafts, the middle one's file cut in half as a full disk or a bad copy leaves it."""
    store = QueueStore(Settings(data_dir=data_dir).queue_dir)
    drafts = [make_draft(n) for n in (1, 2, 3)]
    for draft in drafts:
        store.add(draft)
    damaged = store.path_for(drafts[1].draft_id)
    damaged.write_bytes(damaged.read_bytes()[:200])
    return [d.draft_id for d in drafts], damaged


def test_review_list_shows_the_others_and_names_the_damaged_draft(capsys, queue) -> None:
    ids, damaged = queue
    result = run(capsys, "review", "list")
    assert result.code == 0
    assert ids[0] in result.out and ids[2] in result.out and ids[1] not in result.out
    assert result.err == f"1 draft cannot be read: {damaged} (`incidents validate` says why)\n"
    as_json = run(capsys, "review", "list", "--json")
    assert [row["draft_id"] for row in json.loads(as_json.out)] == [ids[0], ids[2]]


def test_review_show_of_a_damaged_draft_is_one_line(capsys, queue) -> None:
    ids, damaged = queue
    result = run(capsys, "review", "show", ids[1])
    assert result.code == 1 and result.err.count("\n") == 1
    assert result.err.startswith(f"error: {damaged}: (file): not JSON: ")
    assert "restore it from a backup or move it out of the data directory" in result.err
    assert run(capsys, "review", "show", ids[0]).code == 0


def test_review_stats_counts_the_rest_and_names_what_it_skipped(capsys, data_dir: Path, queue) -> None:
    ids, damaged = queue
    assert run(capsys, "review", "approve", ids[0], "--reviewer", "alice").code == 0
    with open(data_dir / "records" / "audit.jsonl", "a", encoding="utf-8") as log:
        log.write('{"garbage\n[]\n')
    result = run(capsys, "review", "stats", "--json")
    assert result.code == 0, result.err
    figures = json.loads(result.out)
    assert figures["approved"] == 1 and figures["queue"] == {"pending": 1, "approved": 1, "rejected": 0}
    assert figures["unreadable"]["drafts"] == [str(damaged)]
    audit = data_dir / "records" / "audit.jsonl"
    assert figures["unreadable"]["audit_lines"] == [
        f"{audit} line 2: not JSON (Unterminated string starting at); skipped",
        f"{audit} line 3: not a JSON object; skipped",
    ]
    assert f"{audit} line 2: not JSON" in result.err and "1 draft cannot be read" in result.err
    text = run(capsys, "review", "stats")
    assert text.code == 0 and "decisions 1: approved 1" in text.out


def test_validate_names_damaged_drafts_records_and_audit_lines(capsys, data_dir: Path, queue) -> None:
    ids, damaged = queue
    assert run(capsys, "review", "approve", ids[0], "--reviewer", "alice").code == 0
    records = data_dir / "records"
    (records / "IL-0002.json").write_text("\x00\x01garbage")
    with open(records / "audit.jsonl", "a", encoding="utf-8") as log:
        log.write("not json\n")
    result = run(capsys, "validate")
    assert result.code == 1
    lines = result.err.splitlines()
    assert f"{records / 'IL-0002.json'}: (file): not JSON: Expecting value at line 1" in lines
    assert any(line.startswith(f"{damaged}: (file): not JSON: ") for line in lines)
    assert f"{records / 'audit.jsonl'}: line 2: not JSON (Expecting value)" in lines
    assert "1 of 2 file(s) invalid" in lines
    assert "2 problem(s) in the data directory besides the records" in lines


def test_the_web_queue_says_which_draft_cannot_be_read(data_dir: Path, queue) -> None:
    ids, damaged = queue
    (data_dir / "records").mkdir(exist_ok=True)
    shutil.copy(DATA / "records" / "IL-0042.json", data_dir / "records" / "IL-0042.json")
    (data_dir / "records" / "IL-0043.json").write_text('{"id": "IL-0043", "org"')
    with TestClient(create_app(Settings(data_dir=data_dir)), base_url="http://127.0.0.1") as client:
        page = client.get("/queue?status=all")
        assert page.status_code == 200
        assert "1 draft cannot be read: records/queue/" + damaged.name in page.text
        assert ids[0] in page.text and ids[2] in page.text  # the others are listed
        stats = client.get("/api/stats")
        assert stats.status_code == 200 and stats.json()["unreadable"]["drafts"] == [str(damaged)]
        broken = client.get("/records/IL-0043")
        assert broken.status_code < 500 and "IL-0043.json: (file): not JSON" in broken.text
        assert client.get("/records/IL-0042").status_code == 200
