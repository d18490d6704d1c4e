"""`incidents archive ...`: the archivists' commands (list, show, verify, refresh, import, export)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from flows.cli.common import DataDir, JsonFlag, make_settings, usage_error
from schema.errors import InputError

if TYPE_CHECKING:
    from flows.archive import Archive

app = typer.Typer(help="Archivists' commands over raw/.", no_args_is_help=True)


def _archive(data_dir: Path | None) -> Archive:
    from flows.archive import Archive

    return Archive(make_settings(data_dir))


@app.command("list")
def list_(
    url: Annotated[str | None, typer.Option("--url", help="Only URLs starting with this prefix.")] = None,
    as_json: JsonFlag = False,
    data_dir: DataDir = None,
) -> None:
    """List captures: id, time, status, type, kind and URL, oldest first."""
    with _archive(data_dir) as archive:
        captures = archive.captures(url_prefix=url)
    if as_json:
        print(json.dumps([c.as_dict() for c in captures], ensure_ascii=False, indent=1))
        return
    if not captures:
        print(f"no captures{f' under {url}' if url else ''} in {archive.raw}", file=sys.stderr)
    for c in captures:
        status = "-" if c.status is None else str(c.status)
        print(f"{c.id}  {c.captured_at}  {status:>3}  {c.mime or '-':<22} {c.kind:<9} {c.url}")


@app.command()
def show(
    capture: Annotated[str, typer.Argument(help="A capture id (c-...) or a URL (its latest capture).")],
    raw: Annotated[bool, typer.Option("--raw", help="The payload bytes only, exactly as archived.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Print an archived payload (decoded as a browser would; --raw for the bytes)."""
    with _archive(data_dir) as archive:
        found = archive.resolve(capture)
        data = archive.read_payload(found.id)
    if raw:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    print(f"capture: {found.id}\nurl: {found.url}\ncaptured_at: {found.captured_at}")
    print(f"status: {found.status}\ncontent_type: {found.content_type}\nkind: {found.kind}")
    print(f"warc: {found.warc_file} offset {found.offset}\n")
    print(_as_text(data, found.content_type))


def _as_text(data: bytes, content_type: str | None) -> str:
    charset = None
    for part in (content_type or "").split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip("\"'")
    if charset:
        try:
            return data.decode(charset, "replace")
        except LookupError:
            pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    return str(best) if best is not None else data.decode("utf-8", "replace")


@app.command()
def verify(as_json: JsonFlag = False, data_dir: DataDir = None) -> None:
    """Re-read every WARC: block and payload digests, and that each index entry is a real record.

    Exit 1 naming file, offset and problem when anything is tampered with, truncated or missing."""
    from flows.archive import verify as run_verify

    with _archive(data_dir) as archive:
        report = run_verify(archive.raw, archive.index)
    problems = report.problems or []
    if as_json:
        print(
            json.dumps(
                {
                    "ok": report.ok,
                    "files": report.files,
                    "records": report.records,
                    "entries": report.entries,
                    "problems": [p.as_dict() for p in problems],
                },
                indent=1,
            )
        )
    else:
        for problem in problems:
            print(f"problem: {problem}")
        state = "ok" if report.ok else f"{len(problems)} problem(s)"
        print(f"{state}: {report.files} WARC files, {report.records} records, {report.entries} index entries")
    if not report.ok:
        raise typer.Exit(1)


@app.command()
def reindex(as_json: JsonFlag = False, data_dir: DataDir = None) -> None:
    """Rebuild raw/index.sqlite from the WARC files (saved pages and imports included).

    Capture ids stay the same, so drafts and records still point at their captures. The old
    index, if any, is kept beside it as index.sqlite.replaced-STAMP. Exit 1 when a WARC file
    could not be read whole (its readable records are indexed; `archive verify` says more)."""
    from flows.archive.reindex import reindex as run_reindex
    from flows.store.database import shown_url

    settings = make_settings(data_dir)
    raw = settings.raw_dir
    if not raw.is_dir():
        raise InputError(f"{raw} does not exist: nothing to reindex (check --data-dir)")
    done = run_reindex(raw, settings.warc_max_bytes, settings.database)
    if as_json:
        print(json.dumps(done.as_dict(), indent=1))
    else:
        for problem in done.problems:
            print(f"problem: {problem}")
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(done.captures.items()))
        where = shown_url(settings.database) if settings.database else raw / "index.sqlite"
        print(
            f"rebuilt {where}: {done.files} WARC files, {done.total} captures"
            + (f" ({kinds})" if kinds else "")
            + (f", {done.skipped} imported records skipped" if done.skipped else "")
        )
        if done.old_index:
            kept = "; ".join(f"{n} {what}" for what, n in done.carried.items()) or "nothing readable"
            print(f"the old index is kept as {raw / done.old_index} (carried over: {kept})")
    if done.problems:
        raise typer.Exit(1)


