"""Issue 37, the review page: who decides, status messages, CSRF 403, comments, conflicts kept,
bulk-rejection undo, the stats page (TestClient and real HTTP; the browser side is in
test_review_browser.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
from fastapi.testclient import TestClient

from flows.settings import Settings
from flows.store.queue import QueueStore
from flows.web.app import create_app
from flows.web.server import running
from schema.draft import Draft

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
WEB = Path(__file__).parents[3] / "flows" / "web"


def _audit(data_dir: Path) -> list[dict]:
    path = data_dir / "records" / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _csrf(client: TestClient, url: str) -> str:
    found = CSRF.search(client.get(url).text)
    assert found
    return found.group(1)


def test_a_fresh_browser_cannot_decide_without_giving_a_name(
    settings: Settings, drafts: list[Draft], data_dir: Path
) -> None:
    draft = drafts[0]
    url = f"/drafts/{draft.draft_id}/reject"
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as fresh:
        page = fresh.get(f"/drafts/{draft.draft_id}").text
        assert 'id="need-name"' in page and 'name="reviewer" value=""' in page  # the box is empty
        form = {"csrf": _csrf(fresh, f"/drafts/{draft.draft_id}"), "version": "1", "code": "other"}
        refused = fresh.post(url, data=form | {"reason": "junk"})
        assert refused.status_code == 400 and "say who you are" in refused.text
        assert _audit(data_dir) == []
        bad = fresh.post(url, data=form | {"reason": "junk", "reviewer": "<b>x</b>"})
        assert bad.status_code == 400 and "a reviewer name is" in bad.text
        # The name typed in the decision's own form decides, and is remembered for the next one.
        ok = fresh.post(url, data=form | {"reason": "junk", "reviewer": "Jin"}, follow_redirects=False)
        assert ok.status_code == 303 and fresh.cookies.get("incidents_reviewer") == "Jin"
        assert [e["by"] for e in _audit(data_dir)] == ["Jin"]
        approve = fresh.get(f"/drafts/{drafts[1].draft_id}").text
        assert 'id="need-name"' not in approve and 'value="Jin"' in approve


def test_an_approval_without_a_name_keeps_the_edits_and_marks_the_name_box(
    settings: Settings, drafts: list[Draft], data_dir: Path
) -> None:
    from tests.flows.web.test_pages import _form

    draft = drafts[2]
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as fresh:
        _html, fields = _form(fresh, draft)
        fields["impact.users"] = "half of them"
        page = fresh.post(f"/drafts/{draft.draft_id}/approve", data=fields)
        assert page.status_code == 422 and "say who you are" in page.text
        assert 'value="half of them"' in page.text and 'data-first-problem="in-reviewer"' in page.text
    assert _audit(data_dir) == []


def test_no_os_account_fallback_anywhere_in_the_web_app() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in WEB.rglob("*.py"))
    assert "getpass" not in source and "getuser" not in source and "USER" not in source


def test_sign_in_page_has_one_reviewer_box(data_dir: Path, drafts: list[Draft]) -> None:
    app = create_app(Settings(data_dir=data_dir, review_token="s3cret-token"))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        page = c.get("/login").text
        assert page.count('name="reviewer"') == 1 and 'class="whoami"' not in page
        token = _csrf(c, "/login")
        bad = c.post("/login", data={"csrf": token, "token": "s3cret-token", "reviewer": "<b>x</b>"})
        assert bad.status_code == 400
        ok = c.post(
            "/login",
            data={"csrf": token, "token": "s3cret-token", "reviewer": "dana", "next": "/queue"},
            follow_redirects=False,
        )
        assert ok.status_code == 303 and c.cookies.get("incidents_reviewer") == "dana"
        queue = c.get("/queue").text
        assert queue.count('name="reviewer"') == 1 and 'value="dana"' in queue  # the header's box


def test_csrf_failure_is_403(client: TestClient, drafts: list[Draft]) -> None:
    r = client.post(f"/drafts/{drafts[0].draft_id}/reject", data={"version": "1", "reason": "x"})
    assert r.status_code == 403 and "CSRF" in r.text
    assert client.post("/whoami", data={"reviewer": "x"}).status_code == 403


def test_api_checks_x_reviewer_like_the_form(settings: Settings, drafts: list[Draft], data_dir: Path) -> None:
    draft = drafts[0]
    with running(create_app(settings)) as base:
        url = f"{base}/api/drafts/{draft.draft_id}/reject"
        body = {"version": 1, "code": "other", "reason": "junk"}
        for name in ("<b>x</b>", "a" * 61, "bob; drop"):
            r = httpx.post(url, json=body, headers={"X-Reviewer": name})
            assert r.status_code == 400 and "a reviewer name is" in r.json()["error"], r.text
        assert _audit(data_dir) == []
        ok = httpx.post(url, json=body | {"comment": "a listing page"}, headers={"X-Reviewer": "O'Neil"})
        assert ok.status_code == 200
    (line,) = _audit(data_dir)
    assert line["by"] == "O'Neil" and line["comment"] == "a listing page"


def test_status_messages_come_only_from_server_codes(client: TestClient, drafts: list[Draft]) -> None:
    draft = drafts[0]
    page = client.get("/queue", params={"done": "Your account is locked: call +1 555 0100"}).text
    assert "account is locked" not in page and 'class="flash"' not in page
    page = client.get("/queue", params={"done": "rejected", "draft": "d-<b>x</b>"}).text
    assert 'class="flash"' not in page  # a code whose id is not an id: nothing
    page = client.get("/queue", params={"done": "rejected", "draft": draft.draft_id}).text
    assert f"Rejected {draft.draft_id}." in page
    page = client.get(
        "/queue", params={"done": "approved", "draft": draft.draft_id, "record": "IL-0042"}
    ).text
    assert 'href="/records/IL-0042"' in page


def test_comments_on_decisions_are_kept_in_the_audit_log(
    client: TestClient, drafts: list[Draft], data_dir: Path
) -> None:
    from tests.flows.web.test_pages import _form

    draft = drafts[1]
    _html, fields = _form(client, draft)
    r = client.post(
        f"/drafts/{draft.draft_id}/approve",
        data=fields | {"comment": "date from the status page"},
        follow_redirects=False,
    )
    assert r.status_code == 303
    other = drafts[2]
    token = _csrf(client, f"/drafts/{other.draft_id}")
    client.post(
        f"/drafts/{other.draft_id}/reject",
        data={"csrf": token, "version": "1", "code": "other", "reason": "junk", "comment": "see #12"},
    )
    third = drafts[3]
    client.post(  # no comment: no comment key
        f"/drafts/{third.draft_id}/reject",
        data={"csrf": token, "version": "1", "code": "other", "reason": "junk"},
    )
    comments = [(e["action"], e.get("comment")) for e in _audit(data_dir)]
    assert comments == [
        ("approved", "date from the status page"),
        ("rejected", "see #12"),
        ("rejected", None),
    ]
    assert "comment" not in _audit(data_dir)[2]


def test_a_stale_approval_keeps_the_edits_on_a_page_that_can_be_reloaded(
    client: TestClient, drafts: list[Draft], data_dir: Path
) -> None:
    from tests.flows.web.test_pages import _form

    draft = drafts[0]
    _html, fields = _form(client, draft)
    won = client.post(
        f"/api/drafts/{draft.draft_id}/approve", json={"version": 1}, headers={"X-Reviewer": "bob"}
    )
    assert won.status_code == 200
    lost = client.post(
        f"/drafts/{draft.draft_id}/approve",
        data=fields | {"title.en": "My better title", "comment": "mine"},
        follow_redirects=False,
    )
    assert lost.status_code == 303  # post/redirect/get: a reload does not post again
    where = lost.headers["location"]
    assert where.startswith(f"/drafts/{draft.draft_id}/conflict?kept=")
    page = client.get(where)
    assert page.status_code == 409
    assert "approved by bob" in page.text and 'href="/records/IL-0001"' in page.text
    assert f'href="/drafts/{draft.draft_id}"' in page.text
    assert "My better title" in page.text  # her edit, in the (now read-only) form
    assert client.get(where).status_code == 409  # a reload shows it again, and writes nothing
    assert len(_audit(data_dir)) == 1 and len(list((data_dir / "records").glob("IL-*.json"))) == 1
    # Another browser cannot read what this reviewer typed.
    with TestClient(client.app, base_url="http://127.0.0.1") as other:
        assert "My better title" not in other.get(where).text


def test_a_bulk_rejection_can_be_undone(client: TestClient, drafts: list[Draft], data_dir: Path) -> None:
    token = _csrf(client, "/queue")
    chosen = [d.draft_id for d in drafts[4:7]]
    done = client.post(
        "/queue/reject",
        data={"csrf": token, "ids": chosen, "code": "bad-source", "reason": "bad import"},
        follow_redirects=False,
    )
    assert done.status_code == 303
    page = client.get(done.headers["location"]).text
    assert "Rejected 3 selected drafts." in page and 'id="bulk-undo"' in page
    batch = re.search(r'name="batch" value="([0-9a-f]+)"', page).group(1)  # type: ignore[union-attr]
    # One of them is reopened and rejected again by hand meanwhile: the undo leaves it alone.
    api = {"X-Reviewer": "bob"}
    client.post(f"/api/drafts/{chosen[0]}/reopen", json={"reason": "mine"}, headers=api)
    client.post(
        f"/api/drafts/{chosen[0]}/reject",
        json={"version": 3, "code": "duplicate", "reason": "IL-0009"},
        headers=api,
    )
    undone = client.post("/queue/undo", data={"csrf": token, "batch": batch})
    assert "reopened 2 drafts; 1 had changed since" in undone.text
    queue = QueueStore(data_dir / "records" / "queue")
    assert [queue.get(i).status for i in chosen] == ["rejected", "pending", "pending"]
    reopened = [e for e in _audit(data_dir) if e["action"] == "reopened" and e["by"] == "tess"]
    assert sorted(e["draft_id"] for e in reopened) == sorted(chosen[1:])
    assert {e["reason"] for e in reopened} == {"undo of a bulk rejection"}
    again = client.post("/queue/undo", data={"csrf": token, "batch": batch})
    assert again.status_code == 409 and "can no longer be undone" in again.text


def test_stats_page_shows_what_review_stats_computes(client: TestClient, drafts: list[Draft]) -> None:
    api = {"X-Reviewer": "bob"}
    client.post(
        f"/api/drafts/{drafts[0].draft_id}/approve",
        json={"version": 1, "edits": {"root_cause": "capacity"}},
        headers=api,
    )
    client.post(
        f"/api/drafts/{drafts[1].draft_id}/reject",
        json={"version": 1, "code": "duplicate", "reason": "IL-0001"},
        headers=api,
    )
    stats = client.get("/api/stats").json()
    page = client.get("/stats").text
    assert stats["acceptance_rate"] == 0.5 and "50.0%" in page
    assert "<code>duplicate</code>" in page and "<code>root_cause</code>" in page
    assert f'<td class="num">{stats["queue"]["pending"]}</td>' in page


def test_draft_page_shows_progress_guidelines_and_the_reviewers_changes(
    client: TestClient, drafts: list[Draft]
) -> None:
    queue = client.get("/queue").text  # the queue as the reviewer filtered it (all pending)
    first = re.search(r'href="/drafts/(d-[0-9a-f]+)"', queue).group(1)  # type: ignore[union-attr]
    page = client.get(f"/drafts/{first}").text
    assert re.search(r"<b>1</b> of 11 in your queue", page)
    assert "Review guidelines" in page and "No reviewer has changed a field" in page
    client.post(
        f"/api/drafts/{first}/edit",
        json={"version": 1, "edits": {"severity": "sev2"}, "comment": "the page says major"},
        headers={"X-Reviewer": "bob"},
    )
    page = client.get(f"/drafts/{first}").text
    changes = page.split('id="changes"')[1].split("<h2>")[0]
    assert "<code>severity</code>" in changes and "sev2" in changes and "the page says major" in changes


def test_a_conflict_takes_the_other_edits_she_left_alone_and_marks_the_ones_she_made_too(
    client: TestClient, drafts: list[Draft], data_dir: Path
) -> None:
    from tests.flows.web.test_pages import _form

    draft = drafts[0]
    _html, fields = _form(client, draft)
    bob = {"X-Reviewer": "bob"}
    edits = {"severity": "sev2", "impact": {"users": "bob's count"}}
    assert (
        client.post(
            f"/api/drafts/{draft.draft_id}/edit", json={"version": 1, "edits": edits}, headers=bob
        ).status_code
        == 200
    )
    lost = client.post(f"/drafts/{draft.draft_id}/save", data=fields | {"impact.users": "my count"})
    assert lost.status_code == 409
    page = lost.text
    assert 'name="severity" value="sev2"' in page  # bob's, which she did not touch
    users = page.split('id="field-impact"')[1].split('id="field-trigger"')[0]
    assert 'value="my count"' in users and "bob changed this to" in users  # both changed it: hers, marked
    assert [e["action"] for e in _audit(data_dir)] == ["edited"]
