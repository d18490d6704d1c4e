"""Server-rendered pages: the queue, a draft beside its archived source, decisions, records."""

from __future__ import annotations

import getpass
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from flows.lifecycle import EDITS_HELP, gone_sources, same_incident
from flows.related import rank_related
from flows.review import REJECT_CODES
from flows.web.forms import edits_between, from_form, items_text, languages_of
from flows.web.security import (
    CSRF_COOKIE,
    REVIEWER_COOKIE,
    SESSION_COOKIE,
    SESSION_MAX_AGE,
    SNAPSHOT_CSP,
    Guard,
    set_cookie,
)
from flows.web.services import Services, first_text, now_utc, valid_draft_id
from flows.web.snapshot import sanitize
from flows.web.views import TEMPLATE_HELPERS, QueueFilter, field_views, pickers, suggestions, text_blocks
from schema.draft import Draft
from schema.errors import InputError, RecordInvalid, ReviewError
from schema.types import LANG_PATTERN
from schema.vocab import vocabulary

templates = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
templates.env.globals.update(TEMPLATE_HELPERS)
templates.env.globals.update(first_text=first_text, items_text=items_text, REJECT_CODES=REJECT_CODES)

common = APIRouter(include_in_schema=False)
review = APIRouter(include_in_schema=False)
records = APIRouter(include_in_schema=False)
PAGE_SIZE = 200
_NAME = re.compile(r"^[\w .@'-]{1,60}$")
_LANG_CODE = re.compile(LANG_PATTERN)


def services(request: Request) -> Services:
    return request.app.state.services


def guard(request: Request) -> Guard:
    return request.app.state.guard


def reviewer_of(request: Request) -> str:
    name = request.cookies.get(REVIEWER_COOKIE, "")
    if _NAME.fullmatch(name):
        return name
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "reviewer"


