"""Retake docs/library-*.png: the library's search (server and static site), a topic page, an error page,
the static site's incident page in Korean.

    PYTHONPATH=. python docs/library_screenshots.py   (needs Debian's chromium and fonts-noto-cjk)

Records come from the library's tests (tests/flows/library/records.py) in a temporary data dir.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

from playwright.sync_api import sync_playwright  # noqa: E402

from flows.library.app import create_library_app  # noqa: E402
from flows.library.index import LibraryIndex  # noqa: E402
from flows.library.site import export_site  # noqa: E402
from flows.settings import Settings  # noqa: E402
from flows.web.server import running  # noqa: E402
from tests.flows.library.records import write_records  # noqa: E402


def main() -> None:
    data = Path(tempfile.mkdtemp(prefix="library-shots-"))
    write_records(data / "records")
    settings = Settings(data_dir=data)
    with LibraryIndex.for_settings(settings) as index:
        site = export_site(index, data.parent / f"{data.name}-site").out
    with running(create_library_app(settings)) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        # A Korean word finds the English-tagged certificate record; the match is marked.
        page.goto(f"{base}/library/en/?q=인증서")
        page.screenshot(path=str(HERE / "library-search-labels.png"))
        page.goto(f"{base}/library/en/?q=certificates")
        page.screenshot(path=str(HERE / "library-search-stem.png"))
        page.goto(f"{base}/library/ko/?component=node")
        page.screenshot(path=str(HERE / "library-error.png"))
        page.goto(f"{base}/library/en/incidents/IL-0101")
        page.locator(".related").scroll_into_view_if_needed()
        page.screenshot(path=str(HERE / "library-related.png"))
        page.goto((site / "en" / "index.html").as_uri())
        page.fill("#q", "証明書")
        page.wait_for_function("!document.querySelector('#incidents[aria-busy=true]')")
        page.screenshot(path=str(HERE / "library-static-search.png"))
        # The static site's one incident page for both languages, in Korean (#ko).
        page.goto((site / "en" / "incidents" / "IL-0101.html").as_uri() + "#ko")
        page.screenshot(path=str(HERE / "library-static-incident-ko.png"))
        browser.close()


if __name__ == "__main__":
    main()
