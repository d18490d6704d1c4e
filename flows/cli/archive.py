"""`incidents archive ...`: the archivists' commands (list, show, verify, refresh, import, export)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Archivists' commands over raw/.", no_args_is_help=True)
