"""Retake docs/review-*.png: the queue, an English, a Korean and a Japanese draft page, the
vocabulary picker open, a version conflict with the reviewer's edits kept, and the stats page.

    PYTHONPATH=. python docs/screenshots.py   (needs Debian's chromium and fonts-noto-cjk)

Drafts come from the test pages (tests/data), drafted by the real drafter into a temporary data dir.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import httpx

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
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        context.add_cookies([{"name": "incidents_reviewer", "value": "mina", "url": base, "httpOnly": True}])
        page = context.new_page()
        page.goto(f"{base}/queue")
        page.keyboard.press("j")
        page.keyboard.press("j")
        page.screenshot(path=str(HERE / "review-queue.png"))
        for lang in ("en", "ko", "ja"):
            page.goto(f"{base}/drafts/{pick[lang].draft_id}")
            page.locator("#field-summary .quote").first.click()
            page.screenshot(path=str(HERE / f"review-draft-{lang}.png"))
        # The picker open on the Japanese draft: labels in Japanese, each term's definition.
        page.fill("#in-root_cause", "証明書")
        page.locator("#field-root_cause").scroll_into_view_if_needed()
        page.screenshot(path=str(HERE / "review-picker-ja.png"))
        # A version conflict: another reviewer edits the draft while this one has it open.
        draft = pick["en"]
        page.goto(f"{base}/drafts/{draft.draft_id}")
        httpx.post(
            f"{base}/api/drafts/{draft.draft_id}/edit",
            json={"version": 1, "edits": {"severity": "sev2"}},
            headers={"X-Reviewer": "bob"},
        )
        page.fill(f"input[name='title.{draft.source.language}']", "A clearer title, kept after the conflict")
        page.click("[data-approve]")
        page.wait_for_url("**/conflict?kept=*")
        page.screenshot(path=str(HERE / "review-conflict.png"))
        page.goto(f"{base}/stats")
        page.screenshot(path=str(HERE / "review-stats.png"))
        browser.close()


if __name__ == "__main__":
    main()
