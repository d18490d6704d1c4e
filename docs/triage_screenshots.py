"""Retake docs/review-doubtful-lane.png, review-alternatives.png and review-skipped.png: the gate's
triage on the review pages, by the same walk as tests/flows/web/test_triage_browser.py.

    PYTHONPATH=. python docs/triage_screenshots.py   (needs Debian's chromium and fonts-noto-cjk)
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
from tests.flows.web.test_triage_browser import CHROMIUM, walk  # noqa: E402
from tests.flows.web.triage_data import build_triage  # noqa: E402


def main() -> None:
    data = Path(tempfile.mkdtemp(prefix="triage-shots-"))
    triage = build_triage(data)
    with running(create_app(Settings(data_dir=data))) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        context.add_cookies([{"name": "incidents_reviewer", "value": "alice", "url": base}])
        walk(context.new_page(), base, triage, data, HERE)
        browser.close()


if __name__ == "__main__":
    main()
