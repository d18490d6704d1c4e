"""Retake docs/review-*.png: the queue and an English, a Korean and a Japanese draft page.

    PYTHONPATH=. python docs/screenshots.py   (needs Debian's chromium and fonts-noto-cjk)

Drafts come from the test pages (tests/data), drafted by the real drafter into a temporary data dir.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

from playwright.sync_api import sync_playwright  # noqa: E402

from flows.settings import Settings  # noqa: E402
from flows.web.app import create_app  # noqa: E402
from flows.web.server import running  # noqa: E402
from tests.flows.web.drafts import build_queue  # noqa: E402


def main() -> None:
    data = Path(tempfile.mkdtemp(prefix="review-shots-"))
    drafts = build_queue(data, script_page=False)
    pick = {d.source.language: d for d in reversed(drafts)}
    with running(create_app(Settings(data_dir=data))) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(f"{base}/queue")
        page.keyboard.press("j")
        page.keyboard.press("j")
        page.screenshot(path=str(HERE / "review-queue.png"))
        for lang in ("en", "ko", "ja"):
            page.goto(f"{base}/drafts/{pick[lang].draft_id}")
            page.locator("#field-summary .quote").first.click()
            page.screenshot(path=str(HERE / f"review-draft-{lang}.png"))
        browser.close()


if __name__ == "__main__":
    main()
