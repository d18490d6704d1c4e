"""`incidents validate` and `incidents schema`: check records, print JSON Schemas."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from flows.cli.common import DataDir, make_settings
from flows.store.atomic import write_text
from flows.validate import validate_files
from schema.jsonschema import schema_path, schema_text


def register(app: typer.Typer) -> None:
    @app.command("validate")
    def validate(
        paths: Annotated[list[Path] | None, typer.Argument(help="Record files or folders.")] = None,
        data_dir: DataDir = None,
    ) -> None:
        """Validate records (default: every file in records/): schema, vocabulary, ids, file names."""
        targets = paths or [make_settings(data_dir).records_dir]
        count, problems = validate_files(targets)
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            bad = len({p.path for p in problems})
            print(f"{bad} of {count} file(s) invalid", file=sys.stderr)
            raise typer.Exit(1)
        print(f"{count} record(s) valid")

    @app.command("schema")
    def schema(
        name: Annotated[str, typer.Argument(help="record or draft")] = "record",
        write: Annotated[bool, typer.Option("--write", help="Rewrite schema/*.schema.json.")] = False,
    ) -> None:
        """Print the JSON Schema of a record or a draft."""
        if name not in ("record", "draft"):
            raise typer.BadParameter("must be record or draft", param_hint="NAME")
        if write:
            for each in ("record", "draft"):
                write_text(schema_path(each), schema_text(each))
            return
        print(schema_text(name), end="")  # type: ignore[arg-type]
