"""The JSON API through FastAPI's TestClient: the same decisions the pages take, and their audit lines."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from flows.store.queue import QueueStore
from schema.draft import Draft
from tests.cli import run
from tests.flows.web.conftest import by_lang

ALICE = {"X-Reviewer": "alice"}


def _audit(data_dir: Path) -> list[dict]:
    path = data_dir / "records" / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_list_filters_and_counts(client: TestClient, drafts: list[Draft]) -> None:
    body = client.get("/api/drafts").json()
    assert body["counts"] == {"pending": 11, "approved": 0, "rejected": 0}
    assert body["total"] == 11
    ko = client.get("/api/drafts", params={"lang": "ko"}).json()["drafts"]
    assert {d["language"] for d in ko} == {"ko"} and len(ko) == 3
    found = client.get("/api/drafts", params={"q": "webhook"}).json()["drafts"]
    assert [d["org"] for d in found] == ["Parcelry"]
    row = found[0]
    assert 0 <= row["lowest_confidence"] <= 1 and row["fields_with_evidence"] <= row["fields"]
    assert client.get("/api/drafts", params={"status": "approved"}).json()["total"] == 0


def test_approve_with_edits_writes_record_and_audit(
    client: TestClient, drafts: list[Draft], data_dir: Path
) -> None:
    draft = by_lang(drafts, "ja")
    got = client.get(f"/api/drafts/{draft.draft_id}").json()
    assert got["version"] == 1 and got["record"]["title"] == draft.record.title
    edits = {"root_cause": "expired-certificate", "timeline": {"resolved_after": "PT2H27M"}}
    r = client.post(
        f"/api/drafts/{draft.draft_id}/approve", json={"version": 1, "edits": edits}, headers=ALICE
    )
    assert r.status_code == 200, r.text
    assert r.json()["record_id"] == "IL-0001"
    record = json.loads((data_dir / "records" / "IL-0001.json").read_text())
    assert record["root_cause"] == "expired-certificate" and record["review"]["reviewed_by"] == "alice"
    assert record["timeline"]["resolved_after"] == "PT2H27M"
    (line,) = _audit(data_dir)
    assert line["action"] == "approved" and line["record_id"] == "IL-0001" and line["by"] == "alice"
    assert line["drafter"] == draft.source.drafter
    assert {c["field"] for c in line["changes"]} >= {"root_cause", "timeline.resolved_after"}
    assert client.get("/api/records/IL-0001").json()["root_cause"] == "expired-certificate"
    assert client.get("/api/records", params={"root_cause": "expired-certificate"}).json()["total"] == 1


def test_stale_version_gets_409_with_what_changed_and_writes_nothing(
    client: TestClient, drafts: list[Draft], data_dir: Path
) -> None:
    draft = drafts[0]
    ok = client.post(
        f"/api/drafts/{draft.draft_id}/reject",
        json={"version": 1, "code": "not-postmortem"},
        headers={"X-Reviewer": "bob"},
    )
    assert ok.status_code == 200, ok.text
    stale = client.post(f"/api/drafts/{draft.draft_id}/approve", json={"version": 1}, headers=ALICE)
    assert stale.status_code == 409
    body = stale.json()
    assert body["version"] == 2 and body["your_version"] == 1 and body["status"] == "rejected"
    assert [(h["action"], h["by"], h["code"]) for h in body["since"]] == [
        ("rejected", "bob", "not-postmortem")
    ]
    assert "changed since you opened it" in body["error"]
    assert not list((data_dir / "records").glob("IL-*.json"))
    assert len(_audit(data_dir)) == 1


def test_reject_with_codes_then_reopen_keeps_history(
    client: TestClient, drafts: list[Draft], data_dir: Path
) -> None:
    draft = drafts[1]
    url = f"/api/drafts/{draft.draft_id}"
    bad = client.post(
        f"{url}/reject", json={"version": 1, "code": "duplicate", "reason": "seen it"}, headers=ALICE
    )
    assert bad.status_code == 409 and "IL-NNNN" in bad.json()["error"]
    unknown = client.post(f"{url}/reject", json={"version": 1, "code": "boring"}, headers=ALICE)
    assert unknown.status_code == 409 and "not one of" in unknown.json()["error"]
    ok = client.post(
        f"{url}/reject", json={"version": 1, "code": "duplicate", "reason": "same as IL-0042"}, headers=ALICE
    )
    assert ok.json() == {"draft_id": draft.draft_id, "status": "rejected", "version": 2}
    again = client.post(
        f"{url}/reopen", json={"version": 2, "reason": "not a duplicate after all"}, headers=ALICE
    )
    assert again.json()["status"] == "pending" and again.json()["version"] == 3
    history = client.get(url).json()["history"]
    assert [h["action"] for h in history] == ["drafted", "rejected", "reopened"]
    assert history[1]["code"] == "duplicate" and history[1]["reason"] == "same as IL-0042"
    assert [e["action"] for e in _audit(data_dir)] == ["rejected", "reopened"]
    # Reopened, it can be approved; the stats count its last decision only.
    assert client.post(f"{url}/approve", json={"version": 3}, headers=ALICE).status_code == 200
    stats = client.get("/api/stats").json()
    assert stats["decisions"] == 1 and stats["approved"] == 1 and stats["rejection_reasons"] == {}


def test_bulk_reject_one_reason(client: TestClient, drafts: list[Draft], data_dir: Path) -> None:
    ids = [d.draft_id for d in drafts[:3]]
    r = client.post(
        "/api/drafts/reject",
        json={"ids": ids, "code": "bad-source", "reason": "directory listing"},
        headers=ALICE,
    )
    assert r.json() == {"rejected": ids, "problems": []}
    again = client.post(
        "/api/drafts/reject", json={"ids": ids[:1], "code": "other", "reason": "x"}, headers=ALICE
    )
    assert again.json()["rejected"] == [] and "it was rejected" in again.json()["problems"][0]
    lines = _audit(data_dir)
    assert [(e["draft_id"], e["code"]) for e in lines] == [(i, "bad-source") for i in ids]
    assert client.get("/api/stats").json()["rejection_reasons"] == {"bad-source": 3}


def test_post_without_x_reviewer_is_refused_and_writes_nothing(
    client: TestClient, drafts: list[Draft], data_dir: Path
) -> None:
    draft = drafts[0]
    r = client.post(f"/api/drafts/{draft.draft_id}/approve", json={"version": 1})
    assert r.status_code == 400 and "X-Reviewer" in r.json()["error"]
    # What a cross-site HTML form can send: a form body, no custom header.
    forged = client.post(
        f"/api/drafts/{draft.draft_id}/approve",
        data={"version": "1"},
        headers={"Origin": "https://evil.example"},
    )
    assert forged.status_code in (400, 422)
    assert (
        _audit(data_dir) == [] and QueueStore(data_dir / "records" / "queue").get(draft.draft_id).version == 1
    )


def test_invalid_edits_422_name_the_field_and_write_nothing(
    client: TestClient, drafts: list[Draft], data_dir: Path
) -> None:
    draft = drafts[0]
    r = client.post(
        f"/api/drafts/{draft.draft_id}/approve",
        json={"version": 1, "edits": {"root_cause": "gremlins", "timeline": {"resolved_after": "2h"}}},
        headers=ALICE,
    )
    assert r.status_code == 422
    fields = {p["field"] for p in r.json()["problems"]}
    assert {"root_cause", "timeline.resolved_after"} <= fields
    assert _audit(data_dir) == [] and not list((data_dir / "records").glob("IL-*.json"))


def test_ids_in_paths_are_validated(client: TestClient, drafts: list[Draft], data_dir: Path) -> None:
    (data_dir / "secret.json").write_text('{"draft_id": "x"}')
    prefix = drafts[0].draft_id[:6]
    for path in [
        "/api/drafts/..%2F..%2Fsecret",
        "/api/drafts/d-..%2F..%2Fsecret",
        f"/api/drafts/{prefix}",  # a prefix is for the CLI; the web uses whole ids
        "/api/records/..%2Fqueue%2Fx",
        "/api/records/IL-12",
        "/drafts/..%2Fsecret",
        "/records/..%2F..%2Fsecret",
    ]:
        r = client.get(path)
        assert r.status_code in (400, 404), (path, r.status_code)
        assert "draft_id" not in r.text or "not a" in r.text
    r = client.post(
        "/api/drafts/reject",
        json={"ids": ["../../etc/passwd"], "code": "other", "reason": "x"},
        headers=ALICE,
    )
    assert r.status_code == 400
    assert client.get("/api/drafts/d-0000000000000000").status_code == 404
    assert client.get("/api/records/IL-9999").status_code == 404


def test_openapi_documents_the_api(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert {
        "/api/drafts",
        "/api/drafts/{draft_id}",
        "/api/drafts/{draft_id}/approve",
        "/api/drafts/{draft_id}/reject",
        "/api/drafts/{draft_id}/reopen",
        "/api/records",
        "/api/records/{record_id}",
    } <= set(paths)
    page = client.get("/api/docs")
    assert page.status_code == 200 and "/api/drafts/{draft_id}/approve" in page.text


def test_cli_reopen_and_stats(capsys, client: TestClient, drafts: list[Draft], data_dir: Path) -> None:
    a, b, c = (d.draft_id for d in drafts[:3])
    assert (
        run(
            capsys, "review", "reject", a, "--reviewer", "al", "--reason", "junk", "--code", "bad-source"
        ).code
        == 0
    )
    assert (
        run(capsys, "review", "reject", b, "--reviewer", "al", "--reason", "x", "--code", "nonsense").code
        == 1
    )
    assert run(capsys, "review", "approve", c, "--reviewer", "al").code == 0
    result = run(capsys, "review", "reopen", a, "--reviewer", "al", "--reason", "mis-click")
    assert result.code == 0 and result.out.strip() == f"reopened {a}"
    assert run(capsys, "review", "reopen", c, "--reviewer", "al").code == 1  # approved: not reopenable
    assert (
        run(
            capsys,
            "review",
            "reject",
            a,
            "--reviewer",
            "al",
            "--reason",
            "really junk",
            "--code",
            "not-postmortem",
        ).code
        == 0
    )
    stats = json.loads(run(capsys, "review", "stats", "--json").out)
    assert stats["approved"] == 1 and stats["rejected"] == 1 and stats["acceptance_rate"] == 0.5
    assert stats["rejection_reasons"] == {"not-postmortem": 1}
    assert stats["queue"] == {"pending": 9, "approved": 1, "rejected": 1}
    text = run(capsys, "review", "stats").out
    assert "acceptance 50%" in text and "not-postmortem" in text
    assert run(capsys, "validate").code == 0


def test_saved_edits_make_a_version_and_count_in_stats(
    client: TestClient, drafts: list[Draft], data_dir: Path
) -> None:
    draft = drafts[2]
    url = f"/api/drafts/{draft.draft_id}"
    saved = client.post(
        f"{url}/edit", json={"version": 1, "edits": {"severity": "sev2"}}, headers={"X-Reviewer": "bob"}
    )
    assert saved.json() == {"draft_id": draft.draft_id, "status": "pending", "version": 2}
    bad = client.post(f"{url}/edit", json={"version": 2, "edits": {"severity": "sev9"}}, headers=ALICE)
    assert bad.status_code == 422 and client.get(url).json()["version"] == 2
    stale = client.post(
        f"{url}/approve", json={"version": 1, "edits": {"root_cause": "capacity"}}, headers=ALICE
    )
    assert stale.status_code == 409
    assert [(h["action"], h["by"], h["reason"]) for h in stale.json()["since"]] == [
        ("edited", "bob", "changed severity")
    ]
    ok = client.post(
        f"{url}/approve", json={"version": 2, "edits": {"root_cause": "capacity"}}, headers=ALICE
    )
    record = ok.json()["record"]
    assert record["severity"] == "sev2" and record["root_cause"] == "capacity"
    lines = _audit(data_dir)
    assert [(e["action"], [c["field"] for c in e["changes"]]) for e in lines] == [
        ("edited", ["severity"]),
        ("approved", ["root_cause"]),
    ]
    (slot,) = client.get("/api/stats").json()["drafters"].values()
    assert slot["most_edited_fields"] == {"root_cause": 1, "severity": 1}


def test_an_approved_record_is_in_the_library_routes_of_the_review_app(
    client: TestClient, drafts: list[Draft]
) -> None:
    draft = by_lang(drafts, "en")
    edits = {"root_cause": "expired-certificate"}
    r = client.post(
        f"/api/drafts/{draft.draft_id}/approve", json={"version": 1, "edits": edits}, headers=ALICE
    )
    assert r.status_code == 200, r.text
    found = client.get("/api/incidents", params={"root_cause": "expired-certificate"}).json()
    assert [item["id"] for item in found["items"]] == ["IL-0001"]
    topic = client.get("/api/topics/root_cause/expired-certificate").json()
    assert "IL-0001" in json.dumps(topic)
    assert client.get("/library/en/incidents/IL-0001").status_code == 200
