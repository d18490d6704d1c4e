"""`incidents settings`: every setting, its value, where it came from and what it does."""

from __future__ import annotations

import json

import typer

from flows.cli.common import USAGE, DataDir, JsonFlag, error


def register(app: typer.Typer) -> None:
    @app.command("settings")
    def settings_(as_json: JsonFlag = False, data_dir: DataDir = None) -> None:
        """Show every setting: value, source (default, environment, .env, option) and what it does.

        Set them as environment variables or in a .env file in the current directory, e.g.
        INCIDENTS_ALLOW_HOSTS=127.0.0.1 to fetch from this machine. A bad value is shown as
        given, marked `bad:` with the reason, and the command exits 2."""
        from flows.settings import describe, read_settings

        overrides = {"data_dir": data_dir} if data_dir is not None else {}
        settings, bad = read_settings(**overrides)
        rows = describe(settings, overridden=set(overrides), bad=bad)
        if as_json:
            print(json.dumps(rows, ensure_ascii=False, indent=2))
        else:
            for row in rows:
                print(f"{row['name']}={row['value']}  ({row['source']})")
                if "problem" in row:
                    print(f"    bad: {row['problem']}")
                print(f"    {row['help']}")
        if bad:
            names = ", ".join(f"INCIDENTS_{name.upper()}" for name in bad)
            error(f"bad setting{'s' if len(bad) > 1 else ''}: {names}; fix the value(s) marked bad above")
            raise typer.Exit(USAGE)
