"""The `incidents` command line: a thin layer over flows/ and extractors/; exit codes live here."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from flows.cli import archive, db, draft, extract, help, ingest, learn, library, review, schedule, validate
from flows.cli import settings as settings_cmd
from flows.cli.common import error
from flows.settings import VERSION
from schema.errors import IngestError

help.install()  # option types in words in every --help (TEXT, INTEGER, PATH; no <bool>)

app = typer.Typer(
    name="incidents",
    help="Turn public incident postmortems into structured, human-reviewed incident records.\n\n"
    "Settings are INCIDENTS_* environment variables (or a .env file); `incidents settings` lists them "
    "all. The ones curators set first: INCIDENTS_ALLOW_HOSTS (loopback and intranet hosts are refused "
    "unless listed, e.g. 127.0.0.1), INCIDENTS_DATA_DIR, INCIDENTS_USER_AGENT_CONTACT, "
    "INCIDENTS_MIN_INTERVAL.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        print(f"incidents {VERSION}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """incident-ingest: fetch, archive, extract, draft and review incident postmortems."""


app.add_typer(review.app, name="review")
app.add_typer(archive.app, name="archive")
app.add_typer(db.app, name="db")
ingest.register(app)
schedule.register(app)
extract.register(app)
draft.register(app)
validate.register(app)
settings_cmd.register(app)
library.register(app)
learn.register(app)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script: IngestError -> exit 1 with one line, usage -> exit 2."""
    try:
        app(args=argv, prog_name="incidents")
    except IngestError as exc:
        error(str(exc))
        return exc.exit_code
    except Exception as exc:
        # A full disk, an I/O error, a lock held past its timeout: one line naming the data
        # directory and what to do (flows/failures.py); anything else is a bug, with its traceback.
        from flows.failures import data_dir_error

        mapped = data_dir_error(exc)
        if mapped is None:
            raise
        error(str(mapped))
        return mapped.exit_code
    except SystemExit as exc:  # typer's own exits: 0 done, 2 usage error
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
