"""`incidents serve`, `incidents mcp`, `incidents export --site`: read access to the approved records."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from flows.cli.common import DataDir, make_settings


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve(
        host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
        data_dir: DataDir = None,
    ) -> None:
        """Serve the records library read-only: JSON API under /api/, pages under /library/ (en, ko)."""
        import uvicorn

        from flows.library.app import create_library_app
        from flows.library.index import LibraryIndex

        settings = make_settings(data_dir)
        index = LibraryIndex.for_settings(settings)
        stats = index.refresh()
        _report_problems(index.problems())
        print(f"library: {index.count()} record(s) from {settings.records_dir} ({stats.indexed} indexed now)")
        print(f"serving http://{host}:{port}/library/  (API: http://{host}:{port}/api/docs)", flush=True)
        uvicorn.run(create_library_app(settings, index=index), host=host, port=port, log_level="warning")

    @app.command("mcp")
    def mcp(data_dir: DataDir = None) -> None:
        """Serve the records library to an MCP client over stdio (search_incidents, get_incident, ...)."""
        from flows.library.mcp import serve_stdio

        serve_stdio(make_settings(data_dir))

    @app.command("export")
    def export(
        site: Annotated[Path, typer.Option("--site", help="Folder to write the static site into.")],
        data_dir: DataDir = None,
    ) -> None:
        """Write the records as a static site (HTML and CSS, client-side search; works from file://)."""
        from flows.library.index import LibraryIndex
        from flows.library.site import export_site

        settings = make_settings(data_dir)
        with LibraryIndex.for_settings(settings) as index:
            problems = index.problems()
            stats = export_site(index, site)
        _report_problems(problems)
        print(f"exported {stats.records} record(s), {stats.pages} page(s) to {stats.out}")
        print(f"open {stats.out / 'index.html'}")
        if problems:
            raise typer.Exit(1)


def _report_problems(problems: list[tuple[str, str]]) -> None:
    for name, why in problems:
        print(f"warning: records/{name} left out: {why}", file=sys.stderr)
