"""A data directory with drafts made by the real drafter from pages we wrote (tests/data), archived in raw/."""

from __future__ import annotations

from pathlib import Path

from flows.archive import Archive
from flows.settings import Settings
from flows.store.queue import QueueStore
from schema.draft import Draft
from tests.conftest import DATA

# Ten postmortems: English, Korean and Japanese.
PAGES = [
    "pipeline/en-queue-outage.html",
    "pipeline/ko-db-failover.html",
    "pipeline/ja-cdn-cache.html",
    "postmortems/en-no-timeline.html",
    "postmortems/en-table-pacific.html",
    "postmortems/en-timeline-utc.html",
    "postmortems/ja-postmortem.html",
    "postmortems/ko-postmortem.html",
    "pages/en-blog-outage.html",
    "pages/ko-blog-outage.html",
]

SCRIPT_TITLE = "<script>alert('xss')</script> Payment API outage <img src=x onerror=alert(1)>"
SCRIPT_PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{SCRIPT_TITLE.replace("<", "&lt;").replace(">", "&gt;")}</title>
<script>alert('head script')</script>
<link rel="stylesheet" href="http://127.0.0.9/leak.css">
</head>
<body onload="alert('onload')">
<article>
<h1>{SCRIPT_TITLE.replace("<", "&lt;").replace(">", "&gt;")}</h1>
<p>Posted 2026-02-03 by the Harbourline platform team.</p>
<h2>Summary</h2>
<p>On February 2 the payment API returned errors for 47 minutes after an expired TLS certificate on the internal gateway.
Card payments failed for about 30% of customers in the EU region.</p>
<img src="http://127.0.0.9/tracker.gif" onerror="alert('img')">
<h2>Timeline</h2>
<ul><li>09:02 UTC alerts fired for elevated 5xx rates.</li><li>09:49 UTC the renewed certificate was deployed and errors stopped.</li></ul>
<h2>Root cause</h2>
<p>The certificate on the internal payment gateway expired because its renewal job had been failing silently for weeks.</p>
<form action="http://127.0.0.9/steal"><input name="card"></form>
<iframe src="http://127.0.0.9/frame"></iframe>
<h2>What we are doing</h2>
<ul><li>Alert on certificate expiry thirty days ahead.</li><li>Page the owning team when the renewal job fails.</li></ul>
<script>document.title = 'pwned'</script>
</article>
</body></html>
"""


def add_page(settings: Settings, data: bytes, url: str, now: str = "2026-03-01T09:00:00Z") -> Draft:
    """Archive one page as a resource, then extract, draft and queue it as `ingest` would."""
    from extractors import extract_document
    from extractors.draft import draft_document

    with Archive(settings) as archive:
        capture = archive.store_resource(data, url=url, content_type="text/html; charset=utf-8")
    doc = extract_document(data, url=url, content_type="text/html; charset=utf-8")
    draft = draft_document(
        doc, source_url=url, snapshot=capture.id, snapshot_digest=f"sha256:{capture.payload_sha256}", now=now
    )
    QueueStore(settings.queue_dir).add(draft)
    return draft


def build_queue(data_dir: Path, *, script_page: bool = True) -> list[Draft]:
    settings = Settings(data_dir=data_dir)
    drafts = []
    for n, page in enumerate(PAGES):
        url = f"https://blog.site{n}.example/posts/{Path(page).stem}.html"
        drafts.append(add_page(settings, (DATA / page).read_bytes(), url, now=f"2026-03-01T09:{n:02d}:00Z"))
    if script_page:
        drafts.append(
            add_page(
                settings,
                SCRIPT_PAGE.encode(),
                "https://harbourline.example/blog/payment-outage",
                now="2026-03-01T09:30:00Z",
            )
        )
    return drafts
