"""`incidents settings`: every setting, its value, where it came from and what it does."""

from __future__ import annotations

import json

import typer

from flows.cli.common import DataDir, JsonFlag, make_settings


def register(app: typer.Typer) -> None:
    @app.command("settings")
    def settings_(as_json: JsonFlag = False, data_dir: DataDir = None) -> None:
        """Show every setting: value, source (default, environment, .env, option) and what it does.

        Set them as environment variables or in a .env file in the current directory, e.g.
        INCIDENTS_ALLOW_HOSTS=127.0.0.1 to fetch from this machine."""
        from flows.settings import describe

        rows = describe(make_settings(data_dir), overridden={"data_dir"} if data_dir is not None else ())
        if as_json:
            print(json.dumps(rows, ensure_ascii=False, indent=2))
            return
        for row in rows:
            print(f"{row['name']}={row['value']}  ({row['source']})")
            print(f"    {row['help']}")
