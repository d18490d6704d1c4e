"""`incidents ingest SOURCE...`: run the ingest flow and print one line per source."""

from __future__ import annotations

import json
import os
from typing import Annotated

import typer

from flows.cli.common import DataDir, JsonFlag, make_settings


def _quiet_prefect(verbose: bool) -> None:
    """Prefect's banner and per-run lines stay out of our output unless asked for."""
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO" if verbose else "WARNING")
    os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "WARNING" if verbose else "CRITICAL")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # The 20 s default fails at random on a loaded 2-core machine (measured: 16-20 s cold).
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")


def register(app: typer.Typer) -> None:
    @app.command("ingest")
    def ingest(
        sources: Annotated[
            list[str], typer.Argument(help="URLs, saved pages (.html .md .txt) or WARC files.")
        ],
        url: Annotated[
            str | None, typer.Option("--url", help="The web address of a saved page (one page only).")
        ] = None,
        as_json: JsonFlag = False,
        strict: Annotated[bool, typer.Option("--strict", help="Exit 1 if any source failed.")] = False,
        verbose: Annotated[bool, typer.Option("--verbose", help="Show Prefect's own log lines.")] = False,
        data_dir: DataDir = None,
    ) -> None:
        """Archive, extract, draft and queue each source; one line per source."""
        if url and len(sources) > 1:
            raise typer.BadParameter("--url names one page; give one source with it", param_hint="--url")
        settings = make_settings(data_dir)
        _quiet_prefect(verbose)
        from flows.pipeline import ingest_flow

        outcomes = ingest_flow(sources, settings, url)
        if as_json:
            print(json.dumps([o.model_dump(mode="json") for o in outcomes], ensure_ascii=False, indent=2))
        else:
            for outcome in outcomes:
                print(outcome.line())
        if strict and any(o.status == "failed" for o in outcomes):
            raise typer.Exit(1)
