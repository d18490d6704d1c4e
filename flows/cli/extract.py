"""`incidents extract PAGE`: print the extracted Document; writes nothing."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the `extract` command to the root app."""
