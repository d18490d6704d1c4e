"""The read-only JSON API (/api/...) and the library pages (/library/{en,ko}/...), as one FastAPI router.

The review app includes this router; `incidents serve` runs it alone (flows/library/app.py). Every
route only reads: the index refreshes itself from records/ on each request.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import APIRouter, HTTPException, Request
from fastapi import Query as Param
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, StreamingResponse
from pydantic import ValidationError

from flows.library.index import MAX_PAGE_SIZE, MAX_RELATED, LibraryIndex, Query, Sort
from flows.library.models import (
    UI_LANGUAGES,
    Incident,
    RelatedIncident,
    SearchResult,
    Topic,
    Vocab,
)
from flows.library.pages import (
    STATIC,
    TOPIC_PAGE_SIZE,
    Links,
    error_page,
    incident_page,
    not_found_page,
    search_page,
    topic_page,
)
from flows.library.terms import vocab as vocabularies
from flows.settings import Settings
from schema.errors import IngestError

PAGES = "/library/"


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


Terms = Annotated[list[str], Param()]


def _query(
    q: str,
    org: str | None,
    root_cause: list[str],
    component: list[str],
    contributing: list[str],
    symptom: list[str],
    domain: list[str],
    severity: list[str],
    since: str | None,
    until: str | None,
    lang: str | None,
    page: int,
    page_size: int,
    sort: Sort,
) -> Query:
    return Query(
        q=q,
        org=org or None,
        root_cause=tuple(t for t in root_cause if t),
        component=tuple(t for t in component if t),
        contributing=tuple(t for t in contributing if t),
        symptom=tuple(t for t in symptom if t),
        domain=tuple(t for t in domain if t),
        severity=tuple(t for t in severity if t),
        since=since or None,
        until=until or None,
        lang=lang or None,
        page=page,
        page_size=page_size,
        sort=sort,
    )


def _ui_of(request: Request) -> str:
    """The interface language a visitor's browser asks for first among ours (English otherwise)."""
    for part in request.headers.get("accept-language", "").split(","):
        lang = part.split(";")[0].strip().lower()[:2]
        if lang in UI_LANGUAGES:
            return lang
    return "en"


