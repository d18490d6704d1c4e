"""The gate's triage on the web: the skipped pages (/skipped, drafted on request) and the views the
queue's doubtful lane and the draft page's alternatives use (flows/triage.py holds the concept)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from flows.triage import DOUBTFUL, skipped_pages, unskip
from flows.web.pages import checked_form, render, reviewer_of, see_other, services, templates
from flows.web.views import locate
from schema.document import Document
from schema.draft import Draft
from schema.errors import ReviewError

router = APIRouter(include_in_schema=False)


def alternative_views(draft: Draft, name: str, doc: Document | None) -> list[dict[str, Any]]:
    """The runners-up of field `name`, best first, each with its first quote located in the
    extracted text (None when the quote is not there)."""
    views = []
    for alt in draft.alternatives.get(name, []):
        quote = alt.evidence[0] if alt.evidence else None
        start, end = locate(doc, quote.quote, quote.start, quote.end) if quote else (None, None)
        text = quote.quote if quote else ""
        views.append({"term": alt.term, "score": alt.score, "quote": text, "start": start, "end": end})
    return views


templates.env.globals.update(alternative_views=alternative_views, DOUBTFUL=DOUBTFUL)


@router.get("/skipped")
def skipped_page(request: Request) -> HTMLResponse:
    settings = request.app.state.settings
    rows = skipped_pages(settings)
    return render(request, "skipped.html", {"rows": rows, "done": request.query_params.get("done", "")})


@router.post("/skipped/draft")
async def draft_skipped(request: Request) -> Response:
    """Draft the chosen skipped pages (`url`, repeated) or all of them (`all`) into the queue."""
    form = await checked_form(request)
    settings = request.app.state.settings
    wanted = [str(u) for u in form.getlist("url")]
    if form.get("all"):
        wanted = [p.url for p in skipped_pages(settings) if p.draftable]
    if not wanted:
        raise ReviewError("no skipped page chosen: tick one or use “Draft all”")
    drafts = await run_in_threadpool(unskip, settings, wanted, reviewer=reviewer_of(request))
    services(request).summaries()  # the queue's cache sees the new drafts at its next look
    if len(drafts) == 1 and not form.get("all"):
        note = f"drafted {drafts[0].draft_id} from the skipped pages (doubtful lane)"
        return see_other(f"/drafts/{drafts[0].draft_id}?{urlencode({'done': note})}")
    note = f"drafted {len(drafts)} skipped page{'s' * (len(drafts) != 1)} into the doubtful lane"
    return see_other(f"/queue?{urlencode({'lane': DOUBTFUL, 'done': note})}")
