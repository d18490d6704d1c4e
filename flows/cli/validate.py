"""`incidents validate` and `incidents schema`: check records, print JSON Schemas."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from flows.cli.common import DataDir, make_settings
from flows.settings import Settings
from flows.store import journal
from flows.store.atomic import write_text
from flows.store.audit import AuditLog
from flows.validate import Problem, check_files, data_dir_problems, validate_files
from schema.jsonschema import schema_path, schema_text


def _whole_data_dir(settings: Settings) -> tuple[int, list[Problem], list[Problem]]:
    """(records checked, their problems, the data directory's other problems), after finishing
    interrupted decisions and cleaning leftovers (each said in a `note:` line)."""
    for note in journal.recover(settings.data_dir):
        print(f"note: {note}", file=sys.stderr)
    count, problems, valid = check_files([settings.records_dir])
    other = data_dir_problems(settings.data_dir, valid)
    torn = AuditLog(settings.audit_path).torn_path
    if torn.is_file():
        print(
            f"note: {torn}: torn audit lines moved aside after interrupted writes; "
            "look at them, then remove the file",
            file=sys.stderr,
        )
    return count, problems, other


def register(app: typer.Typer) -> None:
    @app.command("validate")
    def validate(
        paths: Annotated[list[Path] | None, typer.Argument(help="Record files or folders.")] = None,
        data_dir: DataDir = None,
    ) -> None:
        """Validate records (default: every file in records/): schema, vocabulary, ids, file names.

        Without PATHs, the data directory too: an interrupted decision is finished and a crash's
        leftovers are cleaned first (each said in a `note:` line), then every record approved from
        a draft must have its audit line, no draft may have made two records, and every draft and
        audit line must be readable."""
        if paths:
            count, problems = validate_files(paths)
            records_bad = len({p.path for p in problems})
            other: list[Problem] = []
        else:
            count, problems, other = _whole_data_dir(make_settings(data_dir))
            records_bad = len({p.path for p in problems})
        for problem in [*problems, *other]:
            print(problem, file=sys.stderr)
        if problems:
            print(f"{records_bad} of {count} file(s) invalid", file=sys.stderr)
        if other:
            print(f"{len(other)} problem(s) in the data directory besides the records", file=sys.stderr)
        if problems or other:
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
