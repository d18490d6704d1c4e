"""Server-rendered pages: the queue, a draft beside its archived source, decisions, records."""

from __future__ import annotations

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
from flows.review import REJECT_CODES, Conflict
from flows.triage import LANES
from flows.web.flash import Stash, flash_of, flash_url
from flows.web.forms import edits_between, from_form, items_text, languages_of, local_language
from flows.web.security import (
    CSRF_COOKIE,
    REVIEWER_COOKIE,
    SESSION_COOKIE,
    SESSION_MAX_AGE,
    SNAPSHOT_CSP,
    CsrfFailed,
    Guard,
    NoReviewer,
    check_reviewer,
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
_LANG_CODE = re.compile(LANG_PATTERN)


def services(request: Request) -> Services:
    return request.app.state.services


def guard(request: Request) -> Guard:
    return request.app.state.guard


def stash(request: Request) -> Stash:
    return request.app.state.stash


def reviewer_of(request: Request) -> str:
    """The name this browser gave (its cookie), or "" when it gave none: never a guess."""
    name = request.cookies.get(REVIEWER_COOKIE, "")
    try:
        return check_reviewer(name)
    except NoReviewer:
        return ""


def decider(request: Request, form: Any) -> str:
    """Who takes a decision: the name typed in the form, else the one this browser gave before;
    NoReviewer when the person gave none (there is no default: not the server's account)."""
    typed = str(form.get("reviewer", "")).strip()
    if typed:
        return check_reviewer(typed)
    known = reviewer_of(request)
    if not known:
        raise NoReviewer("say who you are first: type your name in the Reviewer box, then decide")
    return known


def remember(response: Response, request: Request, name: str) -> Response:
    """Keep a name typed into a form for this browser's next decisions."""
    if name and name != reviewer_of(request):
        set_cookie(response, REVIEWER_COOKIE, name, max_age=365 * 86400)
    return response


def render(request: Request, name: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
    token, new = guard(request).csrf_for(request)
    context = {
        "request": request,
        "csrf": token,
        "reviewer": reviewer_of(request),
        "review": request.app.state.review,
        "login": bool(request.app.state.settings.review_token.get_secret_value()),
        "flash": flash_of(request.query_params),
        "signin_page": False,
        **context,
    }
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
        raise CsrfFailed("this form is stale or came from another site (CSRF check failed): reload the page")
    return form


def see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


# -- common: home, login, who am I, API docs -----------------------------------------------------


@common.get("/")
def home(request: Request) -> Response:
    return see_other("/queue" if request.app.state.review else "/records")


@common.get("/login")
def login_form(request: Request, next: str = "/") -> HTMLResponse:
    return render(
        request,
        "login.html",
        {"next": next if next.startswith("/") else "/", "failed": False, "signin_page": True},
    )


@common.post("/login")
async def login(request: Request) -> Response:
    form = await checked_form(request)
    target = str(form.get("next", "/"))
    target = target if target.startswith("/") and not target.startswith("//") else "/"
    if not guard(request).token_ok(str(form.get("token", ""))):
        return render(request, "login.html", {"next": target, "failed": True, "signin_page": True}, 401)
    response = see_other(target)
    set_cookie(response, SESSION_COOKIE, guard(request).session_value(), max_age=SESSION_MAX_AGE)
    typed = str(form.get("reviewer", "")).strip()
    if typed:
        remember(response, request, check_reviewer(typed))
    return response


@common.post("/whoami")
async def whoami(request: Request) -> Response:
    form = await checked_form(request)
    name = check_reviewer(str(form.get("reviewer", "")))
    back = str(form.get("back", "/"))
    back = back if back.startswith("/") and not back.startswith("//") else "/"
    response = see_other(flash_url(back.split("?")[0], "named"))
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
        lane=p.get("lane", "") if p.get("lane", "") in LANES else "",
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
        "undo_batch": _bulk_undo(request),
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
    who = decider(request, form)
    done, problems = await run_in_threadpool(
        services(request).reviews.reject_many,
        ids,
        reviewer=who,
        reason=str(form.get("reason", "")),
        code=str(form.get("code", "other")),
        comment=_comment(form),
    )
    # The undo reopens exactly these drafts, each only while it is still at the version this
    # rejection left it at.
    rejected = {d.draft_id: d.version for d in (services(request).draft(i) for i in done)}
    batch = stash(request).put(request.cookies.get(CSRF_COOKIE, ""), rejected)
    back = request.cookies.get("incidents_queue", "")
    code = "bulk-rejected-some" if problems else "bulk-rejected"
    extra = {"failed": len(problems)} if problems else {}
    url = flash_url(f"/queue?{back}" if back else "/queue", code, n=len(done), batch=batch, **extra)
    return remember(see_other(url), request, who)


def _bulk_undo(request: Request) -> dict[str, Any] | None:
    """After a bulk rejection, its undo (while this browser's stash still holds it)."""
    flash = flash_of(request.query_params)
    if flash is None or not flash.batch:
        return None
    rejected = stash(request).get(request.cookies.get(CSRF_COOKIE, ""), flash.batch)
    return {"batch": flash.batch, "n": len(rejected)} if rejected else None


@review.post("/queue/undo")
async def bulk_undo(request: Request) -> Response:
    """Reopen exactly the drafts one bulk rejection rejected (an audit line each); a draft changed
    since (reopened, or decided again) is left as it is."""
    form = await checked_form(request)
    who = decider(request, form)
    rejected = stash(request).pop(request.cookies.get(CSRF_COOKIE, ""), str(form.get("batch", "")))
    if not rejected:
        raise ReviewError("that bulk rejection can no longer be undone here: reopen drafts one by one")

    def undo() -> tuple[int, int]:
        reopened = failed = 0
        for draft_id, version in rejected.items():
            try:
                services(request).reviews.reopen(
                    draft_id,
                    reviewer=who,
                    reason="undo of a bulk rejection",
                    expected_version=version,
                    comment=_comment(form),
                )
                reopened += 1
            except ReviewError:
                failed += 1
        return reopened, failed

    reopened, failed = await run_in_threadpool(undo)
    code = "bulk-undone-some" if failed else "bulk-undone"
    extra = {"failed": failed} if failed else {}
    return remember(see_other(flash_url("/queue", code, n=reopened, **extra)), request, who)


def _comment(form: Any) -> str | None:
    """The optional comment on a decision (kept in the audit log), at most 2,000 characters."""
    text = str(form.get("comment", "")).strip()
    return text[:2000] or None


# -- one draft -------------------------------------------------------------------------------


def _position(request: Request, draft_id: str) -> tuple[str | None, str | None, int | None, int]:
    """The drafts before and after this one in the queue as the reviewer last filtered it, this
    one's place in it (1-based; None when it is not in it) and the queue's length."""
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
        lane=saved.get("lane", [""])[0],
    )
    ids = [r.draft_id for r in wanted.apply(services(request).summaries())]
    if draft_id not in ids:
        return None, ids[0] if ids else None, None, len(ids)
    at = ids.index(draft_id)
    before = ids[at - 1] if at > 0 else None
    return before, (ids[at + 1] if at + 1 < len(ids) else None), at + 1, len(ids)


def _neighbours(request: Request, draft_id: str) -> tuple[str | None, str | None]:
    before, after, _at, _total = _position(request, draft_id)
    return before, after


def _draft_page(
    request: Request,
    draft: Draft,
    values: dict[str, Any] | None = None,
    problems: list[tuple[str, str]] | None = None,
    status: int = 200,
    message: str = "",
    conflict: dict[str, Any] | None = None,
    kept: dict[str, str] | None = None,
) -> HTMLResponse:
    svc = services(request)
    machine = draft.record.model_dump(mode="json")
    values = values or machine
    problems = problems or []
    doc = svc.document(draft)
    recs = svc.records()
    prev_id, next_id, place, queue_length = _position(request, draft.draft_id)
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
        "general_errors": [
            f"{f}: {w}" for f, w in problems if f.split(".")[0] in ("(record)", "org_slug", "reviewer")
        ],
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
        "pickers": pickers(local_language(draft.source.language)),
        "prev_id": prev_id,
        "next_id": next_id,
        "place": place,
        "queue_length": queue_length,
        "message": message,
        "reject_codes": REJECT_CODES,
        "conflict": conflict,
        "kept": kept or {},
        "first_problem": _first_problem(problems),
        "reviewer_changes": _reviewer_changes(request, draft),
    }
    return render(request, "draft.html", context, status)


