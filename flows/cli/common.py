"""What every command shares: the --data-dir option, building Settings, printing errors."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

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


def make_settings(data_dir: Path | None) -> Settings:
    """Settings from the environment, with --data-dir winning when given."""
    settings = Settings()
    if data_dir is not None:
        settings = settings.model_copy(update={"data_dir": data_dir})
    return settings


def error(message: str) -> None:
    """One line on stderr, prefixed so it is easy to grep in a cron log."""
    print(f"error: {message}", file=sys.stderr)
