"""The gate's triage in a real headless Chromium (Playwright driving Debian's chromium): the doubtful
badge and lane filter, rejecting the lane in one bulk action, an alternative applied with one
click and approved, and a skipped page drafted from /skipped. The same walk retakes the
screenshots in docs/ (`PYTHONPATH=. python docs/triage_screenshots.py`)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flows.settings import Settings
from flows.web.app import create_app
from flows.web.server import running
from tests.flows.web.triage_data import Triage, build_triage

CHROMIUM = "/usr/bin/chromium"
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
    pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)", allow_module_level=True)

SHOTS = ("review-doubtful-lane.png", "review-alternatives.png", "review-skipped.png")


def walk(page: Any, base: str, triage: Triage, data_dir: Path, shots: Path) -> None:
    """The reviewer's walk through the triage, checked at each step; screenshots into `shots`."""
    doubtful = triage.doubtful.draft_id
    # The queue: one row carries the doubtful badge, with the gate's reason as its title.
    page.goto(f"{base}/queue")
    badges = page.locator(".queue-rows .badge.doubtful")
    assert badges.count() == 1
    assert "look-alike (drill or game day)" in (badges.first.get_attribute("title") or "")
    row = page.locator(f'tr[data-href="/drafts/{doubtful}"]')
    assert row.locator(".badge.doubtful").is_visible()
    # The lane filter: only the doubtful draft; select all, reject in one bulk action.
    page.select_option('select[name="lane"]', "doubtful")
    page.locator("#filters button[type=submit]").click()
    page.wait_for_url("**/queue?*lane=doubtful*")
    assert page.locator(".queue-rows tbody tr[data-href]").count() == 1
    page.screenshot(path=str(shots / SHOTS[0]), full_page=False)
    page.locator("[data-select-all]").check()
    page.select_option('#bulk select[name="code"]', "not-postmortem")
    page.fill('#bulk input[name="reason"]', "a planned game day")
    page.locator("[data-bulk-reject]").click()
    page.wait_for_selector(".flash")
    assert "Rejected 1 selected draft." in page.locator(".flash").inner_text()
    assert (
        json.loads((data_dir / "records" / "queue" / f"{doubtful}.json").read_text())["status"] == "rejected"
    )

    # An alternative root cause, applied with one click, then approved.
    target = triage.with_alternatives
    page.goto(f"{base}/drafts/{target.draft_id}")
    field = page.locator("#field-root_cause")
    choice = field.locator(f'[data-alt-term="{triage.alternative}"]')
    assert choice.is_visible() and "0.31" in choice.inner_text()
    assert (
        field.locator(".chip").count() == 1
        and field.locator(".chip").get_attribute("data-term") != triage.alternative
    )
    field.locator(".alt-quote").first.click()  # its quote marks the text it rests on
    assert page.locator("#doctext mark").count() >= 1
    field.evaluate("e => e.scrollIntoView({block: 'center'})")
    page.screenshot(path=str(shots / SHOTS[1]), full_page=False)  # the drafted value beside its runner-up
    choice.click()
    assert [c.get_attribute("data-term") for c in field.locator(".chip").all()] == [triage.alternative]
    page.locator("[data-approve]").click()
    page.wait_for_selector(".flash")
    record = json.loads((data_dir / "records" / "IL-0001.json").read_text())
    assert record["root_cause"] == triage.alternative

    # The skipped pages: listed with why; "Draft it" queues the page in the doubtful lane.
    page.goto(f"{base}/skipped")
    assert triage.skipped_url in page.locator(".skipped-rows").inner_text()
    assert "states no impact, cause or fix" in page.locator(".skipped-rows .why").first.inner_text()
    page.screenshot(path=str(shots / SHOTS[2]), full_page=False)
    page.locator("[data-unskip]").first.click()
    page.wait_for_url("**/drafts/d-*")
    assert "from the skipped pages" in page.locator(".flash").inner_text()
    page.goto(f"{base}/queue?lane=doubtful")
    assert page.locator(".queue-rows .badge.doubtful").count() == 1  # the drafted page, pending


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def test_doubtful_lane_alternatives_and_skipped_pages_in_chromium(
    browser: Any, data_dir: Path, tmp_path: Path
) -> None:
    triage = build_triage(data_dir)
    with running(create_app(Settings(data_dir=data_dir))) as base:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        context.add_cookies([{"name": "incidents_reviewer", "value": "alice", "url": base}])
        page = context.new_page()
        page.set_default_timeout(10_000)
        try:
            walk(page, base, triage, data_dir, tmp_path)
        finally:
            context.close()
    for name in SHOTS:
        assert (tmp_path / name).stat().st_size > 10_000, name