def router(settings: Settings, *, index: LibraryIndex | None = None) -> APIRouter:
    """The library's routes over the data directory's records/."""
    library = index or LibraryIndex.for_settings(settings)
    links = Links(base=PAGES)
    api = APIRouter()

    def search(query: Query) -> SearchResult:
        try:
            return library.search(query)
        except IngestError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from None

    def topic_of(kind: str, term: str, page: int, page_size: int) -> Topic:
        try:
            return library.topic(kind, term, page=page, page_size=page_size)
        except IngestError as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from None

    # ---- JSON API ----------------------------------------------------------------------------

    @api.get("/api/incidents", response_model=SearchResult, tags=["library"])
    def list_incidents(
        q: str = "",
        org: str | None = None,
        root_cause: Terms = [],  # noqa: B006 (FastAPI copies defaults)
        component: Terms = [],  # noqa: B006
        contributing: Terms = [],  # noqa: B006
        symptom: Terms = [],  # noqa: B006
        domain: Terms = [],  # noqa: B006
        severity: Terms = [],  # noqa: B006
        since: Annotated[str | None, Param(pattern=r"^\d{4}-\d{2}-\d{2}$")] = None,
        until: Annotated[str | None, Param(pattern=r"^\d{4}-\d{2}-\d{2}$")] = None,
        lang: str | None = None,
        page: Annotated[int, Param(ge=1)] = 1,
        page_size: Annotated[int, Param(ge=1, le=MAX_PAGE_SIZE)] = 20,
        sort: Sort = "relevance",
    ) -> SearchResult:
        """Search or list the records: words (any language), filters, bm25 ranking, facet counts."""
        return search(
            _query(
                q,
                org,
                root_cause,
                component,
                contributing,
                symptom,
                domain,
                severity,
                since,
                until,
                lang,
                page,
                page_size,
                sort,
            )
        )

    @api.get("/api/incidents.jsonl", tags=["library"])
    def dump() -> StreamingResponse:
        """Every record, one compact JSON object a line, by id."""

        def lines() -> Iterator[str]:
            for line in library.record_lines():
                yield line + "\n"

        return StreamingResponse(
            lines(),
            media_type="application/x-ndjson",
            headers={"Content-Disposition": 'inline; filename="records.jsonl"'},
        )

    @api.get("/api/incidents/{record_id}", response_model=Incident, tags=["library"])
    def get_incident(record_id: str) -> Incident:
        """One record in full, with the records related to it."""
        found = library.incident(record_id)
        if found is None:
            raise HTTPException(status_code=404, detail=f"no incident {record_id} in the records")
        return found

    @api.get("/api/incidents/{record_id}/related", response_model=list[RelatedIncident], tags=["library"])
    def related(
        record_id: str, limit: Annotated[int, Param(ge=1, le=MAX_RELATED)] = MAX_RELATED
    ) -> list[RelatedIncident]:
        """Records sharing the root cause or components (never a generic one alone), best first, with why."""
        record = library.get(record_id)
        if record is None:
            raise HTTPException(status_code=404, detail=f"no incident {record_id} in the records")
        return library.related(record, limit=limit)

    @api.get("/api/topics/{kind}/{term}", response_model=Topic, tags=["library"])
    def topic(
        kind: str,
        term: str,
        page: Annotated[int, Param(ge=1)] = 1,
        page_size: Annotated[int, Param(ge=1, le=MAX_PAGE_SIZE)] = 20,
    ) -> Topic:
        """Records sharing one vocabulary term, newest first."""
        return topic_of(kind, term, page, page_size)

    @api.get("/api/vocab", response_model=Vocab, tags=["library"])
    def vocab_all() -> Vocab:
        """Every vocabulary, each term with its English and Korean labels."""
        return vocabularies()

    @api.get("/api/vocab/{kind}", response_model=Vocab, tags=["library"])
    def vocab_one(kind: str) -> Vocab:
        try:
            return vocabularies(kind)
        except IngestError as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from None

    # ---- pages -------------------------------------------------------------------------------

    @api.get("/library", include_in_schema=False)
    @api.get("/library/", include_in_schema=False)
    def pages_home(request: Request) -> RedirectResponse:
        return RedirectResponse(f"{PAGES}{_ui_of(request)}/", status_code=307)

    @api.get("/library/static/library.css", include_in_schema=False)
    def stylesheet() -> FileResponse:
        return FileResponse(STATIC / "library.css", media_type="text/css")

    def html_error(ui: str, message: str, status: int, switch: str) -> HTMLResponse:
        ui = ui if ui in UI_LANGUAGES else "en"
        return HTMLResponse(error_page(ui, links, message, switch=switch), status_code=status)

    def page_number(value: str) -> int:
        if not value.isdigit() or int(value) < 1:
            raise IngestError(f"page must be a whole number from 1, not {value[:40]!r}")
        return int(value)

    @api.get("/library/{ui}/", response_class=HTMLResponse, include_in_schema=False)
    def search_html(
        request: Request,
        ui: str,
        q: str = "",
        org: str | None = None,
        root_cause: Terms = [],  # noqa: B006
        component: Terms = [],  # noqa: B006
        contributing: Terms = [],  # noqa: B006
        symptom: Terms = [],  # noqa: B006
        domain: Terms = [],  # noqa: B006
        severity: Terms = [],  # noqa: B006
        since: str | None = None,
        until: str | None = None,
        lang: str | None = None,
        page: str = "1",
    ) -> HTMLResponse:
        switch = PAGES + "{ui}/" + (f"?{request.url.query}" if request.url.query else "")
        if ui not in UI_LANGUAGES:
            return html_error("en", f"no pages in {ui[:20]!r}: use /library/en/ or /library/ko/", 404, switch)
        try:
            query = _query(
                q, org, root_cause, component, contributing, symptom, domain, severity,
                since, until, lang, page_number(page), 20, "relevance",
            )  # fmt: skip
            result = library.search(query)
        except (IngestError, ValidationError) as exc:
            message = str(exc) if isinstance(exc, IngestError) else _first_error(exc)
            return html_error(ui, message, 422, switch)
        return HTMLResponse(search_page(ui, links, result, switch=switch))

    @api.get("/library/{ui}/incidents/{record_id}", response_class=HTMLResponse, include_in_schema=False)
    def incident_html(ui: str, record_id: str) -> HTMLResponse:
        switch = PAGES + "{ui}/incidents/" + record_id
        if ui not in UI_LANGUAGES:
            return html_error("en", f"no pages in {ui[:20]!r}: use /library/en/ or /library/ko/", 404, switch)
        found = library.incident(record_id)
        if found is None:
            return HTMLResponse(not_found_page(ui, links, record_id, switch=switch), status_code=404)
        return HTMLResponse(incident_page(ui, links, found, switch=switch))

    @api.get("/library/{ui}/topics/{kind}/{term}", response_class=HTMLResponse, include_in_schema=False)
    def topic_html(ui: str, kind: str, term: str, page: str = "1") -> HTMLResponse:
        switch = PAGES + "{ui}/topics/" + f"{kind}/{term}"
        if ui not in UI_LANGUAGES:
            return html_error("en", f"no pages in {ui[:20]!r}: use /library/en/ or /library/ko/", 404, switch)
        try:
            found = library.topic(kind, term, page=page_number(page), page_size=TOPIC_PAGE_SIZE)
        except IngestError as exc:
            return html_error(ui, str(exc), 404, switch)
        return HTMLResponse(topic_page(ui, links, found, switch=switch))

    return api
