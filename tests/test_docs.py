"""README documents every command: the docs fail when they drift from the code."""

from __future__ import annotations

from pathlib import Path

import typer.main

from flows.cli import app

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _commands() -> list[str]:
    root = typer.main.get_command(app)
    names = []
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        names.append(name)
        names += [f"{name} {sub}" for sub in getattr(command, "commands", {})]
    return names


def test_every_command_is_in_the_readme() -> None:
    commands = _commands()
    assert {"ingest", "draft", "extract", "validate", "schema", "schedule", "review approve"} <= set(commands)
    missing = []
    for name in commands:
        group, _, sub = name.partition(" ")
        documented = f"incidents {name}" in README or (
            sub and f"incidents {group} " in README and sub in README
        )
        if not documented:
            missing.append(name)
    assert not missing


def test_readme_starts_with_the_two_commands() -> None:
    blocks = README.split("```sh")[1:3]
    assert "incidents ingest examples/postmortem.html" in blocks[0]
    assert ".venv/bin/python -m pytest -q" in blocks[1]
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text(encoding="utf-8")
    assert ".venv/bin/python -m pytest -q" in ci
