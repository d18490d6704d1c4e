"""`incidents ingest`: run the ingest flow; a progress bar on a terminal, one line per source."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from flows.cli.common import DataDir, JsonFlag, make_settings, usage_error

if TYPE_CHECKING:  # flows.pipeline imports Prefect (about 1.5 s): only when a run needs it
    from flows.jobs import IngestRequest, Outcome
    from flows.pipeline import Reporter
    from flows.settings import Settings


def quiet_prefect(verbose: bool) -> None:
    """Prefect's banner and per-run lines stay out of our output unless asked for."""
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO" if verbose else "WARNING")
    os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "WARNING" if verbose else "CRITICAL")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")  # else a telemetry notice lands in the terminal
    if not verbose:
        # A task or flow that raises is logged by Prefect with its traceback (at ERROR, past
        # PREFECT_LOGGING_LEVEL): the same error this command then reports in one line (or, for
        # a bug, with the traceback). Prefect's API still gets every line for its UI.
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "CRITICAL")
    # The 20 s default fails at random on a loaded 2-core machine (measured: 16-20 s cold).
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    # Prefect's queue services log through loggers of their class's name, outside `prefect.*`, so
    # PREFECT_LOGGING_LEVEL misses them: "EventsWorker - Still processing items" reached the terminal.
    for name in ("EventsWorker", "APILogWorker"):
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.ERROR)


def _http_or_https(value: str) -> bool:
    from flows.jobs import is_url

    return is_url(value) and len(value.split("://", 1)[1]) > 0


def preflight(request: IngestRequest, settings: Settings) -> dict[str, str]:
    """What can be checked before any flow runs, in well under a second. A usage or config error
    (a URL of another scheme, --url, --from-file, --sources and its groups, the data directory)
    is one line and exit 2, and so is a file given that is empty, binary or unreadable. Returns
    the direct sources that can only fail (a missing file, a folder, a type that is not a page),
    with why: like any failed source they do not stop a run."""
    doomed = _direct_sources(request.sources)
    if request.url and not _http_or_https(request.url):
        usage_error(f"--url {request.url}: the web address of a saved page must be an http or https URL")
    listed = _check_list(Path(request.from_file)) if request.from_file else []
    urls = [source for source in [*request.sources, *listed] if _http_or_https(source)]
    if request.sources_file or request.groups or request.feeds or request.sitemaps:
        from flows.discover import groups_of
        from schema.errors import InputError

        if request.groups and not request.sources_file:
            usage_error("--group picks groups of --sources; give --sources sources.toml too")
        try:
            groups = groups_of(request)
        except InputError as exc:
            usage_error(str(exc))
        except ValueError as exc:  # --feed or --sitemap that is not http(s)
            usage_error(_first_problem(exc))
        for group in groups:
            urls += [*group.urls, *(u for u in (group.feed, group.sitemap, group.index) if u)]
    _check_addresses(urls, settings)
    from flows.store.atomic import check_writable, unwritable

    try:
        check_writable(settings.data_dir, "raw", "records/queue")
    except OSError as exc:
        usage_error(unwritable(exc) or f"cannot use the data directory {settings.data_dir}: {exc}")
    return doomed


def _direct_sources(sources: list[str]) -> dict[str, str]:
    """The sources named on the command line: a URL of another scheme, or a file that is there
    but empty, binary or unreadable, is a usage error (the first named, one line); a missing
    file, a folder or a type that is not a page is returned with why, to fail as its source."""
    from flows.jobs import unsupported
    from flows.pages import PAGE_TYPES, is_warc

    doomed: dict[str, str] = {}
    unusable: list[str] = []
    for source in sources:
        usage = unsupported(source)
        if usage:
            usage_error(usage)
        why = _local_problem(source, PAGE_TYPES, is_warc)
        if why:
            doomed[source] = why
        elif not _is_url(source):
            bad = _content_problem(Path(source), is_warc(Path(source)))
            if bad:
                unusable.append(f"{source}: {bad}")
    if unusable:
        more = f" (and {len(unusable) - 1} more such file(s))" if len(unusable) > 1 else ""
        usage_error(unusable[0] + more)
    return doomed


def _first_problem(exc: ValueError) -> str:
    """A pydantic error about --feed or --sitemap, as the option and what is wrong with it."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError) and exc.errors():
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else "source"
        return f"--{field}: {str(error['msg']).removeprefix('Value error, ')}"
    return str(exc)


def _check_addresses(urls: list[str], settings: Settings) -> None:
    """A URL whose host is a loopback or private address (or localhost) the guard would refuse:
    a config error now, not a failed source after Prefect has started."""
    if not urls:
        return
    from urllib.parse import urlsplit

    from flows.fetch.guard import AddressGuard

    guard = AddressGuard(settings.allow_hosts)
    for url in urls:
        try:
            host = urlsplit(url).hostname or ""
        except ValueError:
            continue
        why = guard.refused_without_lookup(host)
        if why:
            usage_error(f"{url}: {why}")


def _local_problem(source: str, page_types: dict[str, str], is_warc: Callable[[Path], bool]) -> str | None:
    """Why a local source can only fail (its outcome line names the source), or None: a missing
    file, a folder, a type that is not a page. A file that is there but empty, binary or
    unreadable is a usage error instead (`_content_problem`): the person named the wrong file."""
    from flows.jobs import is_url

    if is_url(source):
        return None
    path = Path(source)
    if not path.exists():
        return "no such file (give a URL, a saved page or a WARC file)"
    if path.is_dir():
        return "is a directory: give page files (.html, .md, .txt) or WARC files"
    if not is_warc(path) and path.suffix.lower() not in page_types:
        kinds = ", ".join([*page_types, ".warc", ".warc.gz"])
        return f"unsupported file type {path.suffix or '(none)'}; give {kinds}"
    return None


def _is_url(source: str) -> bool:
    from flows.jobs import is_url

    return is_url(source)


def _content_problem(path: Path, warc: bool) -> str | None:
    """An empty, unreadable or (for a page) binary file: known from its first bytes."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8192)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc}); check its permissions"
    if not head:
        return "is empty: give a saved page or a WARC file with content"
    if not warc and b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 is text
        return "is a binary file, not a page (.html, .md, .txt are text)"
    return None


