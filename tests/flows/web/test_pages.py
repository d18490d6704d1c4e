"""The pages' own behaviour through TestClient: form decisions with related records and translations,
the source-changed diff, undo, records pages, the records-only app, and the form helpers."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from flows.settings import Settings
from flows.store.queue import QueueStore
from flows.web.app import create_app
from flows.web.forms import parse_duration, show_duration
from flows.web.server import running
from schema.draft import Draft
from tests.flows.web.conftest import by_lang

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
ALICE = {"X-Reviewer": "alice"}


def _form(client: TestClient, draft: Draft, query: str = "") -> tuple[str, dict[str, object]]:
    """The draft page's approve form as a browser would post it untouched: (page html, fields)."""
    html = client.get(f"/drafts/{draft.draft_id}{query}").text
    form = html.split('id="approve-form"')[1].split("</form>")[0]
    fields: dict[str, object] = {}
    for m in re.finditer(r"<(input|textarea|select)([^>]*)>(.*?)(?=<)", form, re.S):
        tag, attrs, inner = m.groups()
        name = re.search(r'name="([^"]+)"', attrs)
        if not name or re.search(r'type="(checkbox|radio)"', attrs):
            continue
        if tag == "textarea":
            value = inner
        elif tag == "select":
            chosen = re.search(r"<option([^>]*) selected>([^<]*)", form[m.start() :].split("</select>")[0])
            given = re.search(r'value="([^"]*)"', chosen.group(1)) if chosen else None
            value = given.group(1) if given else chosen.group(2) if chosen else ""
        else:
            v = re.search(r'value="([^"]*)"', attrs)
            value = v.group(1) if v else ""
        value = (
            value.replace("&amp;", "&")
            .replace("&#39;", "'")
            .replace("&quot;", '"')
            .replace("&lt;", "<")
            .replace("&gt;", ">")
        )
        key = name.group(1)
        if key in fields:
            existing = fields[key]
            fields[key] = [*existing, value] if isinstance(existing, list) else [existing, value]
        else:
            fields[key] = value
    return html, fields


def test_untouched_form_approves_with_no_changes(
    client: TestClient, drafts: list[Draft], data_dir: Path
) -> None:
    for draft in (by_lang(drafts, "ja"), by_lang(drafts, "ko")):
        _html, fields = _form(client, draft)
        r = client.post(f"/drafts/{draft.draft_id}/approve", data=fields, follow_redirects=False)
        assert r.status_code == 303, r.text[:2000]
    lines = [json.loads(x) for x in (data_dir / "records" / "audit.jsonl").read_text().splitlines()]
    assert [line["changes"] for line in lines] == [[], []]


def test_related_records_and_recurrence_offered_at_approval(
    client: TestClient, drafts: list[Draft], data_dir: Path
) -> None:
    first, second = drafts[5], drafts[0]  # Lumenworks config-change/database; then another draft
    r = client.post(f"/api/drafts/{first.draft_id}/approve", json={"version": 1}, headers=ALICE)
    assert r.json()["record_id"] == "IL-0001"
    # The second draft, edited to the same organisation and a shared component, is offered IL-0001.
    html, fields = _form(client, second)
    fields |= {"org": "Lumenworks", "components": ["database"]}
    page = client.post(f"/drafts/{second.draft_id}/approve", data=fields | {"root_cause": "nonsense-cause"})
    assert page.status_code == 422 and "is not a term of the root_causes vocabulary" in page.text
    assert "IL-0001" in page.text and "same root cause: config-change" in page.text
    assert "shared components: database" in page.text and "same organisation: Lumenworks" in page.text
    assert 'name="recurrence_of" value="IL-0001"' in page.text
    assert '<option value="Lumenworks">' in html  # org suggestions from records/
    ok = client.post(
        f"/drafts/{second.draft_id}/approve",
        data=fields | {"related": "IL-0001", "recurrence_of": "IL-0001"},
        follow_redirects=False,
    )
    assert ok.status_code == 303
    record = json.loads((data_dir / "records" / "IL-0002.json").read_text())
    assert record["related"] == ["IL-0001"] and record["recurrence_of"] == "IL-0001"
    assert record["org"] == "Lumenworks" and record["org_slug"] == "lumenworks"
    page = client.get("/records/IL-0001").text
    assert "Related incidents" in page and "Same root cause: config-change" in page and "IL-0002" in page


