"""The app factory: `create_app(settings)` mounts the review pages, the JSON API and the records pages.

Other read-only parts (the records library) add their router with one `app.include_router(...)`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles

from flows.library.api import router as library_router
from flows.review import Conflict
from flows.settings import Settings
from flows.web.flash import Stash
from flows.web.security import AuthMiddleware, CsrfFailed, Guard, NoReviewer, check_bind
from flows.web.services import Services
from schema.errors import IngestError, InputError, RecordInvalid, ReviewError

HERE = Path(__file__).parent


def create_app(settings: Settings, *, review: bool = True) -> FastAPI:
    """The web app over `settings.data_dir`; `review=False` leaves out the queue and decisions
    (records pages and API only)."""
    from flows.web import api, pages, triage

    app = FastAPI(
        title="incident-ingest review",
        description="The review queue and records of one data directory. The JSON API names the "
        "reviewer in the X-Reviewer header; decisions carry the draft version they were taken on.",
        version="1",
        docs_url=None,  # Swagger UI loads from a CDN; /api/docs is our own page of the OpenAPI schema
        redoc_url=None,
    )
    guard = Guard(settings.review_token.get_secret_value())
    app.state.settings = settings
    app.state.services = Services(settings)
    app.state.guard = guard
    app.state.review = review
    app.state.stash = Stash()
    app.add_middleware(AuthMiddleware, guard=guard)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.include_router(pages.common)
    app.include_router(pages.records)
    app.include_router(api.records)
    # The records library's read-only API and pages (the same routes `incidents serve` runs alone).
    app.include_router(library_router(settings))
    if review:
        app.include_router(pages.review)
        app.include_router(triage.router)  # the skipped pages (the gate's triage)
        app.include_router(api.review)

    @app.exception_handler(IngestError)
    async def _ingest_error(request: Request, exc: IngestError) -> Any:
        status = 400
        body: dict[str, Any] = {"error": str(exc)}
        if isinstance(exc, Conflict):
            status, body = 409, exc.as_dict()
        elif isinstance(exc, CsrfFailed):
            status = 403
        elif isinstance(exc, NoReviewer):
            status = 400
        elif isinstance(exc, RecordInvalid):
            status = 422
            body["problems"] = [{"field": f, "why": w} for f, w in exc.problems]
        elif isinstance(exc, InputError | ReviewError) and str(exc).startswith("no "):
            status = 404
        elif isinstance(exc, ReviewError):
            status = 409
        if request.url.path.startswith("/api/"):
            return JSONResponse(body, status_code=status)
        return pages.error_page(request, status, str(exc))

    return app


def serve(settings: Settings, host: str, port: int) -> None:
    """Run the app under uvicorn until interrupted (refusing a public address without a token)."""
    import uvicorn

    check_bind(host, settings.review_token.get_secret_value())
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")
