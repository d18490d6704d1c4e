"""`incidents serve`: the library's read-only JSON API and pages as an app of their own (no review routes)."""

from __future__ import annotations

from html import escape

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

from flows.library.api import PAGES, router
from flows.library.http import install
from flows.library.index import LibraryIndex
from flows.settings import VERSION, Settings


def create_library_app(settings: Settings, *, index: LibraryIndex | None = None) -> FastAPI:
    """The library alone: GET (and HEAD) routes only, with ETag and Cache-Control, CORS when the
    settings allow an origin; the OpenAPI schema at /openapi.json (and /api/openapi.json), a list of
    the routes at /api/docs."""
    app = FastAPI(
        title="Incident library",
        version=VERSION,
        docs_url=None,  # FastAPI's Swagger UI loads from a CDN; /api/docs below is served by the app itself
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.include_router(router(settings, index=index))
    install(app, settings)

    @app.get("/api/openapi.json", include_in_schema=False)
    def openapi_under_api() -> JSONResponse:
        return JSONResponse(app.openapi())

    @app.get("/api/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        rows = "".join(
            f"<tr><td>{escape(method.upper())}</td><td><code>{escape(path)}</code></td>"
            f"<td>{escape(op.get('summary', ''))}</td></tr>"
            for path, ops in app.openapi()["paths"].items()
            for method, op in ops.items()
        )
        return HTMLResponse(
            "<!doctype html><meta charset=utf-8><title>Incident library API</title>"
            "<h1>Incident library API</h1><p>The schema: <a href=/openapi.json>/openapi.json</a></p>"
            f"<table>{rows}</table>"
        )

    @app.get("/", include_in_schema=False)
    def home() -> RedirectResponse:
        return RedirectResponse(PAGES, status_code=307)

    return app