@app.command()
def refresh(
    urls: Annotated[list[str] | None, typer.Argument(help="URLs to re-fetch (archived ones).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every archived http(s) URL.")] = False,
    draft: Annotated[
        bool,
        typer.Option(
            "--draft",
            help="Draft each changed page now (`changed`, superseding its earlier draft, with a field diff).",
        ),
    ] = False,
    as_json: JsonFlag = False,
    data_dir: DataDir = None,
) -> None:
    """Conditional re-fetch: unchanged, changed (new capture: re-review) or gone (link rot).

    A changed page is drafted by the next `incidents ingest URL`, or at once with --draft.
    Exit 0 when everything is unchanged, 1 when something changed, is gone or failed."""
    from flows.archive.refresh import refresh as run_refresh
    from flows.archive.refresh import refreshable
    from flows.fetch import Fetcher

    if bool(urls) == all_:
        raise typer.BadParameter("give URLs or --all (not both)")
    settings = make_settings(data_dir)
    from flows.archive import Archive

    attention = False
    results: list[dict[str, object]] = []
    with Archive(settings) as archive, Fetcher(settings) as fetcher:
        targets = refreshable(archive) if all_ else list(urls or [])
        changed: list[dict[str, object]] = []
        for item in run_refresh(archive, fetcher, targets):
            attention = attention or item.result != "unchanged"
            results.append(item.as_dict())
            if item.result == "changed":
                changed.append(results[-1])
            if not as_json:
                print(item.line(), flush=True)
    if draft and changed:
        from flows.ingest import ingest_jobs, job_for

        # The newest capture is the one just stored; ingest drafts it as `changed` (its 304, or
        # the same bytes again, is answered from that capture).
        outcomes = ingest_jobs([job_for(str(entry["url"])) for entry in changed], settings=settings)
        for entry, outcome in zip(changed, outcomes, strict=True):
            entry["draft"] = outcome.model_dump(mode="json")
            if not as_json:
                print(outcome.line(), flush=True)
    if as_json:
        print(json.dumps(results, indent=1))
    if attention:
        raise typer.Exit(1)


@app.command("import")
def import_(
    paths: Annotated[list[Path], typer.Argument(help=".warc or .warc.gz files made elsewhere.")],
    as_json: JsonFlag = False,
    data_dir: DataDir = None,
) -> None:
    """Copy WARC files into raw/imported/ and index their web pages' captures.

    Records that are not web pages (a crawler's metadata:// log, dns: lookups, robots.txt,
    directory listings, images) are counted as skipped, with why. A file imported before says
    "already imported" and changes nothing."""
    out = []
    with _archive(data_dir) as archive:
        for path in paths:
            done = archive.import_file(path)
            if as_json:
                out.append(done.as_dict())
            else:
                print(done.line())
    if as_json:
        print(json.dumps(out, ensure_ascii=False, indent=1))


@app.command()
def export(
    wacz: Annotated[Path | None, typer.Option("--wacz", help="Write a WACZ 1.1.1 package here.")] = None,
    data_dir: DataDir = None,
) -> None:
    """Package raw/ for other archives: WACZ (with py-wacz), readable by ReplayWeb.page."""
    from flows.archive.wacz import export_wacz

    if wacz is None:
        usage_error("say where to write: `incidents archive export --wacz OUT.wacz`")
    with _archive(data_dir) as archive:
        count = export_wacz(archive, wacz)
    print(f"wrote {wacz} ({count} WARC files)")
