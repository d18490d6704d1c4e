"""`incidents serve`: the library's read-only JSON API and pages as an app of their own (no review routes)."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import RedirectResponse

from flows.library.api import PAGES, router
from flows.library.index import LibraryIndex
from flows.settings import VERSION, Settings


def create_library_app(settings: Settings, *, index: LibraryIndex | None = None) -> FastAPI:
    """The library alone: GET routes only, the OpenAPI description at /api/docs."""
    app = FastAPI(
        title="Incident library",
        version=VERSION,
        docs_url="/api/docs",
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.include_router(router(settings, index=index))

    @app.get("/", include_in_schema=False)
    def home() -> RedirectResponse:
        return RedirectResponse(PAGES, status_code=307)

    return app
