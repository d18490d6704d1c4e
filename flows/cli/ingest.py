"""`incidents ingest`: run the ingest flow; a progress bar on a terminal, one line per source."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Annotated

import typer

from flows.cli.common import DataDir, JsonFlag, make_settings

if TYPE_CHECKING:  # flows.pipeline imports Prefect (about 1.5 s): only when a run needs it
    from flows.jobs import Outcome
    from flows.pipeline import Reporter


def quiet_prefect(verbose: bool) -> None:
    """Prefect's banner and per-run lines stay out of our output unless asked for."""
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO" if verbose else "WARNING")
    os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "WARNING" if verbose else "CRITICAL")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")  # else a telemetry notice lands in the terminal
    # The 20 s default fails at random on a loaded 2-core machine (measured: 16-20 s cold).
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")


Many = Annotated[list[str] | None, typer.Option(help="Repeat for several.")]


def register(app: typer.Typer) -> None:
    @app.command("ingest")
    def ingest(
        sources: Annotated[
            list[str] | None, typer.Argument(help="URLs, saved pages (.html .md .txt) or WARC files.")
        ] = None,
        url: Annotated[str | None, typer.Option("--url", help="The web address of a saved page.")] = None,
        from_file: Annotated[
            str | None, typer.Option("--from-file", help="A file with one URL or path per line.")
        ] = None,
        feed: Annotated[
            list[str] | None, typer.Option("--feed", help="An RSS or Atom feed (repeatable).")
        ] = None,
        sitemap: Annotated[
            list[str] | None, typer.Option("--sitemap", help="A sitemap or sitemap index (repeatable).")
        ] = None,
        sources_file: Annotated[
            str | None, typer.Option("--sources", help="A sources.toml of named sources.")
        ] = None,
        group: Annotated[
            list[str] | None, typer.Option("--group", help="Only these groups or names of --sources.")
        ] = None,
        no_gate: Annotated[
            bool, typer.Option("--no-gate", help="Draft even what the postmortem gate would skip.")
        ] = False,
        workers: Annotated[
            int | None, typer.Option("--workers", min=1, help="Extraction processes (default: cores).")
        ] = None,
        as_json: JsonFlag = False,
        strict: Annotated[bool, typer.Option("--strict", help="Exit 1 if any source failed.")] = False,
        verbose: Annotated[bool, typer.Option("--verbose", help="Show Prefect's own log lines.")] = False,
        data_dir: DataDir = None,
    ) -> None:
        """Archive, extract, draft and queue each source; one line per source."""
        sources = sources or []
        if url and len(sources) != 1:
            raise typer.BadParameter("--url names one saved page; give exactly one source with it")
        if not (sources or from_file or feed or sitemap or sources_file):
            raise typer.BadParameter("give sources, --from-file, --feed, --sitemap or --sources")
        settings = make_settings(data_dir)
        quiet_prefect(verbose)
        from flows.pipeline import IngestRequest, reporter, run_ingest, warm_workers

        request = IngestRequest(
            sources=sources,
            url=url,
            from_file=from_file,
            feeds=feed or [],
            sitemaps=sitemap or [],
            sources_file=sources_file,
            groups=group or [],
            gate=not no_gate,
            workers=workers,
        )
        warm_workers(request, settings)
        show_bar = sys.stderr.isatty() and not as_json
        if show_bar:
            outcomes = _with_progress(lambda: run_ingest(request, settings), reporter)
        else:
            outcomes = run_ingest(request, settings)
        if as_json:
            print(json.dumps([o.model_dump(mode="json") for o in outcomes], ensure_ascii=False, indent=2))
        else:
            for outcome in outcomes:
                print(outcome.line())
            counts = Counter(o.status for o in outcomes)
            if len(outcomes) > 1:
                print(", ".join(f"{n} {s}" for s, n in sorted(counts.items())), file=sys.stderr)
        if strict and any(o.status == "failed" for o in outcomes):
            raise typer.Exit(1)


def _with_progress(run: Callable[[], list[Outcome]], slot: ContextVar[Reporter | None]) -> list[Outcome]:
    """Run the flow under a rich progress bar on stderr that advances as each source ends."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("ingest"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),  # stdout carries the result lines, for scripts
        transient=True,
    ) as bar:
        task = bar.add_task("starting Prefect", total=None)
        counts: Counter[str] = Counter()

        class Bar:
            def total(self, count: int) -> None:
                bar.update(task, total=count, description="")

            def outcome(self, outcome: Outcome) -> None:
                counts[outcome.status] += 1
                text = " ".join(f"{s}:{n}" for s, n in sorted(counts.items()))
                bar.update(task, advance=1, description=text)

        token = slot.set(Bar())
        try:
            return run()
        finally:
            slot.reset(token)
