"""The gate's triage on the web: the skipped pages (/skipped, drafted on request) and the views the
queue's doubtful lane and the draft page's alternatives use (flows/triage.py holds the concept)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from flows.triage import DOUBTFUL, skipped_pages, unskip
from flows.web.flash import flash_url
from flows.web.pages import checked_form, decider, remember, render, see_other, services, templates
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
    return render(request, "skipped.html", {"rows": rows})


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
    reviewer = decider(request, form)
    drafts = await run_in_threadpool(unskip, settings, wanted, reviewer=reviewer)
    services(request).summaries()  # the queue's cache sees the new drafts at its next look
    if len(drafts) == 1 and not form.get("all"):
        url = flash_url(f"/drafts/{drafts[0].draft_id}", "unskipped-draft", draft=drafts[0].draft_id)
    else:
        url = flash_url(f"/queue?lane={DOUBTFUL}", "unskipped", n=len(drafts))
    return remember(see_other(url), request, reviewer)