def _first_problem(problems: list[tuple[str, str]]) -> str | None:
    """The id of the first field the page marks (in the page's order), where focus goes after a 422."""
    from flows.web.forms import FIELDS

    named = {f.split(".")[0] for f, _why in problems}
    if "reviewer" in named:
        return "in-reviewer"
    for name in FIELDS:
        if name in named:
            return f"in-{name}"
    if named & {"related", "recurrence_of"}:
        return "in-related"
    return None


def _reviewer_changes(request: Request, draft: Draft) -> list[dict[str, Any]]:
    """What reviewers changed from the machine draft, from the audit log: saved edits and the
    approval's own diff, each with who, when and the comment."""
    out: list[dict[str, Any]] = []
    if not any(h.action in ("edited", "approved") for h in draft.history):
        return out  # nobody changed it: the audit log need not be read
    for entry in services(request).reviews.audit.entries():
        if entry.get("draft_id") != draft.draft_id or not entry.get("changes"):
            continue
        for change in entry["changes"]:
            out.append(
                {
                    "field": change.get("field"),
                    "from": change.get("from"),
                    "to": change.get("to"),
                    "by": entry.get("by"),
                    "at": entry.get("at"),
                    "action": entry.get("action"),
                    "comment": entry.get("comment"),
                }
            )
    return out


