"""The review pages in a real headless Chromium (Playwright driving Debian's chromium): one browser
for the module, a fresh data directory and server for each test."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from flows.settings import Settings
from flows.store.queue import QueueStore
from flows.web.app import create_app
from flows.web.server import running
from schema.draft import Draft
from tests.flows.web.drafts import build_queue

CHROMIUM = "/usr/bin/chromium"
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
    pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def site(data_dir: Path) -> Iterator[tuple[str, list[Draft]]]:
    drafts = build_queue(data_dir)
    with running(create_app(Settings(data_dir=data_dir))) as base:
        yield base, drafts


@pytest.fixture
def page(browser, site) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    # The name this browser gave in the Reviewer box before (decisions need one).
    context.add_cookies(
        [
            {
                "name": "incidents_reviewer",
                "value": "rita",
                "url": site[0],
                "httpOnly": True,
                "sameSite": "Strict",
            }
        ]
    )
    pg = context.new_page()
    pg.dialogs = []  # every alert/confirm the page tries: none may come from a source
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    pg.set_default_timeout(10_000)
    yield pg
    context.close()


def _audit(data_dir: Path) -> list[dict]:
    path = data_dir / "records" / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _queue(data_dir: Path) -> QueueStore:
    return QueueStore(data_dir / "records" / "queue")


def test_korean_draft_quote_picker_approve_and_record_page(page, site, data_dir: Path) -> None:
    base, drafts = site
    korean = next(d for d in drafts if d.source.language == "ko" and "결제 API" in d.record.title["ko"])
    page.goto(f"{base}/queue")
    page.get_by_role("link", name=korean.record.title["ko"]).click()
    page.wait_for_url(f"**/drafts/{korean.draft_id}")
    # Clicking a quote marks exactly that text in the extracted text and brings it into view.
    quote = page.locator("#field-summary .quote").first
    expected = quote.inner_text().strip("“”")
    quote.click()
    mark = page.locator("#doctext mark")
    assert mark.count() >= 1
    assert "".join(mark.all_inner_texts()) == expected
    assert mark.first.is_visible()
    # The root cause picker: type a Korean alias, pick it with Enter.
    picker = page.locator("#in-root_cause")
    picker.fill("인증서 갱신")
    option = page.locator("#field-root_cause .options li").first
    assert "Expired certificate" in option.inner_text() and "인증서 만료" in option.inner_text()
    picker.press("Enter")
    assert (
        page.locator("#field-root_cause .chip").inner_text().startswith("Expired certificate · 인증서 만료")
    )
    page.fill("input[name='timeline.resolved_after']", "2h 27m")
    page.keyboard.press("Escape")
    page.keyboard.press("a")  # approve from the keyboard
    page.wait_for_url("**/drafts/d-*")  # the next pending draft opens
    flash = page.locator(".flash")
    assert f"Approved {korean.draft_id} as IL-0001" in flash.inner_text()
    flash.get_by_role("link", name="view IL-0001").click()
    page.wait_for_url("**/records/IL-0001")
    assert page.locator("h1").inner_text() == korean.record.title["ko"]
    assert "Expired certificate · 인증서 만료" in page.locator(".tags").inner_text()
    assert "resolved after 2h 27m" in page.locator("article").inner_text()
    record = json.loads((data_dir / "records" / "IL-0001.json").read_text())
    assert record["root_cause"] == "expired-certificate" and record["timeline"]["resolved_after"] == "PT2H27M"
    (line,) = _audit(data_dir)
    assert {c["field"] for c in line["changes"]} == {"root_cause", "timeline.resolved_after"}
    assert page.dialogs == []


def test_reject_with_a_reason_then_reopen(page, site, data_dir: Path) -> None:
    base, drafts = site
    draft = drafts[3]
    page.goto(f"{base}/drafts/{draft.draft_id}")
    page.keyboard.press("r")
    assert page.evaluate("document.activeElement.id") == "reject-code"
    page.select_option("#reject-code", "too-little")
    page.fill("#reject-reason", "only a status line")
    page.click("#reject-form button[type=submit]")
    page.wait_for_url("**/drafts/d-*")
    assert f"Rejected {draft.draft_id}" in page.locator(".flash").inner_text()
    assert _queue(data_dir).get(draft.draft_id).status == "rejected"
    page.goto(f"{base}/drafts/{draft.draft_id}")
    assert "[too-little] — only a status line" in page.locator(".history").inner_text()
    page.fill("#reopen-form input[name=reason]", "mis-click")
    page.click("#reopen-form button")
    page.wait_for_url(f"**/drafts/{draft.draft_id}?*")
    assert page.locator(".pager .badge").inner_text() == "pending"
    assert [h.action for h in _queue(data_dir).get(draft.draft_id).history] == [
        "drafted",
        "rejected",
        "reopened",
    ]
    assert [e["action"] for e in _audit(data_dir)] == ["rejected", "reopened"]


def test_bulk_reject_three_drafts(page, site, data_dir: Path) -> None:
    base, drafts = site
    page.goto(f"{base}/queue?sort=age")
    chosen = [d.draft_id for d in drafts[4:7]]
    for draft_id in chosen:
        page.check(f"input[name=ids][value='{draft_id}']")
    page.select_option("#bulk select[name=code]", "bad-source")
    page.fill("#bulk input[name=reason]", "directory listings from a bad import")
    page.click("[data-bulk-reject]")
    page.wait_for_url("**/queue?*")
    assert "Rejected 3 selected drafts" in page.locator(".flash").inner_text()
    assert "pending 8" in page.locator(".counts").inner_text()
    assert "rejected 3" in page.locator(".counts").inner_text()
    assert sorted((e["draft_id"], e["code"]) for e in _audit(data_dir)) == sorted(
        (i, "bad-source") for i in chosen
    )


def test_script_in_a_title_is_shown_as_text_and_never_runs(page, site) -> None:
    base, drafts = site
    draft = next(d for d in drafts if "<script>" in d.record.title.get("en", ""))
    page.goto(f"{base}/queue")
    assert page.get_by_text("<script>alert('xss')</script> Payment API outage", exact=False).count() == 1
    page.goto(f"{base}/drafts/{draft.draft_id}")
    assert page.locator("h1.draft-title").inner_text().startswith("<script>alert('xss')</script>")
    assert page.title().startswith("<script>")  # the page's own <title>, as text
    page.click("[data-tab=snapshot]")
    frame = page.frame_locator("#tab-snapshot iframe")
    # The frame loads after the click: expect() waits for its text (inner_text() would not).
    playwright.expect(frame.locator("body")).to_contain_text(
        "certificate on the internal payment gateway expired"
    )
    page.wait_for_timeout(300)
    assert page.dialogs == []
    assert page.evaluate("document.title") != "pwned"


def test_a_stale_page_gets_the_conflict_not_a_lost_update(page, site, data_dir: Path) -> None:
    base, drafts = site
    draft = drafts[0]
    page.goto(f"{base}/drafts/{draft.draft_id}")
    # Meanwhile another reviewer rejects it through the API.
    r = httpx.post(
        f"{base}/api/drafts/{draft.draft_id}/reject",
        json={"version": 1, "code": "other", "reason": "x"},
        headers={"X-Reviewer": "bob"},
    )
    assert r.status_code == 200
    page.fill("input[name='title.en']", "A better title")
    page.click("[data-approve]")
    conflict = page.locator(".conflict").inner_text()
    assert "changed this draft while you had it open" in conflict and "rejected by bob" in conflict
    assert not list((data_dir / "records").glob("IL-*.json"))
    assert len(_audit(data_dir)) == 1


def test_invalid_field_shows_beside_it_and_nothing_is_written(page, site, data_dir: Path) -> None:
    base, drafts = site
    draft = drafts[0]
    page.goto(f"{base}/drafts/{draft.draft_id}")
    page.fill("input[name='timeline.detected_after']", "soon")
    page.fill("#in-org", "")
    page.click("[data-approve]")
    assert "not a duration" in page.locator("#field-timeline .field-error").inner_text()
    assert page.locator("input[name='timeline.detected_after']").input_value() == "soon"  # kept for fixing
    page.fill("input[name='timeline.detected_after']", "15m")
    page.click("[data-approve]")
    assert "needs org" in page.locator("#field-org .field-error").inner_text()
    assert _audit(data_dir) == [] and not list((data_dir / "records").glob("IL-*.json"))


def test_a_reviewer_goes_through_ten_drafts_from_the_browser(page, site, data_dir: Path) -> None:
    """Done when: the whole queue, keyboard first, fixing fields, approving and rejecting."""
    base, drafts = site
    page.goto(f"{base}/queue")
    page.fill(".whoami input[name=reviewer]", "mina")
    with page.expect_navigation():
        page.click(".whoami button")
    assert page.locator(".whoami input[name=reviewer]").input_value() == "mina"
    page.keyboard.press("j")
    assert page.locator("tr.selected").count() == 1
    page.keyboard.press("Enter")
    page.wait_for_url("**/drafts/d-*")
    decided: dict[str, str] = {}
    for step in range(11):
        draft_id = page.url.split("/drafts/")[1].split("?")[0]
        title = page.locator("h1.draft-title").inner_text()
        if "<script>" in title or step % 4 == 3:
            page.keyboard.press("r")
            page.select_option("#reject-code", "not-postmortem")
            page.fill("#reject-reason", f"step {step}")
            page.press("#reject-reason", "Enter")
            decided[draft_id] = "rejected"
        else:
            page.keyboard.press("e")  # the first field: the title
            lang = page.evaluate("document.activeElement.lang")
            page.fill(f"input[name='title.{lang}']", f"{title} (reviewed {step})")
            page.fill("input[name='impact.users']", f"{step + 1}00 users")
            page.keyboard.press("Escape")
            page.keyboard.press("a")
            decided[draft_id] = "approved"
        if step < 10:
            page.wait_for_url(lambda url, seen=draft_id: "/drafts/" in url and seen not in url.split("?")[0])
    page.wait_for_url("**/queue*")
    assert "pending 0" in page.locator(".counts").inner_text()
    assert len(decided) == 11
    audit = _audit(data_dir)
    assert {e["draft_id"]: e["action"] for e in audit} == decided and len(audit) == 11
    assert {e["by"] for e in audit} == {"mina"}
    records = sorted((data_dir / "records").glob("IL-*.json"))
    assert len(records) == list(decided.values()).count("approved")
    by_id = {e["record_id"]: e for e in audit if e["record_id"]}
    for path in records:
        record = json.loads(path.read_text())
        line = by_id[record["id"]]
        changed = {c["field"]: c["to"] for c in line["changes"]}
        ((field, title),) = [(k, v) for k, v in changed.items() if k.startswith("title.")]
        assert record["title"][field.removeprefix("title.")] == title and "(reviewed " in title
        assert record["impact"]["users"] == changed["impact.users"]
        assert record["review"]["reviewed_by"] == "mina"
    assert page.dialogs == []


def test_save_edits_by_key_and_decide_later(page, site, data_dir: Path) -> None:
    base, drafts = site
    draft = drafts[6]
    page.goto(f"{base}/drafts/{draft.draft_id}")
    page.fill("input[name='impact.region']", "関東")
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    page.wait_for_url(f"**/drafts/{draft.draft_id}?*")
    assert "Saved your edits" in page.locator(".flash").inner_text()
    assert "version 2" in page.locator(".pager .id").inner_text()
    assert page.locator("input[name='impact.region']").input_value() == "関東"
    assert _queue(data_dir).get(draft.draft_id).status == "pending"
    assert [e["action"] for e in _audit(data_dir)] == ["edited"]