def render(request: Request, name: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
    token, new = guard(request).csrf_for(request)
    context = {
        "request": request,
        "csrf": token,
        "reviewer": reviewer_of(request),
        "review": request.app.state.review,
        "login": bool(request.app.state.settings.review_token.get_secret_value()),
        "done": "",
        **context,
    }
    found = re.search(r"\bIL-\d{4,}\b", str(context.get("done", "")))
    context["done_record"] = found.group(0) if found else None
    response = templates.TemplateResponse(request, name, context, status_code=status)
    if new:
        set_cookie(response, CSRF_COOKIE, token)
    return response


def error_page(request: Request, status: int, message: str) -> HTMLResponse:
    return render(request, "error.html", {"status": status, "message": message}, status)


async def checked_form(request: Request) -> Any:
    """The posted form, if its CSRF token matches this browser's cookie; else a refusal."""
    form = await request.form()
    if not guard(request).csrf_ok(request, str(form.get("csrf", ""))):
        raise ReviewError("this form is stale or came from another site (CSRF check failed): reload the page")
    return form


def see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


# -- common: home, login, who am I, API docs -----------------------------------------------------


@common.get("/")
def home(request: Request) -> Response:
    return see_other("/queue" if request.app.state.review else "/records")


@common.get("/login")
def login_form(request: Request, next: str = "/") -> HTMLResponse:
    return render(request, "login.html", {"next": next if next.startswith("/") else "/", "failed": False})


@common.post("/login")
async def login(request: Request) -> Response:
    form = await checked_form(request)
    target = str(form.get("next", "/"))
    target = target if target.startswith("/") and not target.startswith("//") else "/"
    if not guard(request).token_ok(str(form.get("token", ""))):
        return render(request, "login.html", {"next": target, "failed": True}, 401)
    response = see_other(target)
    set_cookie(response, SESSION_COOKIE, guard(request).session_value(), max_age=SESSION_MAX_AGE)
    name = str(form.get("reviewer", "")).strip()
    if _NAME.fullmatch(name):
        set_cookie(response, REVIEWER_COOKIE, name, max_age=365 * 86400)
    return response


@common.post("/whoami")
async def whoami(request: Request) -> Response:
    form = await checked_form(request)
    name = str(form.get("reviewer", "")).strip()
    if not _NAME.fullmatch(name):
        raise ReviewError("a reviewer name is 1-60 letters, digits, spaces or . @ ' -")
    back = str(form.get("back", "/"))
    response = see_other(back if back.startswith("/") and not back.startswith("//") else "/")
    set_cookie(response, REVIEWER_COOKIE, name, max_age=365 * 86400)
    return response


@common.get("/api/docs")
def api_docs(request: Request) -> HTMLResponse:
    schema = request.app.openapi()
    return render(request, "api_docs.html", {"schema": schema})


# -- the queue -------------------------------------------------------------------------------


def queue_filter(request: Request) -> QueueFilter:
    p = request.query_params
    sort = p.get("sort", "age")
    return QueueFilter(
        status=p.get("status", "pending"),
        org=p.get("org", ""),
        lang=p.get("lang", ""),
        host=p.get("host", ""),
        low=p.get("low", "") in ("1", "on", "true"),
        q=p.get("q", ""),
        sort=sort if sort in ("age", "-age", "score", "-score", "confidence") else "age",
    )


@review.get("/queue")
def queue_page(request: Request) -> HTMLResponse:
    rows = services(request).summaries()
    wanted = queue_filter(request)
    counts = {s: 0 for s in ("pending", "approved", "rejected")}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    shown = wanted.apply(rows)
    pages = max(1, -(-len(shown) // PAGE_SIZE))
    try:
        at = min(pages, max(1, int(request.query_params.get("page", "1"))))
    except ValueError:
        at = 1
    context = {
        "rows": shown[(at - 1) * PAGE_SIZE : at * PAGE_SIZE],
        "total": len(shown),
        "page": at,
        "pages": pages,
        "first": (at - 1) * PAGE_SIZE + 1,
        "counts": counts,
        "f": wanted,
        "orgs": sorted({r.org for r in rows if r.org}, key=str.casefold),
        "langs": sorted({r.language for r in rows if r.language}),
        "hosts": sorted({r.host for r in rows if r.host}),
        "now": now_utc(),
        "done": request.query_params.get("done", ""),
    }
    context["unreadable"] = services(request).unreadable_line()  # damaged draft files, named
    response = render(request, "queue.html", context)
    set_cookie(response, "incidents_queue", wanted.query())
    return response


@review.post("/queue/reject")
async def bulk_reject(request: Request) -> Response:
    form = await checked_form(request)
    ids = [valid_draft_id(str(v)) for v in form.getlist("ids")]
    if not ids:
        raise ReviewError("select the drafts to reject first")
    done, problems = await run_in_threadpool(
        services(request).reviews.reject_many,
        ids,
        reviewer=reviewer_of(request),
        reason=str(form.get("reason", "")),
        code=str(form.get("code", "other")),
    )
    note = f"rejected {len(done)} draft{'s' * (len(done) != 1)}" + (
        f"; {len(problems)} not: {problems[0]}" if problems else ""
    )
    back = request.cookies.get("incidents_queue", "")
    return see_other(f"/queue?{back}&{urlencode({'done': note})}".replace("?&", "?"))


# -- one draft -------------------------------------------------------------------------------


def _neighbours(request: Request, draft_id: str) -> tuple[str | None, str | None]:
    """The drafts before and after this one in the queue as the reviewer last filtered it."""
    from urllib.parse import parse_qs

    saved = parse_qs(request.cookies.get("incidents_queue", ""))
    wanted = QueueFilter(
        status=saved.get("status", ["pending"])[0],
        org=saved.get("org", [""])[0],
        lang=saved.get("lang", [""])[0],
        host=saved.get("host", [""])[0],
        low=bool(saved.get("low")),
        q=saved.get("q", [""])[0],
        sort=saved.get("sort", ["age"])[0],
    )
    ids = [r.draft_id for r in wanted.apply(services(request).summaries())]
    if draft_id not in ids:
        return None, ids[0] if ids else None
    at = ids.index(draft_id)
    return (ids[at - 1] if at > 0 else None), (ids[at + 1] if at + 1 < len(ids) else None)


def _draft_page(
    request: Request,
    draft: Draft,
    values: dict[str, Any] | None = None,
    problems: list[tuple[str, str]] | None = None,
    status: int = 200,
    message: str = "",
) -> HTMLResponse:
    svc = services(request)
    machine = draft.record.model_dump(mode="json")
    values = values or machine
    problems = problems or []
    doc = svc.document(draft)
    recs = svc.records()
    prev_id, next_id = _neighbours(request, draft.draft_id)
    context = {
        "draft": draft,
        "values": values,
        "langs": _with_added(
            languages_of(values, draft.source.language), request.query_params.get("add", "")
        ),
        "add_langs": [
            lang for lang in ("en", "ko", "ja") if lang not in languages_of(values, draft.source.language)
        ],
        "undo": _undo(request, draft),
        "groups": field_views(draft, values, doc, problems),
        "general_errors": [f"{f}: {w}" for f, w in problems if f.split(".")[0] in ("(record)", "org_slug")],
        "related_errors": [
            f"{f}: {w}" for f, w in problems if f.split(".")[0] in ("related", "recurrence_of", "sources")
        ],
        "source_kinds": list(vocabulary("source_kinds").terms),
        "doc": doc,
        "blocks": text_blocks(doc),
        "sections": doc.sections if doc else [],
        "related": suggestions(draft, values, recs) if draft.status == "pending" else [],
        "same_incident": same_incident(draft.record, recs)
        if draft.status == "pending" and not draft.supersedes
        else [],
        "orgs": sorted({r.org for r in recs if r.org}, key=str.casefold),
        "pickers": pickers(),
        "prev_id": prev_id,
        "next_id": next_id,
        "done": request.query_params.get("done", ""),
        "message": message,
        "reject_codes": REJECT_CODES,
    }
    return render(request, "draft.html", context, status)


def _with_added(langs: list[str], add: str) -> list[str]:
    """The draft's languages and one the reviewer asked to add (a translation), if it is a language code."""
    if add and add not in langs and _LANG_CODE.fullmatch(add):
        return [*langs, add]
    return langs


def _undo(request: Request, shown: Draft) -> dict[str, Any] | None:
    """After a rejection, the draft it rejected, while it still is rejected: `u` reopens it."""
    found = re.match(r"rejected (d-[0-9a-f]{16})$", request.query_params.get("done", ""))
    if not found:
        return None
    try:
        draft = services(request).draft(found.group(1)) if found.group(1) != shown.draft_id else shown
    except (ReviewError, InputError):
        return None
    if draft.status != "rejected":
        return None
    return {"draft_id": draft.draft_id, "version": draft.version}


@review.get("/drafts/{draft_id}")
def draft_page(request: Request, draft_id: str) -> HTMLResponse:
    return _draft_page(request, services(request).draft(draft_id))


@review.get("/drafts/{draft_id}/snapshot")
def snapshot(request: Request, draft_id: str) -> Response:
    draft = services(request).draft(draft_id)
    if not draft.source.snapshot:
        body = "<!doctype html><p>This draft has no archived snapshot.</p>"
    else:
        data, content_type, _url = services(request).snapshot(draft.source.snapshot)
        body = sanitize(data, content_type)
    return HTMLResponse(
        body,
        headers={
            "Content-Security-Policy": SNAPSHOT_CSP,
            "X-Frame-Options": "SAMEORIGIN",
            "Cache-Control": "private, max-age=300",
        },
    )


def _after_decision(request: Request, draft_id: str, note: str) -> RedirectResponse:
    """The next pending draft in the reviewer's queue, else the queue, with a note of what was done."""
    _prev, next_id = _neighbours(request, draft_id)
    done = urlencode({"done": note})
    if next_id:
        return see_other(f"/drafts/{next_id}?{done}")
    back = request.cookies.get("incidents_queue", "")
    return see_other(f"/queue?{back}&{done}".replace("?&", "?"))


_FIX_FIELDS = "Nothing was written: fix the marked fields."


async def _with_form_edits(
    request: Request, draft_id: str, act: Callable[[Draft, dict[str, Any], int], Response]
) -> Response:
    """The form's edits to a draft, for approve and save: `act(draft, edits, version)` runs when
    the form has no problems; the draft page with each problem beside its field (422, nothing
    written) when the form or the server's validation (RecordInvalid from `act`) finds some.
    Only reading the form waits on the event loop; the rest reads and fsyncs files, so it runs
    in the thread pool, where it does not hold up other reviewers' requests."""
    form = await checked_form(request)
    return await run_in_threadpool(_apply_form_edits, request, draft_id, form, act)


def _apply_form_edits(
    request: Request, draft_id: str, form: Any, act: Callable[[Draft, dict[str, Any], int], Response]
) -> Response:
    draft = services(request).draft(draft_id)
    machine = draft.record.model_dump(mode="json")
    values, problems = from_form(form, machine, languages_of(machine, draft.source.language))
    version = _version_of(form)
    if not problems:
        try:
            return act(draft, edits_between(machine, values), version)
        except RecordInvalid as exc:
            problems = exc.problems
    return _draft_page(request, draft, values, problems, 422, _FIX_FIELDS)


@review.post("/drafts/{draft_id}/approve")
async def approve(request: Request, draft_id: str) -> Response:
    def act(draft: Draft, edits: dict[str, Any], version: int) -> Response:
        record = services(request).reviews.approve(
            draft.draft_id, reviewer=reviewer_of(request), edits=edits, expected_version=version
        )
        return _after_decision(request, draft.draft_id, f"approved {draft.draft_id} as {record.id}")

    return await _with_form_edits(request, draft_id, act)


@review.post("/drafts/{draft_id}/save")
async def save(request: Request, draft_id: str) -> Response:
    """Keep the form's edits without deciding: the draft stays pending, one version on."""

    def act(draft: Draft, edits: dict[str, Any], version: int) -> Response:
        saved = services(request).reviews.save_edits(
            draft.draft_id, reviewer=reviewer_of(request), edits=edits, expected_version=version
        )
        note = f"saved edits to {saved.draft_id} (version {saved.version})"
        return see_other(f"/drafts/{saved.draft_id}?{urlencode({'done': note})}")

    return await _with_form_edits(request, draft_id, act)


def _version_of(form: Any) -> int:
    try:
        return int(str(form.get("version", "")))
    except ValueError as exc:
        raise ReviewError("the form lacks the draft's version: reload the page") from exc


@review.post("/drafts/{draft_id}/reject")
async def reject(request: Request, draft_id: str) -> Response:
    form = await checked_form(request)

    def decide() -> Response:  # file reads and fsyncs: in the thread pool, as for approvals
        draft = services(request).draft(draft_id)
        services(request).reviews.reject(
            draft.draft_id,
            reviewer=reviewer_of(request),
            reason=str(form.get("reason", "")),
            code=str(form.get("code", "other")),
            expected_version=_version_of(form),
        )
        return _after_decision(request, draft.draft_id, f"rejected {draft.draft_id}")

    return await run_in_threadpool(decide)


@review.post("/drafts/{draft_id}/reopen")
async def reopen(request: Request, draft_id: str) -> Response:
    form = await checked_form(request)
    draft = await run_in_threadpool(
        services(request).reviews.reopen,
        valid_draft_id(draft_id),
        reviewer=reviewer_of(request),
        reason=str(form.get("reason", "")),
        expected_version=_version_of(form),
    )
    return see_other(f"/drafts/{draft.draft_id}?{urlencode({'done': f'reopened {draft.draft_id}'})}")


@review.post("/drafts/{draft_id}/add-source")
async def add_source(request: Request, draft_id: str) -> Response:
    """Approve a draft as another write-up of a record: its source added to that record."""
    form = await checked_form(request)

    def decide() -> Response:
        record = services(request).reviews.approve(
            valid_draft_id(draft_id),
            reviewer=reviewer_of(request),
            expected_version=_version_of(form),
            source_of=str(form.get("record_id", "")),
        )
        return _after_decision(request, draft_id, f"approved {draft_id} as a source of {record.id}")

    return await run_in_threadpool(decide)


@review.post("/records/{record_id}/correct")
async def correct_record(request: Request, record_id: str) -> Response:
    """Correct this record: the form's JSON edits written as its next version."""
    form = await checked_form(request)
    try:
        edits = json.loads(str(form.get("edits", "")))
    except json.JSONDecodeError as exc:
        raise RecordInvalid(f"the edits are not valid JSON: {exc}") from exc
    record = await run_in_threadpool(
        services(request).reviews.correct, record_id, reviewer=reviewer_of(request), edits=edits
    )
    return see_other(f"/records/{record.id}?{urlencode({'done': f'corrected {record.id}'})}")


# -- records -------------------------------------------------------------------------------


@records.get("/records")
def records_page(request: Request) -> HTMLResponse:
    p = request.query_params
    recs = services(request).records()
    q = p.get("q", "").casefold().strip()
    org, cause, component = p.get("org", ""), p.get("root_cause", ""), p.get("component", "")
    shown = [
        r
        for r in recs
        if (not org or r.org == org)
        and (not cause or r.root_cause == cause)
        and (not component or component in r.components)
        and (not q or q in f"{r.id} {r.org} {' '.join(r.title.values())}".casefold())
    ]
    shown.sort(key=lambda r: (r.date or "", r.id), reverse=True)
    context = {
        "rows": shown,
        "orgs": sorted({r.org for r in recs if r.org}, key=str.casefold),
        "causes": sorted({r.root_cause for r in recs}),
        "components": sorted({c for r in recs for c in r.components}),
        "f": {"q": p.get("q", ""), "org": org, "root_cause": cause, "component": component},
    }
    return render(request, "records.html", context)


@records.get("/records/{record_id}")
def record_page(request: Request, record_id: str) -> HTMLResponse:
    svc = services(request)
    record = svc.record(record_id)
    related = rank_related(record, svc.records(), exclude=record.id, limit=12)
    groups: dict[str, list[Any]] = {}
    for rel in related:
        key = (
            f"Same root cause: {rel.root_cause}"
            if rel.root_cause
            else f"Shared components: {', '.join(rel.components)}"
        )
        groups.setdefault(key, []).append(rel)
    titles = {r.id: first_text(r.title) for r in svc.records()}
    lang = next(iter(record.title), "en")
    return render(
        request,
        "record.html",
        {
            "r": record,
            "lang": lang,
            "related_groups": groups,
            "titles": titles,
            "quote": quote,
            "edits_help": EDITS_HELP,
            "gone": gone_sources(svc.settings.records_dir, record),
        },
    )