def _with_added(langs: list[str], add: str) -> list[str]:
    """The draft's languages and one the reviewer asked to add (a translation), if it is a language code."""
    if add and add not in langs and _LANG_CODE.fullmatch(add):
        return [*langs, add]
    return langs


def _undo(request: Request, shown: Draft) -> dict[str, Any] | None:
    """After a rejection, the draft it rejected, while it still is rejected: `u` reopens it."""
    flash = flash_of(request.query_params)
    rejected = request.query_params.get("draft") if flash and flash.code == "rejected" else None
    if not rejected:
        return None
    try:
        draft = services(request).draft(rejected) if rejected != shown.draft_id else shown
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


def _after_decision(request: Request, draft_id: str, code: str, **ids: object) -> RedirectResponse:
    """The next pending draft in the reviewer's queue, else the queue, with a note of what was done."""
    _prev, next_id = _neighbours(request, draft_id)
    if next_id:
        return see_other(flash_url(f"/drafts/{next_id}", code, **ids))
    back = request.cookies.get("incidents_queue", "")
    return see_other(flash_url(f"/queue?{back}" if back else "/queue", code, **ids))


def _conflict_redirect(request: Request, draft_id: str, form: Any, action: str) -> RedirectResponse:
    """After a version conflict: keep what the reviewer posted and show it on a page that can be
    reloaded (GET) rather than a 409 that re-posts on reload."""
    items = [(k, str(v)) for k, v in form.multi_items() if k != "csrf"]
    key = stash(request).put(request.cookies.get(CSRF_COOKIE, ""), {"items": items, "action": action})
    return see_other(f"/drafts/{draft_id}/conflict?{urlencode({'kept': key})}")


@review.get("/drafts/{draft_id}/conflict")
def conflict_page(request: Request, draft_id: str, kept: str = "") -> HTMLResponse:
    """The draft as it is now, with the losing reviewer's edits in the form (nothing was written)."""
    from starlette.datastructures import FormData

    draft = services(request).draft(draft_id)
    found = stash(request).get(request.cookies.get(CSRF_COOKIE, ""), kept)
    if not found:
        return _draft_page(request, draft)
    form = FormData(found["items"])
    machine = draft.record.model_dump(mode="json")
    values, _problems = from_form(form, machine, languages_of(machine, draft.source.language))
    seen = _seen_version(form)
    clashes = _take_theirs(request, draft, values, seen) if seen else []
    last = draft.history[-1] if draft.history else None
    record_id = next((h.record_id for h in draft.history if h.record_id), None)
    conflict = {
        "action": found["action"],
        "status": draft.status,
        "version": draft.version,
        "last": last,
        "record_id": record_id,
        # What happened since the version the reviewer saw (one history entry per version).
        "since": draft.history[_seen_version(form) :] if _seen_version(form) else [],
    }
    reject_kept = {k: str(form.get(k, "")) for k in ("code", "reason", "comment")}
    return _draft_page(
        request,
        draft,
        # The reviewer's edits, even when the draft is decided now (read-only then, to copy from).
        values if found["action"] in ("approve", "save") else None,
        clashes,
        status=409,
        message="Nothing was written: this draft changed while you had it open.",
        conflict=conflict,
        kept=reject_kept | {"comment": str(form.get("comment", ""))},
    )