def test_a_translation_can_be_added(client: TestClient, drafts: list[Draft], data_dir: Path) -> None:
    korean = by_lang(drafts, "ko")
    html, fields = _form(client, korean, "?add=en")
    assert 'name="title.en"' in html and 'name="title.ko"' in html
    fields["title.en"] = "Database outage: slow failover"
    ok = client.post(f"/drafts/{korean.draft_id}/approve", data=fields, follow_redirects=False)
    assert ok.status_code == 303
    record = json.loads((data_dir / "records" / "IL-0001.json").read_text())
    assert record["title"] == {"ko": korean.record.title["ko"], "en": "Database outage: slow failover"}
    assert "?add=%3Cscript%3E" not in client.get(f"/drafts/{drafts[1].draft_id}?add=<script>").text
    assert 'name="title.&lt;script&gt;"' not in client.get(f"/drafts/{drafts[1].draft_id}?add=<script>").text


def test_source_changed_shows_the_field_diff(client: TestClient, drafts: list[Draft], data_dir: Path) -> None:
    queue = QueueStore(data_dir / "records" / "queue")
    draft = drafts[4]
    changed = draft.model_copy(
        update={
            "supersedes": "IL-0042",
            "changes": [{"field": "impact.users", "from": "some users", "to": "<b>all</b> users"}],
        }
    )
    queue.path_for(draft.draft_id).write_text(changed.model_dump_json(indent=2))
    page = client.get(f"/drafts/{draft.draft_id}").text
    assert "The source changed since IL-0042" in page
    assert "<code>impact.users</code>" in page and "&lt;b&gt;all&lt;/b&gt; users" in page


def test_undo_a_rejection(client: TestClient, drafts: list[Draft], data_dir: Path) -> None:
    draft = drafts[0]
    html, _ = _form(client, draft)
    token = CSRF.search(html).group(1)  # type: ignore[union-attr]
    r = client.post(
        f"/drafts/{draft.draft_id}/reject",
        data={"csrf": token, "version": "1", "code": "other", "reason": "oops"},
    )
    assert r.status_code == 200 and f"Undo the rejection of {draft.draft_id}" in r.text
    undo = re.search(r'id="undo-form".*?name="version" value="(\d+)"', r.text, re.S)
    assert undo and undo.group(1) == "2"
    back = client.post(
        f"/drafts/{draft.draft_id}/reopen", data={"csrf": token, "version": "2", "reason": "undo"}
    )
    assert back.status_code == 200 and "reopened" in back.text
    assert QueueStore(data_dir / "records" / "queue").get(draft.draft_id).status == "pending"


def test_records_pages_and_filters(client: TestClient, drafts: list[Draft]) -> None:
    for draft, edits in ((drafts[3], {}), (drafts[4], {"root_cause": "software-bug"})):
        client.post(
            f"/api/drafts/{draft.draft_id}/approve", json={"version": 1, "edits": edits}, headers=ALICE
        )
    listing = client.get("/records").text
    assert "IL-0001" in listing and "IL-0002" in listing
    only = client.get("/records", params={"root_cause": "software-bug"}).text
    assert "IL-0002" in only and "/records/IL-0001" not in only
    page = client.get("/records/IL-0001").text
    assert "Post-mortem: expired certificate broke mobile logins" in page
    assert "Expired certificate" in page and "Reviewed by alice" in page
    assert "인증서 만료" not in page  # an English record: its terms in English (a Korean one adds Korean)


