"""`incidents schedule`: serve the scheduled deployments of sources.toml until stopped."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from flows.cli.common import DataDir, JsonFlag, make_settings, usage_error


def register(app: typer.Typer) -> None:
    @app.command("schedule")
    def schedule(
        sources_file: Annotated[Path, typer.Option("--sources", help="The sources.toml to schedule.")] = Path(
            "sources.toml"
        ),
        dry_run: Annotated[bool, typer.Option("--dry-run", help="List the deployments and stop.")] = False,
        as_json: JsonFlag = False,
        data_dir: DataDir = None,
    ) -> None:
        """Run each scheduled group of sources.toml on its cron (Ctrl-C stops).

        Prints each deployment, then one line per finished run: its time, deployment, number of
        sources and the count of each outcome (drafted, duplicate, failed...); --json: as JSON.

        Uses the Prefect server in PREFECT_API_URL, or starts one on 127.0.0.1 for as long as this
        runs (Prefect will not schedule on its ephemeral server)."""
        from flows.cli.ingest import quiet_prefect
        from flows.schedule import schedules, start_local_server
        from schema.errors import InputError

        settings = make_settings(data_dir)
        try:
            crons = schedules(sources_file)
        except InputError as exc:  # a missing or bad sources.toml is a config error: exit 2
            usage_error(str(exc))
        for group, cron in crons.items():
            if as_json:
                print(
                    json.dumps({"deployment": f"ingest-{group}", "cron": cron, "sources": str(sources_file)})
                )
            else:
                print(f"ingest-{group}  {cron}  {sources_file}")
        if dry_run:
            return
        server = None
        if not os.environ.get("PREFECT_API_URL"):
            server, api = start_local_server()
            os.environ["PREFECT_API_URL"] = api
            print(
                f"started a Prefect server at {api} (UI: {api.removesuffix('/api')})",
                file=sys.stderr if as_json else sys.stdout,
            )
        quiet_prefect(verbose=False)
        from prefect import serve

        from flows.schedule import deployments

        try:
            announce = "json" if as_json else "line"
            serve(
                *deployments(sources_file, settings.data_dir, announce=announce),
                print_starting_message=not as_json,
            )
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=30)