_FIX_FIELDS = "Nothing was written: fix the marked fields."


async def _with_form_edits(
    request: Request,
    draft_id: str,
    act: Callable[[Draft, dict[str, Any], int, str], Response],
    comment: list[str | None],
) -> Response:
    """The form's edits to a draft, for approve and save: `act(draft, edits, version)` runs when
    the form has no problems; the draft page with each problem beside its field (422, nothing
    written) when the form or the server's validation (RecordInvalid from `act`) finds some.
    Only reading the form waits on the event loop; the rest reads and fsyncs files, so it runs
    in the thread pool, where it does not hold up other reviewers' requests."""
    form = await checked_form(request)
    comment[0] = _comment(form)
    return await run_in_threadpool(_apply_form_edits, request, draft_id, form, act)


def _apply_form_edits(
    request: Request,
    draft_id: str,
    form: Any,
    act: Callable[[Draft, dict[str, Any], int, str], Response],
) -> Response:
    draft = services(request).draft(draft_id)
    machine = draft.record.model_dump(mode="json")
    values, problems = from_form(form, machine, languages_of(machine, draft.source.language))
    version = _version_of(form)
    try:
        who = decider(request, form)
    except NoReviewer as exc:
        problems = [("reviewer", str(exc)), *problems]
        who = ""
    if not problems:
        try:
            return remember(act(draft, edits_between(machine, values), version, who), request, who)
        except RecordInvalid as exc:
            problems = exc.problems
        except Conflict:
            return _conflict_redirect(request, draft.draft_id, form, "approve")
    return _draft_page(
        request, draft, values, problems, 422, _FIX_FIELDS, kept={"comment": str(form.get("comment", ""))}
    )


@review.post("/drafts/{draft_id}/approve")
async def approve(request: Request, draft_id: str) -> Response:
    form_comment: list[str | None] = [None]

    def act(draft: Draft, edits: dict[str, Any], version: int, who: str) -> Response:
        record = services(request).reviews.approve(
            draft.draft_id,
            reviewer=who,
            edits=edits,
            expected_version=version,
            comment=form_comment[0],
        )
        return _after_decision(request, draft.draft_id, "approved", draft=draft.draft_id, record=record.id)

    return await _with_form_edits(request, draft_id, act, form_comment)


@review.post("/drafts/{draft_id}/save")
async def save(request: Request, draft_id: str) -> Response:
    """Keep the form's edits without deciding: the draft stays pending, one version on."""

    form_comment: list[str | None] = [None]

    def act(draft: Draft, edits: dict[str, Any], version: int, who: str) -> Response:
        saved = services(request).reviews.save_edits(
            draft.draft_id, reviewer=who, edits=edits, expected_version=version, comment=form_comment[0]
        )
        return see_other(
            flash_url(f"/drafts/{saved.draft_id}", "saved", draft=saved.draft_id, version=saved.version)
        )

    return await _with_form_edits(request, draft_id, act, form_comment)


def _take_theirs(request: Request, draft: Draft, values: dict[str, Any], seen: int) -> list[tuple[str, str]]:
    """Merge the edits saved since version `seen` into the losing reviewer's form values: a field
    she left as it was takes the new value; one she changed too keeps hers and is marked."""
    entries = [e for e in services(request).reviews.audit.entries() if e.get("draft_id") == draft.draft_id]
    current = draft.record.model_dump(mode="json")
    clashes: list[tuple[str, str]] = []
    for entry in entries[seen - 1 :]:  # one audit line per version after the first
        for change in entry.get("changes") or []:
            path = str(change.get("field", "")).split(".")
            mine = _at(values, path)
            if mine == change.get("from"):
                _put(values, path, _at(current, path))
            elif mine != change.get("to"):
                clashes.append(
                    (
                        change["field"],
                        f"{entry.get('by')} changed this to {change.get('to')!r} meanwhile; "
                        "yours is kept here: choose one",
                    )
                )
    return clashes


