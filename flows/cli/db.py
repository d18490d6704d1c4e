"""`incidents db ...`: the shared database (INCIDENTS_DATABASE_URL): upgrade its schema, copy a
data directory's SQLite state into it, show what each store holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from flows.cli.common import DataDir, JsonFlag, make_settings

app = typer.Typer(
    help="The shared PostgreSQL database (INCIDENTS_DATABASE_URL) several workers use.", no_args_is_help=True
)


@app.command("upgrade")
def upgrade_(data_dir: DataDir = None) -> None:
    """Bring INCIDENTS_DATABASE_URL's schema to this program's version (run once after installing a
    new version; SQLite files in raw/ upgrade themselves)."""
    from flows.store import admin

    settings = make_settings(data_dir)
    applied = admin.upgrade(settings)
    from flows.store.database import shown_url

    where = shown_url(settings.database)
    print(f"upgraded {where}: {', '.join(applied)}" if applied else f"{where} is up to date")


@app.command("copy")
def copy_(
    source: Annotated[
        Path | None,
        typer.Option(
            "--from", help="The data directory to copy from (default: --data-dir).", show_default=False
        ),
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Copy a data directory's SQLite state (raw/index.sqlite, ledger.sqlite, discovery.sqlite),
    its record id counter and its queue's index into INCIDENTS_DATABASE_URL, which must be empty;
    WARC files, drafts and records stay where they are."""
    from flows.store import admin
    from flows.store.database import shown_url

    settings = make_settings(data_dir)
    copied = admin.copy(settings, source)
    said = ", ".join(f"{n} {what}" for what, n in copied.items())
    print(f"copied {source or settings.data_dir} into {shown_url(settings.database)}: {said}")


@app.command("status")
def status_(as_json: JsonFlag = False, data_dir: DataDir = None) -> None:
    """Where each store lives (a SQLite file or the shared database), its schema version against
    this program's, and its rows by table."""
    from flows.store import admin

    stores = admin.status(make_settings(data_dir))
    if as_json:
        print(json.dumps([s.as_dict() for s in stores], indent=1))
        return
    for store in stores:
        rows = ", ".join(f"{n} {t}" for t, n in store.rows.items())
        print(f"{store.component:<10} v{store.wanted} {store.state}  {store.where}  {rows}".rstrip())
