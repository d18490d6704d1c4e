"""The review pages' lifecycle pieces: a changed draft's diff against its record, "add as a source
of IL-NNNN", and "Correct this record"."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from flows.lifecycle import mark_gone
from flows.review import Reviews
from flows.settings import Settings
from flows.store.queue import QueueStore
from flows.web.app import create_app
from schema.draft import Draft
from tests.flows.factories import make_draft

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
ALICE = {"X-Reviewer": "alice"}


def _with(draft: Draft, **fields: object) -> Draft:
    return draft.model_copy(update={"record": draft.record.model_copy(update=fields)})


@pytest.fixture
def app(data_dir: Path) -> Iterator[tuple[TestClient, Settings]]:
    settings = Settings(data_dir=data_dir)
    with TestClient(create_app(settings), base_url="http://127.0.0.1", headers=ALICE) as client:
        client.cookies.set("incidents_reviewer", "alice")  # the pages' decisions take this browser's name
        yield client, settings


def test_add_as_a_source_and_correct_this_record(app, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    client, settings = app
    queue = QueueStore(settings.queue_dir)
    first = _with(make_draft(1), components=["dns"])
    queue.add(first)
    record = Reviews(settings).approve(first.draft_id, reviewer="alice")
    second = _with(make_draft(2, title="DNS follow-up"), components=["dns"], date="2026-03-13")
    queue.add(second)

    page = client.get(f"/drafts/{second.draft_id}").text
    assert f"Add as a source of {record.id}" in page and "shared components: dns" in page
    token = CSRF.search(page).group(1)  # type: ignore[union-attr]
    added = client.post(
        f"/drafts/{second.draft_id}/add-source", data={"csrf": token, "version": "1", "record_id": record.id}
    )
    assert added.status_code == 200 and f"as another source of {record.id}" in added.text, added.text
    saved = json.loads((data_dir / "records" / f"{record.id}.json").read_text())
    assert [s["url"] for s in saved["sources"]] == [first.source.url, second.source.url]
    assert queue.get(second.draft_id).status == "approved"

    shown = client.get(f"/records/{record.id}").text
    assert "Correct this record" in shown and '{"root_cause": null}' in shown.replace("&#34;", '"')
    edits = json.dumps({"summary": {"en": "Corrected."}, "components": None})
    assert 'id="correct-comment" name="comment"' in shown
    fixed = client.post(
        f"/records/{record.id}/correct", data={"csrf": token, "edits": edits, "comment": "summary was wrong"}
    )
    assert fixed.status_code == 200 and f"Corrected {record.id}: a new version" in fixed.text
    audit = (data_dir / "records" / "audit.jsonl").read_text().splitlines()
    assert json.loads(audit[-1])["comment"] == "summary was wrong"
    saved = json.loads((data_dir / "records" / f"{record.id}.json").read_text())
    assert saved["summary"] == {"en": "Corrected."} and saved["components"] == []
    assert (data_dir / "records" / "history" / record.id / "2.json").exists()
    same = client.post(f"/records/{record.id}/correct", data={"csrf": token, "edits": edits})
    assert same.status_code == 409 and "change nothing" in same.text
    bad = client.post(f"/records/{record.id}/correct", data={"csrf": token, "edits": "{nope"})
    assert bad.status_code == 422 and "not valid JSON" in bad.text

    assert "Sources gone" not in client.get(f"/records/{record.id}").text
    assert mark_gone(settings, second.source.url, "HTTP 410 Gone") == record.id
    shown = client.get(f"/records/{record.id}").text
    assert "Sources gone" in shown and "HTTP 410 Gone" in shown and second.source.url in shown


def test_a_changed_draft_shows_its_diff_against_the_record(app, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    client, settings = app
    queue = QueueStore(settings.queue_dir)
    first = make_draft(3)
    queue.add(first)
    record = Reviews(settings).approve(first.draft_id, reviewer="alice", edits={"title": {"en": "Edited"}})
    changed = make_draft(3, title="API outage, updated").model_copy(
        update={
            "draft_id": "d-" + "a" * 16,
            "supersedes": record.id,
            "changes": [
                {
                    "field": "title",
                    "action": "kept",
                    "from": {"en": "Edited"},
                    "to": {"en": "Edited"},
                    "source": {"en": "API outage, updated"},
                },
                {
                    "field": "summary",
                    "action": "proposed",
                    "from": {"en": "old"},
                    "to": {"en": "new words"},
                    "source": {"en": "new words"},
                },
            ],
        }
    )
    queue.add(changed)
    page = client.get(f"/drafts/{changed.draft_id}").text
    assert f"Approving updates {record.id}" in page
    row = page.split('class="change-kept"')[1].split("</tr>")[0]
    assert "<code>title</code>" in row and "API outage, updated" in row
    assert 'class="change-proposed"' in page and "new words" in page
    assert "Add as a source" not in page  # a changed draft updates its record; it is no new write-up