def test_the_records_only_app_has_no_queue(settings: Settings, drafts: list[Draft]) -> None:
    with TestClient(create_app(settings, review=False), base_url="http://127.0.0.1") as c:
        assert c.get("/queue").status_code == 404
        assert c.get("/api/drafts").status_code == 404
        assert c.post(
            f"/api/drafts/{drafts[0].draft_id}/approve", json={"version": 1}, headers=ALICE
        ).status_code in (404, 405)
        assert c.get("/records").status_code == 200 and c.get("/api/records").json()["total"] == 0
        assert c.get("/", follow_redirects=False).headers["location"] == "/records"


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("2h 27m", "PT2H27M"),
        ("1d 4h", "P1DT4H"),
        ("45m", "PT45M"),
        ("90s", "PT90S"),
        ("PT7H", "PT7H"),
        ("3H 5M", "PT3H5M"),
        ("p2dt3h", "P2DT3H"),
        ("P1W", "P1W"),  # any duration the record schema takes
        ("", None),
    ],
)
def test_durations_typed_and_stored(typed: str, stored: str | None) -> None:
    assert parse_duration(typed) == stored
    if stored:
        assert parse_duration(show_duration(stored)) == stored


@pytest.mark.parametrize("typed", ["soon", "2 hours", "1.5h", "P", "PT", "P1H", "PT1D", "2h tomorrow"])
def test_durations_that_are_not(typed: str) -> None:
    with pytest.raises(ValueError, match="duration|whole"):
        parse_duration(typed)


def test_a_draft_whose_snapshot_is_not_in_raw_still_opens(client: TestClient, data_dir: Path) -> None:
    from tests.flows.factories import make_draft

    draft = make_draft(9, title="Queue outage")
    QueueStore(data_dir / "records" / "queue").add(draft)
    page = client.get(f"/drafts/{draft.draft_id}")
    assert page.status_code == 200
    assert "cannot be read from raw/" in page.text and "Queue outage" in page.text
    assert "not found in the archived text" in page.text  # its quote is shown, not clickable
    assert client.get(f"/drafts/{draft.draft_id}/snapshot").status_code == 400


def test_stats_count_edited_fields_per_drafter(client: TestClient, drafts: list[Draft]) -> None:
    edits = [{"root_cause": "capacity"}, {"root_cause": "capacity", "severity": "sev2"}, {}]
    for draft, edit in zip(drafts[:3], edits, strict=True):
        client.post(
            f"/api/drafts/{draft.draft_id}/approve", json={"version": 1, "edits": edit}, headers=ALICE
        )
    (drafter,) = client.get("/api/stats").json()["drafters"].items()
    assert drafter[0] == drafts[0].source.drafter
    assert drafter[1] == {
        "approved": 3,
        "approved_with_edits": 2,
        "most_edited_fields": {"root_cause": 2, "severity": 1},
    }


def test_sources_and_typed_related_records(client: TestClient, drafts: list[Draft], data_dir: Path) -> None:
    client.post(f"/api/drafts/{drafts[1].draft_id}/approve", json={"version": 1}, headers=ALICE)
    draft = drafts[0]
    _html, fields = _form(client, draft)
    bad = client.post(f"/drafts/{draft.draft_id}/approve", data=fields | {"sources.0.kind": "tabloid"})
    assert bad.status_code == 422 and "sources.0.kind" in bad.text and "tabloid" in bad.text
    bad = client.post(f"/drafts/{draft.draft_id}/approve", data=fields | {"related_more": "IL-1, ../x"})
    assert bad.status_code == 422 and "related.0" in bad.text
    ok = client.post(
        f"/drafts/{draft.draft_id}/approve",
        data=fields
        | {
            "sources.0.kind": "status-page",
            "sources.0.license": "CC-BY-4.0",
            "related_more": "IL-0001",
            "recurrence_of_more": "IL-0001",
        },
        follow_redirects=False,
    )
    assert ok.status_code == 303
    record = json.loads((data_dir / "records" / "IL-0002.json").read_text())
    assert record["sources"][0]["kind"] == "status-page" and record["sources"][0]["license"] == "CC-BY-4.0"
    assert record["related"] == ["IL-0001"] and record["recurrence_of"] == "IL-0001"


