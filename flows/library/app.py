"""`incidents serve`: the library's read-only JSON API and pages as an app of their own (no review routes)."""

from __future__ import annotations

from html import escape

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, RedirectResponse

from flows.library.api import PAGES, router
from flows.library.index import LibraryIndex
from flows.settings import VERSION, Settings


def create_library_app(settings: Settings, *, index: LibraryIndex | None = None) -> FastAPI:
    """The library alone: GET routes only, the OpenAPI description at /api/docs."""
    app = FastAPI(
        title="Incident library",
        version=VERSION,
        docs_url=None,  # FastAPI's Swagger UI loads from a CDN; /api/docs below is served by the app itself
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.include_router(router(settings, index=index))

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
            "<h1>Incident library API</h1><p>The schema: <a href=/api/openapi.json>/api/openapi.json</a></p>"
            f"<table>{rows}</table>"
        )

    @app.get("/", include_in_schema=False)
    def home() -> RedirectResponse:
        return RedirectResponse(PAGES, status_code=307)

    return app
