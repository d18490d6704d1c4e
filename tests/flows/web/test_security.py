"""Each safety rule of the review app, proven: escaping, CSRF, X-Reviewer, bind address and token,
sanitized snapshot under CSP, optimistic concurrency under real concurrent requests."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from flows.settings import Settings
from flows.web.app import create_app
from flows.web.security import PAGE_CSP, check_bind
from flows.web.server import running
from schema.draft import Draft
from schema.errors import InputError
from tests.cli import run
from tests.flows.web.drafts import SCRIPT_TITLE

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def _script_draft(drafts: list[Draft]) -> Draft:
    return next(d for d in drafts if "<script>" in d.record.title.get("en", ""))


def _audit(data_dir: Path) -> list[str]:
    path = data_dir / "records" / "audit.jsonl"
    return path.read_text().splitlines() if path.exists() else []


# -- escaping -----------------------------------------------------------------------------------


def test_a_script_in_a_title_stays_text_on_every_page(client: TestClient, drafts: list[Draft]) -> None:
    draft = _script_draft(drafts)
    assert draft.record.title["en"] == SCRIPT_TITLE  # the drafter kept the title as the page had it
    escaped = "&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;"
    pages = [client.get("/queue"), client.get(f"/drafts/{draft.draft_id}")]
    r = client.post(
        f"/api/drafts/{draft.draft_id}/approve", json={"version": 1}, headers={"X-Reviewer": "al"}
    )
    record_id = r.json()["record_id"]
    pages += [client.get("/records"), client.get(f"/records/{record_id}")]
    for page in pages:
        assert page.status_code == 200
        assert escaped in page.text, page.url
        assert "<script>alert" not in page.text and "<img src=x" not in page.text
        # Our own scripts are the only ones, from our own server (the vocabulary is data, not code).
        scripts = re.findall(r"<script[^>]*>", page.text)
        assert scripts[0] == '<script src="/static/app.js" defer>'
        assert set(scripts[1:]) <= {
            '<script src="/static/alternatives.js" defer>',
            '<script type="application/json" id="vocab">',
        } and len(scripts) == len(set(scripts))
        assert page.headers["content-security-policy"] == PAGE_CSP


def test_snapshot_is_sanitized_framed_sandboxed_and_under_strict_csp(
    client: TestClient, drafts: list[Draft]
) -> None:
    draft = _script_draft(drafts)
    page = client.get(f"/drafts/{draft.draft_id}").text
    assert re.search(r'<iframe [^>]*sandbox=""[^>]*data-src="/drafts/' + draft.draft_id + '/snapshot"', page)
    snap = client.get(f"/drafts/{draft.draft_id}/snapshot")
    csp = snap.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "sandbox" in csp and "script-src" not in csp
    body = snap.text.lower()
    for gone in ("<script", "<form", "<iframe", "<link", "127.0.0.9", "<img", "href="):
        assert gone not in body, gone
    assert not re.search(r"<[^>]*\s(on\w+|src)\s*=", body)  # no handler, no source on any tag
    assert "the certificate on the internal payment gateway expired" in body  # the text itself stays
    assert "&lt;script&gt;" in body


def test_every_response_carries_the_safety_headers_once(data_dir: Path, drafts: list[Draft]) -> None:
    """Pages, refusals and static files get them; a route's own (the snapshot's CSP and framing)
    is kept, not doubled."""
    safe = {"x-content-type-options": "nosniff", "referrer-policy": "no-referrer"}
    locked = Settings(data_dir=data_dir, review_token="s3cret-token")
    with TestClient(create_app(locked), base_url="http://127.0.0.1") as c:
        refused = c.get("/api/drafts")
        assert refused.status_code == 401
        assert refused.headers["content-security-policy"] == PAGE_CSP
        assert refused.headers["cache-control"] == "no-store"
        assert all(refused.headers[k] == v for k, v in safe.items())
    with TestClient(create_app(Settings(data_dir=data_dir)), base_url="http://127.0.0.1") as c:
        page = c.get("/queue")
        assert page.headers["x-frame-options"] == "DENY" and page.headers["cache-control"] == "no-store"
        assert all(page.headers[k] == v for k, v in safe.items())
        assert c.get("/static/app.js").headers["cache-control"] == "no-cache"
        snap = c.get(f"/drafts/{drafts[0].draft_id}/snapshot")
        assert snap.headers.get_list("x-frame-options") == ["SAMEORIGIN"]
        assert len(snap.headers.get_list("content-security-policy")) == 1
        assert snap.headers["content-security-policy"] != PAGE_CSP


# -- CSRF and X-Reviewer ------------------------------------------------------------------------


def test_form_posts_need_the_csrf_token_of_this_browser(
    client: TestClient, drafts: list[Draft], data_dir: Path
) -> None:
    draft = drafts[0]
    url = f"/drafts/{draft.draft_id}/reject"
    form = {"version": "1", "code": "other", "reason": "junk"}
    no_token = client.post(url, data=form)
    assert no_token.status_code == 403 and "CSRF" in no_token.text
    token = CSRF.search(client.get(f"/drafts/{draft.draft_id}").text).group(1)  # type: ignore[union-attr]
    cookie = client.cookies.get("incidents_csrf")
    assert cookie == token
    # A cross-site page can send the cookie's name but not read its value; a guessed token fails.
    forged = client.post(url, data=form | {"csrf": token[:-2] + "xx"})
    assert forged.status_code == 403
    # Another browser (no cookie) with a token copied from a page fails too.
    with TestClient(client.app, base_url="http://127.0.0.1") as other:
        assert other.post(url, data=form | {"csrf": token}).status_code == 403
    assert _audit(data_dir) == []
    ok = client.post(url, data=form | {"csrf": token}, follow_redirects=False)
    assert ok.status_code == 303
    assert len(_audit(data_dir)) == 1


def test_csrf_cookie_is_httponly_and_samesite_strict(client: TestClient, drafts: list[Draft]) -> None:
    r = client.get("/queue")
    cookie = r.headers["set-cookie"]
    assert (
        "incidents_csrf=" in cookie
        and "HttpOnly" in cookie
        and "SameSite=strict" in cookie.replace("Strict", "strict")
    )


# -- bind address and token ---------------------------------------------------------------------


def test_refuses_a_public_address_without_a_token(capsys, data_dir: Path) -> None:
    for host in ("127.0.0.1", "127.0.0.5", "::1", "localhost"):
        check_bind(host, "")
    with pytest.raises(InputError, match="INCIDENTS_REVIEW_TOKEN"):
        check_bind("0.0.0.0", "")
    check_bind("0.0.0.0", "s3cret")
    result = run(capsys, "review", "serve", "--host", "0.0.0.0", "--port", "1")
    assert result.code == 2 and "INCIDENTS_REVIEW_TOKEN" in result.err


def test_with_a_token_every_request_needs_it(data_dir: Path, drafts: list[Draft]) -> None:
    settings = Settings(data_dir=data_dir, review_token="s3cret-token")
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as c:
        for path in ("/queue", "/api/drafts", f"/drafts/{drafts[0].draft_id}", "/records", "/api/records"):
            assert c.get(path).status_code == 401, path
        assert (
            c.post(
                f"/api/drafts/{drafts[0].draft_id}/approve", json={"version": 1}, headers={"X-Reviewer": "al"}
            ).status_code
            == 401
        )
        html = c.get("/queue", headers={"Accept": "text/html"}, follow_redirects=False)
        assert html.status_code == 303 and html.headers["location"] == "/login?next=/queue"
        assert c.get("/api/drafts", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert c.get("/api/drafts", headers={"Authorization": "Bearer s3cret-token"}).status_code == 200
        # The login form: wrong token refused, right one sets an HttpOnly SameSite=Strict cookie.
        token = CSRF.search(c.get("/login").text).group(1)  # type: ignore[union-attr]
        bad = c.post(
            "/login", data={"csrf": token, "token": "nope", "next": "/queue"}, follow_redirects=False
        )
        assert bad.status_code == 401
        good = c.post(
            "/login",
            data={"csrf": token, "token": "s3cret-token", "next": "/queue", "reviewer": "dana"},
            follow_redirects=False,
        )
        assert good.status_code == 303 and good.headers["location"] == "/queue"
        session = [h for h in good.headers.get_list("set-cookie") if h.startswith("incidents_session=")][0]
        assert "HttpOnly" in session and "samesite=strict" in session.lower()
        assert c.get("/queue").status_code == 200
        assert "dana" in c.get("/queue").text
        # A forged session cookie is not a session.
        c.cookies.clear()
        c.cookies.set("incidents_session", "forged.value.sig")
        assert c.get("/api/drafts").status_code == 401


def test_without_a_token_only_loopback_names_are_answered(client: TestClient, drafts: list[Draft]) -> None:
    for host in ("127.0.0.1:8765", "localhost:8765", "[::1]:8765", "127.0.0.1"):
        assert client.get("/api/drafts", headers={"Host": host}).status_code == 200, host
    # DNS rebinding: another site's name pointed at 127.0.0.1 reaches the server with its own Host.
    for host in ("evil.example:8765", "evil.example", "127.0.0.1.evil.example"):
        r = client.get("/api/drafts", headers={"Host": host})
        assert r.status_code == 403 and "127.0.0.1" in r.json()["error"], host


# -- optimistic concurrency under real concurrent requests ---------------------------------------


def _at_once(n: int, call) -> list[httpx.Response]:
    barrier = threading.Barrier(n)
    out: list[httpx.Response | None] = [None] * n

    def worker(i: int) -> None:
        barrier.wait()
        out[i] = call(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return [r for r in out if r is not None]


def test_five_reviewers_approving_one_draft_make_one_record_and_four_409s(
    settings: Settings, drafts: list[Draft], data_dir: Path
) -> None:
    draft = drafts[2]
    with running(create_app(settings)) as base, httpx.Client(base_url=base, timeout=30) as http:
        replies = _at_once(
            5,
            lambda i: http.post(
                f"/api/drafts/{draft.draft_id}/approve",
                json={"version": 1},
                headers={"X-Reviewer": f"reviewer-{i}"},
            ),
        )
    codes = sorted(r.status_code for r in replies)
    assert codes == [200, 409, 409, 409, 409]
    assert len(list((data_dir / "records").glob("IL-*.json"))) == 1
    lines = [json.loads(line) for line in _audit(data_dir)]
    assert len(lines) == 1 and lines[0]["action"] == "approved"
    winner = next(r for r in replies if r.status_code == 200).json()
    for lost in (r.json() for r in replies if r.status_code == 409):
        assert lost["status"] == "approved" and lost["since"][0]["record_id"] == winner["record_id"]


def test_reviewers_approving_different_drafts_at_once_get_distinct_ids(
    settings: Settings, drafts: list[Draft], data_dir: Path
) -> None:
    with running(create_app(settings)) as base, httpx.Client(base_url=base, timeout=30) as http:
        replies = _at_once(
            8,
            lambda i: http.post(
                f"/api/drafts/{drafts[i].draft_id}/approve",
                json={"version": 1},
                headers={"X-Reviewer": f"reviewer-{i}"},
            ),
        )
    assert [r.status_code for r in replies] == [200] * 8
    ids = {r.json()["record_id"] for r in replies}
    assert ids == {f"IL-{n:04d}" for n in range(1, 9)}
    assert sorted(json.loads(line)["record_id"] for line in _audit(data_dir)) == sorted(ids)
