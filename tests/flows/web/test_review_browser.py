"""Issue 37 in real Chromium: the picker as an ARIA combobox, focus after a 422, keys to the next
field needing attention, a conflict kept across a reload, undoing a bulk rejection, labels in
the draft's language."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx

from flows.store.queue import QueueStore
from tests.flows.web.test_browser import browser, page, playwright, site  # noqa: F401  (fixtures)

HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _audit(data_dir: Path) -> list[dict]:
    path = data_dir / "records" / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_the_picker_is_a_complete_combobox(page, site) -> None:  # noqa: F811
    base, drafts = site
    ko = next(d for d in drafts if d.source.language == "ko")
    page.goto(f"{base}/drafts/{ko.draft_id}")
    box = page.locator("#in-root_cause")
    assert box.get_attribute("role") == "combobox" and box.get_attribute("aria-expanded") == "false"
    listbox = page.locator("#" + box.get_attribute("aria-controls"))
    assert listbox.get_attribute("role") == "listbox"
    box.fill("인증서")
    assert box.get_attribute("aria-expanded") == "true"
    first = listbox.locator("[role=option]").first
    assert box.get_attribute("aria-activedescendant") == first.get_attribute("id")
    assert first.get_attribute("aria-selected") == "true"
    # Each option shows the term's definition.
    assert "TLS, signing or identity certificate" in listbox.inner_text()
    box.fill("a")  # many terms
    first = listbox.locator("[role=option]").first
    assert box.get_attribute("aria-activedescendant") == first.get_attribute("id")
    box.press("ArrowDown")
    second = listbox.locator("[role=option]").nth(1)
    assert box.get_attribute("aria-activedescendant") == second.get_attribute("id")
    assert second.get_attribute("aria-selected") == "true" and first.get_attribute("aria-selected") == "false"
    box.fill("qqqq-no-such-thing")
    assert "No matching term" in listbox.inner_text()
    assert page.locator("#status-root_cause").inner_text() == "No matching term."
    assert box.get_attribute("aria-activedescendant") is None
    box.press("Escape")
    assert box.get_attribute("aria-expanded") == "false"


def test_a_japanese_draft_shows_japanese_labels_never_korean(page, site) -> None:  # noqa: F811
    base, drafts = site
    ja = next(d for d in drafts if d.source.language == "ja")
    page.goto(f"{base}/drafts/{ja.draft_id}")
    chips = page.locator(".fields .chip").all_inner_texts()
    assert chips and not any(HANGUL.search(c) for c in chips)
    page.fill("#in-root_cause", "証明書")
    options = page.locator("#options-root_cause").inner_text()
    assert "Expired certificate · 証明書の期限切れ" in options and not HANGUL.search(options)


def test_after_a_422_focus_is_on_the_first_marked_field_and_n_walks_the_rest(
    page,  # noqa: F811
    site,  # noqa: F811
    data_dir: Path,
) -> None:
    base, drafts = site
    draft = drafts[0]
    page.goto(f"{base}/drafts/{draft.draft_id}")
    page.fill("input[name='timeline.detected_after']", "soon")
    page.click("[data-approve]")
    page.wait_for_selector("#field-timeline .field-error")
    assert page.evaluate("document.activeElement.id") == "in-timeline"
    # n: the next field needing attention (marked, low confidence or empty), p: back.
    page.keyboard.press("Escape")
    wanted = page.evaluate(
        "Array.from(document.querySelectorAll('.fields .field.bad, .fields .field.low, .fields .field.empty'))"
        ".map(f => f.id)"
    )
    assert "field-timeline" in wanted and len(wanted) >= 2
    at = wanted.index("field-timeline")
    page.locator("input[name='timeline.detected_after']").focus()
    page.keyboard.press("Escape")  # out of the field: keys act on the page
    page.locator("input[name='timeline.detected_after']").focus()
    page.keyboard.press("Alt+ArrowDown")
    assert page.evaluate("document.activeElement.closest('.field').id") == wanted[(at + 1) % len(wanted)]
    page.keyboard.press("Alt+ArrowUp")
    assert page.evaluate("document.activeElement.closest('.field').id") == "field-timeline"
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("n")
    assert page.evaluate("document.activeElement.closest('.field').id") == wanted[0]
    assert _audit(data_dir) == []


def test_a_conflict_keeps_the_edits_and_a_reload_posts_nothing(page, site, data_dir: Path) -> None:  # noqa: F811
    base, drafts = site
    draft = drafts[0]
    page.goto(f"{base}/drafts/{draft.draft_id}")
    r = httpx.post(
        f"{base}/api/drafts/{draft.draft_id}/edit",
        json={"version": 1, "edits": {"severity": "sev2"}},
        headers={"X-Reviewer": "bob"},
    )
    assert r.status_code == 200
    page.fill("input[name='title.en']", "A better title")
    page.fill("#approve-comment", "my reasons")
    page.click("[data-approve]")
    page.wait_for_url("**/conflict?kept=*")
    conflict = page.locator(".conflict").inner_text()
    assert "edited by bob" in conflict and "version 2" in conflict
    assert page.input_value("input[name='title.en']") == "A better title"
    assert page.input_value("#approve-comment") == "my reasons"
    page.reload()
    assert page.input_value("input[name='title.en']") == "A better title"
    assert [e["action"] for e in _audit(data_dir)] == ["edited"]
    # Bob's severity, which she left alone, is in the form now; her title stays hers.
    assert page.locator("#field-severity .chip").inner_text().startswith("SEV2")
    # Still pending: she approves from the same page, on top of bob's edit.
    page.click("[data-approve]")
    page.wait_for_url(lambda url: "/conflict" not in url)
    record = json.loads((data_dir / "records" / "IL-0001.json").read_text())
    assert record["title"]["en"] == "A better title" and record["severity"] == "sev2"
    assert _audit(data_dir)[-1]["comment"] == "my reasons"


def test_undo_a_bulk_rejection_from_the_queue(page, site, data_dir: Path) -> None:  # noqa: F811
    base, drafts = site
    page.goto(f"{base}/queue?sort=age")
    chosen = [d.draft_id for d in drafts[4:7]]
    for draft_id in chosen:
        page.check(f"input[name=ids][value='{draft_id}']")
    page.select_option("#bulk select[name=code]", "bad-source")
    page.fill("#bulk input[name=reason]", "a bad import")
    page.click("[data-bulk-reject]")
    page.wait_for_url("**/queue?*")
    assert "pending 8" in page.locator(".counts").inner_text()
    page.click("#bulk-undo button")
    page.wait_for_url("**/queue?*done=bulk-undone*")
    assert "reopened 3 drafts" in page.locator(".flash").inner_text()
    assert "pending 11" in page.locator(".counts").inner_text()
    queue = QueueStore(data_dir / "records" / "queue")
    assert {queue.get(i).status for i in chosen} == {"pending"}
    assert [e["action"] for e in _audit(data_dir)] == ["rejected"] * 3 + ["reopened"] * 3


def test_progress_and_the_machine_vs_reviewer_view(page, site, data_dir: Path) -> None:  # noqa: F811
    base, _drafts = site
    page.goto(f"{base}/queue")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url("**/drafts/d-*")
    assert page.locator("#progress").inner_text() == "1 of 11 in your queue"
    first = page.url
    page.keyboard.press("j")
    page.wait_for_url(lambda url: "/drafts/d-" in url and url != first)
    assert page.locator("#progress").inner_text() == "2 of 11 in your queue"
    page.fill("input[name='impact.region']", "eu-west-1")
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    page.wait_for_url("**?done=saved*")
    diff = page.locator("table.diff").inner_text()
    assert "impact.region" in diff and "eu-west-1" in diff and "rita" in diff