def test_save_edits_from_the_page_keeps_the_draft_pending(client: TestClient, drafts: list[Draft]) -> None:
    draft = by_lang(drafts, "ja")
    _html, fields = _form(client, draft)
    r = client.post(f"/drafts/{draft.draft_id}/save", data=fields | {"impact.users": "約3割のお客様"})
    assert r.status_code == 200 and "Saved your edits to" in r.text and "version 2" in r.text
    assert 'value="約3割のお客様"' in r.text
    again = client.post(
        f"/drafts/{draft.draft_id}/save", data=fields | {"impact.users": "all of them"}
    )  # version 1: stale
    assert again.status_code == 409 and "changed this draft while you had it open" in again.text
    assert 'value="all of them"' in again.text  # the losing reviewer's edit is kept in the form


@pytest.mark.parametrize("action", ["save", "approve"])
def test_save_and_approve_show_the_forms_problems_and_write_nothing(
    client: TestClient, drafts: list[Draft], data_dir: Path, action: str
) -> None:
    draft = by_lang(drafts, "ja")
    _html, fields = _form(client, draft)
    queued = (data_dir / "records" / "queue" / f"{draft.draft_id}.json").read_bytes()
    # a problem the form finds (a duration), then one the server's validation finds (a term)
    for bad, where in (
        ({"timeline.detected_after": "soon"}, "is not a duration"),
        ({"root_cause": "nonsense-cause"}, "is not a term of the root_causes vocabulary"),
    ):
        page = client.post(f"/drafts/{draft.draft_id}/{action}", data=fields | bad)
        assert page.status_code == 422 and where in page.text
        assert "Nothing was written: fix the marked fields." in page.text
    assert (data_dir / "records" / "queue" / f"{draft.draft_id}.json").read_bytes() == queued
    assert not list((data_dir / "records").glob("IL-*.json"))


def test_the_queue_pages_through_many_drafts(client: TestClient, drafts: list[Draft], data_dir: Path) -> None:
    from flows.web import pages

    old, pages.PAGE_SIZE = pages.PAGE_SIZE, 4
    try:
        first = client.get("/queue").text
        assert "Drafts 1–4 of 11" in first and "page=2" in first and first.count('name="ids"') == 4
        last = client.get("/queue?page=3").text
        assert "Drafts 9–11 of 11" in last and "page=2" in last and last.count('name="ids"') == 3
        assert "Drafts 9–11 of 11" in client.get("/queue?page=99").text
        assert "Drafts 1–4 of 11" in client.get("/queue?page=x").text
    finally:
        pages.PAGE_SIZE = old


def test_a_decision_waiting_for_its_draft_does_not_hold_up_other_reviewers(
    settings: Settings, drafts: list[Draft], data_dir: Path
) -> None:
    """A decision reads, locks and fsyncs files in the thread pool: while one waits for its draft's
    lock, the server still answers everybody else (on the event loop it would hang them all)."""
    draft = drafts[0]
    replies: list[httpx.Response] = []
    with running(create_app(settings)) as base, httpx.Client(base_url=base, timeout=30) as alice:
        match = CSRF.search(alice.get(f"/drafts/{draft.draft_id}").text)
        assert match
        form = {"csrf": match.group(1), "version": "1", "reason": "a drill", "code": "other"}
        form["reviewer"] = "alice"
        post = threading.Thread(
            target=lambda: replies.append(alice.post(f"/drafts/{draft.draft_id}/reject", data=form))
        )
        with QueueStore(data_dir / "records" / "queue").lock_for(draft.draft_id):
            post.start()
            time.sleep(0.5)  # the rejection now waits for the lock this test holds
            with httpx.Client(base_url=base, timeout=5) as bob:
                assert bob.get("/queue").status_code == 200
            assert post.is_alive() and not replies
        post.join(timeout=20)
    assert [r.status_code for r in replies] == [303]  # on to the next draft
    assert QueueStore(data_dir / "records" / "queue").get(draft.draft_id).status == "rejected"