def _at(data: Any, path: list[str]) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _put(data: dict[str, Any], path: list[str], value: Any) -> None:
    for key in path[:-1]:
        nxt = data.get(key)
        if not isinstance(nxt, dict):
            nxt = {}
            data[key] = nxt
        data = nxt
    if value is None:
        data.pop(path[-1], None)
    else:
        data[path[-1]] = value


def _seen_version(form: Any) -> int | None:
    try:
        return max(1, int(str(form.get("version", ""))))
    except ValueError:
        return None


def _version_of(form: Any) -> int:
    try:
        return int(str(form.get("version", "")))
    except ValueError as exc:
        raise ReviewError("the form lacks the draft's version: reload the page") from exc


@review.post("/drafts/{draft_id}/reject")
async def reject(request: Request, draft_id: str) -> Response:
    form = await checked_form(request)

    who = decider(request, form)

    def decide() -> Response:  # file reads and fsyncs: in the thread pool, as for approvals
        draft = services(request).draft(draft_id)
        try:
            services(request).reviews.reject(
                draft.draft_id,
                reviewer=who,
                reason=str(form.get("reason", "")),
                code=str(form.get("code", "other")),
                expected_version=_version_of(form),
                comment=_comment(form),
            )
        except Conflict:
            return _conflict_redirect(request, draft.draft_id, form, "reject")
        return _after_decision(request, draft.draft_id, "rejected", draft=draft.draft_id)

    return remember(await run_in_threadpool(decide), request, who)


@review.post("/drafts/{draft_id}/reopen")
async def reopen(request: Request, draft_id: str) -> Response:
    form = await checked_form(request)
    who = decider(request, form)
    draft = await run_in_threadpool(
        services(request).reviews.reopen,
        valid_draft_id(draft_id),
        reviewer=who,
        reason=str(form.get("reason", "")),
        expected_version=_version_of(form),
        comment=_comment(form),
    )
    response = see_other(flash_url(f"/drafts/{draft.draft_id}", "reopened", draft=draft.draft_id))
    return remember(response, request, who)


@review.get("/stats")
def stats_page(request: Request) -> HTMLResponse:
    """What `incidents review stats` prints: acceptance, rejection reasons, most-edited fields."""
    return render(request, "stats.html", {"stats": services(request).reviews.stats()})


@review.post("/drafts/{draft_id}/add-source")
async def add_source(request: Request, draft_id: str) -> Response:
    """Approve a draft as another write-up of a record: its source added to that record."""
    form = await checked_form(request)

    who = decider(request, form)

    def decide() -> Response:
        record = services(request).reviews.approve(
            valid_draft_id(draft_id),
            reviewer=who,
            expected_version=_version_of(form),
            source_of=str(form.get("record_id", "")),
            comment=str(form.get("comment", "")) or None,
        )
        return _after_decision(request, draft_id, "source-added", draft=draft_id, record=record.id)

    return remember(await run_in_threadpool(decide), request, who)


@review.post("/records/{record_id}/correct")
async def correct_record(request: Request, record_id: str) -> Response:
    """Correct this record: the form's JSON edits written as its next version."""
    form = await checked_form(request)
    try:
        edits = json.loads(str(form.get("edits", "")))
    except json.JSONDecodeError as exc:
        raise RecordInvalid(f"the edits are not valid JSON: {exc}") from exc
    who = decider(request, form)
    record = await run_in_threadpool(
        services(request).reviews.correct,
        record_id,
        reviewer=who,
        edits=edits,
        comment=str(form.get("comment", "")) or None,
    )
    response = see_other(flash_url(f"/records/{record.id}", "corrected", record=record.id))
    return remember(response, request, who)


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
