"""axe-core in real Chromium: no critical or serious accessibility violation on the queue, a draft
page (vocabulary picker closed and open), the records pages and the library pages.

axe-core is not a Python package: `npm install --prefix /tmp/axe-core axe-core` (.ci/run does it
when npm can reach its registry). Without it these tests skip and say so."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from flows.settings import Settings
from flows.web.app import create_app
from flows.web.server import running
from schema.draft import Draft
from tests.flows.web.drafts import build_queue

CHROMIUM = "/usr/bin/chromium"
AXE = Path("/tmp/axe-core/node_modules/axe-core/axe.min.js")
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
    pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)", allow_module_level=True)
if not AXE.is_file():
    pytest.skip(
        f"axe-core is not installed at {AXE} (npm install --prefix /tmp/axe-core axe-core)",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[Draft]]]:
    data_dir = tmp_path_factory.mktemp("axe") / "data"
    drafts = build_queue(data_dir)
    with running(create_app(Settings(data_dir=data_dir))) as base:
        for draft in drafts[:3]:  # records for the records and library pages
            r = httpx.post(
                f"{base}/api/drafts/{draft.draft_id}/approve",
                json={"version": 1},
                headers={"X-Reviewer": "ax"},
            )
            assert r.status_code == 200, r.text
        yield base, drafts[3:]


@pytest.fixture(scope="module")
def page(site: tuple[str, list[Draft]]) -> Iterator[object]:
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        # Our pages allow only their own script (CSP); axe is injected by the test, not the page.
        context = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True)
        context.add_cookies(
            [
                {
                    "name": "incidents_reviewer",
                    "value": "ax",
                    "url": site[0],
                    "httpOnly": True,
                    "sameSite": "Strict",
                }
            ]
        )
        pg = context.new_page()
        pg.set_default_timeout(15_000)
        yield pg
        browser.close()


def _serious(page: object) -> list[str]:
    page.add_script_tag(path=str(AXE))  # type: ignore[attr-defined]
    result = page.evaluate("async () => JSON.stringify(await axe.run(document))")  # type: ignore[attr-defined]
    found = json.loads(result)["violations"]
    return [
        f"{v['impact']} {v['id']}: {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in found
        if v["impact"] in ("critical", "serious")
    ]


def test_queue_page(page, site) -> None:
    page.goto(f"{site[0]}/queue")
    assert _serious(page) == []


def test_draft_page_with_the_picker_closed_and_open(page, site) -> None:
    base, drafts = site
    ko = next(d for d in drafts if d.source.language == "ko")
    page.goto(f"{base}/drafts/{ko.draft_id}")
    assert _serious(page) == []
    page.click("#in-root_cause")
    page.fill("#in-root_cause", "cert")
    page.keyboard.press("ArrowDown")
    assert page.get_attribute("#in-root_cause", "aria-expanded") == "true"
    assert _serious(page) == []
    page.fill("#in-root_cause", "zzzz-nothing")
    assert "No matching term" in page.locator("#options-root_cause").inner_text()
    assert _serious(page) == []


def test_records_pages(page, site) -> None:
    page.goto(f"{site[0]}/records")
    assert _serious(page) == []
    page.goto(f"{site[0]}/records/IL-0001")
    assert _serious(page) == []


def test_stats_page(page, site) -> None:
    page.goto(f"{site[0]}/stats")
    assert _serious(page) == []


def test_library_pages(page, site) -> None:
    page.goto(f"{site[0]}/library/en/")
    assert _serious(page) == []
    page.goto(f"{site[0]}/library/en/incidents/IL-0001")
    assert _serious(page) == []


def test_the_check_finds_what_the_old_picker_had(page) -> None:
    """The check can fail: a combobox without aria-controls (the picker before issue 37) is critical."""
    page.set_content(
        '<!doctype html><html lang="en"><head><title>t</title></head><body><main>'
        '<label for="c">Root cause</label><input id="c" role="combobox" aria-expanded="true">'
        "</main></body></html>"
    )
    assert any("aria-required-attr" in v for v in _serious(page))
