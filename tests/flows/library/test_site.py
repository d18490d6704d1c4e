"""`incidents export --site`: the static site, opened from a file:// path in headless Chromium."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flows.settings import Settings
from tests.cli import run

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture
def site(library_settings: Settings, capsys: pytest.CaptureFixture[str]) -> Path:
    out = library_settings.data_dir.parent / "site"
    result = run(capsys, "export", "--site", str(out), "--data-dir", str(library_settings.data_dir))
    assert result.code == 0, result.err
    assert "exported 5 record(s)" in result.out
    return out


def test_the_site_files(site: Path) -> None:
    assert (site / "index.html").is_file() and (site / ".nojekyll").is_file()
    for ui in ("en", "ko"):
        assert (site / ui / "index.html").is_file()
        assert (site / ui / "incidents" / "IL-0101.html").is_file()
        assert (site / ui / "topics" / "component" / "node-image.html").is_file()
    entries = json.loads((site / "search-index.json").read_text(encoding="utf-8"))
    assert [e["id"] for e in entries] == ["IL-0042", "IL-0102", "IL-0101", "IL-0103", "IL-0104"]
    assert "커널" in next(e for e in entries if e["id"] == "IL-0101")["text"]
    lines = (site / "records.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5
    # Every link is relative: the site works from any folder and on GitHub Pages.
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert 'href="/' not in html and 'src="/' not in html, page


def test_export_never_replaces_a_folder_it_did_not_write(
    library_settings: Settings, site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("--data-dir", str(library_settings.data_dir))
    # Its own site: rebuilt in place, a removed record's page gone.
    (library_settings.records_dir / "IL-0104.json").unlink()
    assert run(capsys, "export", "--site", str(site), *args).code == 0
    assert not (site / "en" / "incidents" / "IL-0104.html").exists()
    # Someone else's folder: refused, untouched.
    other = library_settings.data_dir.parent / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("keep me", encoding="utf-8")
    result = run(capsys, "export", "--site", str(other), *args)
    assert result.code == 1
    assert "not a site written by this command" in result.err
    assert "Traceback" not in result.err
    assert [p.name for p in other.iterdir()] == ["todo.txt"]
    assert not [p for p in other.parent.iterdir() if ".building-" in p.name]


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium")
def test_the_site_works_from_a_file_path_in_chromium(site: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto((site / "index.html").as_uri())
            page.wait_for_url("**/en/index.html")

            def shown() -> list[str]:
                return page.eval_on_selector_all(
                    "ol.incidents li.incident:not([hidden])", "els => els.map(e => e.dataset.id)"
                )

            assert shown() == ["IL-0042", "IL-0102", "IL-0101", "IL-0103", "IL-0104"]
            # The stylesheet applies (a relative link from file://).
            assert page.eval_on_selector("main", "e => getComputedStyle(e).maxWidth") == "1024px"

            page.fill("#q", "커널")  # Korean, inside a sentence
            assert shown() == ["IL-0101"]
            assert page.inner_text("#total") == "1 incidents"
            page.fill("#q", "障害")  # Japanese, inside a sentence
            assert shown() == ["IL-0102"]
            page.fill("#q", "")
            page.select_option("#f-component", "node-image")  # the same records as the API and MCP
            assert shown() == ["IL-0102", "IL-0101"]
            page.fill("#q", "nothing-like-this")
            assert shown() == [] and page.is_visible(".results .empty")
            page.fill("#q", "")
            page.select_option("#f-component", "")

            page.click('li[data-id="IL-0101"] a.title')
            page.wait_for_url("**/en/incidents/IL-0101.html")
            assert page.inner_text("h1").startswith("회수된 노드 AMI")
            assert "https://tech.nimbus.example/ko/2024/ami-rollover" in page.inner_text(".sources")
            assert "IL-0102" in page.inner_text(".related")

            page.click('a.tag[href$="topics/component/node-image.html"]')
            page.wait_for_url("**/en/topics/component/node-image.html")
            assert shown() == ["IL-0102", "IL-0101"]

            page.click("a.switch")  # to the Korean interface, same page
            page.wait_for_url("**/ko/topics/component/node-image.html")
            assert page.get_attribute("html", "lang") == "ko"
            assert "사례 2건" in page.inner_text("main")
            page.click('li[data-id="IL-0102"] a.title')
            page.wait_for_url("**/ko/incidents/IL-0102.html")
            assert "근본 원인" in page.inner_text("main")
            assert page.get_attribute("h1", "lang") == "ja"
            assert errors == []
        finally:
            browser.close()


def test_the_site_needs_no_shared_state(site: Path, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere"
    shutil.copytree(site, moved)
    html = (moved / "en" / "incidents" / "IL-0042.html").read_text(encoding="utf-8")
    assert "../../static/library.css" in html