def _check_list(path: Path) -> list[str]:
    """--from-file: it exists, and no line is a URL of another scheme (a missing file listed in
    it fails as its source, as on the command line); returns its entries."""
    from flows.jobs import unsupported

    if not path.is_file():
        usage_error(f"--from-file {path}: no such file (give a text file with one URL or path per line)")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        usage_error(f"--from-file {path}: not UTF-8 text (give one URL or path per line)")
    entries = []
    for number, line in enumerate(lines, 1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        why = unsupported(entry)
        if why:
            usage_error(f"{path}:{number}: {why}")
        entries.append(entry)
    return entries


def warm_here(request: IngestRequest, settings: Settings) -> None:
    """Warm this process's drafter in a thread when it will draft the run's pages itself (a few
    direct sources, no pool) and Prefect's temporary server is about to start: the imports and
    first calls (about 1 s of CPU) then overlap the server's start-up (7-10 s, mostly spent in
    its own process). With a running server (PREFECT_API_URL) there is nothing to hide behind,
    and the warm-up's extra (langdetect's 55 profiles, a sample page) would only add to the run."""
    from flows.scheduler import POOL_THRESHOLD

    discovers = request.from_file or request.feeds or request.sitemaps or request.sources_file
    ephemeral = not os.environ.get("PREFECT_API_URL")
    if ephemeral and not discovers and len(request.sources) < POOL_THRESHOLD:
        from flows.pool import warm_in_background

        warm_in_background(when=_temporary_server_spawned)


def _temporary_server_spawned() -> bool:
    """Whether Prefect's temporary server process has been spawned. Before that, this process
    imports the server's modules itself (CPU-bound, on the critical path): a warm-up then would
    only slow it down. After it, this process waits for the server (about 5-8 s)."""
    module = sys.modules.get("prefect.server.api.server")
    servers = getattr(getattr(module, "SubprocessASGIServer", None), "_instances", {})
    return any(getattr(server, "server_process", None) is not None for server in servers.values())


def _run(request: IngestRequest, settings: Settings, *, verbose: bool, bar: bool) -> list[Outcome]:
    """The ingest flow over `request`, with a progress bar on a terminal."""
    quiet_prefect(verbose)
    if not os.environ.get("PREFECT_API_URL"):
        from flows.lifetime import guard_prefect_server

        guard_prefect_server()  # its temporary server ends with this process, even on kill -9
    warm_here(request, settings)  # a small run drafts in this process: warm it while Prefect starts
    from flows.pipeline import reporter, run_ingest, warm_workers

    warm_workers(request, settings)
    if bar:
        return _with_progress(lambda: run_ingest(request, settings), reporter)
    return run_ingest(request, settings)


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
        """Archive, extract, draft and queue each source; one line per source.

        Fetching from loopback or intranet hosts needs INCIDENTS_ALLOW_HOSTS (see `incidents settings`)."""
        from flows.jobs import IngestRequest

        sources = sources or []
        if url and len(sources) != 1:
            usage_error("--url names one saved page; give exactly one source with it")
        if not (sources or from_file or feed or sitemap or sources_file):
            usage_error(
                "give sources, --from-file, --feed, --sitemap or --sources (see `incidents ingest --help`)"
            )
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
        settings = make_settings(data_dir)
        doomed = preflight(request, settings)  # usage and config errors: exit 2 before Prefect starts
        discovers = from_file or feed or sitemap or sources_file
        if not discovers and len(doomed) == len(sources):
            # Nothing that can be drafted: each source's failure, at once, without starting Prefect.
            from flows.jobs import Outcome

            outcomes = [Outcome(source=s, status="failed", reason=doomed[s]) for s in sources]
        else:
            outcomes = _run(request, settings, verbose=verbose, bar=sys.stderr.isatty() and not as_json)
        if as_json:
            print(json.dumps([o.model_dump(mode="json") for o in outcomes], ensure_ascii=False, indent=2))
        else:
            for outcome in outcomes:
                print(outcome.line())
            counts = Counter(o.status for o in outcomes)
            if len(outcomes) > 1:
                print(", ".join(f"{n} {s}" for s, n in sorted(counts.items())), file=sys.stderr)
        if failed_run(outcomes, strict=strict):
            raise typer.Exit(1)


def failed_run(outcomes: list[Outcome], *, strict: bool) -> bool:
    """Exit 1: with --strict, when any source failed; without, when some failed and none came
    through (drafted, duplicate, unchanged, changed), so a cron job whose every source failed,
    e.g. on a full disk, is never green. Sources skipped on purpose are neither."""
    failed = any(o.status == "failed" for o in outcomes)
    if strict or not failed:
        return failed
    return not any(o.status not in ("failed", "skipped") for o in outcomes)


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
