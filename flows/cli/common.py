"""What every command shares: the --data-dir option, building Settings, printing errors."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from flows.settings import Settings

DataDir = Annotated[
    Path | None,
    typer.Option(
        "--data-dir",
        help="Data directory (raw/, records/). Default: $INCIDENTS_DATA_DIR or the current directory.",
        show_default=False,
    ),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]

# Exit codes (DESIGN.md section 5), read here and in flows/cli/__init__.py only.
DONE, LOOK, USAGE = 0, 1, 2


def make_settings(data_dir: Path | None) -> Settings:
    """Settings from the environment, with --data-dir winning when given."""
    from pydantic import ValidationError

    try:
        settings = Settings()
    except ValidationError as exc:
        from schema.validation import problems_of

        listing = "; ".join(f"INCIDENTS_{field.upper()}: {why}" for field, why in problems_of(exc))
        usage_error(f"bad setting: {listing} (see `incidents settings`)")
    if data_dir is not None:
        settings = settings.model_copy(update={"data_dir": data_dir})
    from flows import failures

    failures.current_data_dir = settings.data_dir  # what a failing disk's line names
    return settings


def error(message: str) -> None:
    """One line on stderr, prefixed so it is easy to grep in a cron log."""
    print(f"error: {message}", file=sys.stderr)


def usage_error(message: str) -> NoReturn:
    """A usage or configuration error: one line, exit 2, before any work (and before Prefect)."""
    error(message)
    raise typer.Exit(USAGE)
