"""Every --help page names option types in words (no Python types such as <bool>, <list[str]>),
a group's summary names each of its commands, and usage errors exit 2."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
import typer

from flows.cli import app
from flows.cli.help import in_words
from tests.cli import run


def _commands() -> list[list[str]]:
    """Every command path of `incidents`, from the click tree typer builds."""
    root = typer.main.get_command(app)
    found: list[list[str]] = []

    def walk(command: click.Command, path: list[str]) -> None:
        found.append(path)
        for name, sub in getattr(command, "commands", {}).items():  # a group (TyperGroup)
            walk(sub, [*path, name])

    walk(root, [])
    return found


def test_every_help_page_names_types_in_words(capsys) -> None:  # type: ignore[no-untyped-def]
    commands = _commands()
    assert ["review", "reopen"] in commands and ["archive", "export"] in commands
    for path in commands:
        result = run(capsys, *path, "--help")
        assert result.code == 0, (path, result.err)
        python_types = re.findall(r"<[a-z][a-z\[\]| ]*>", result.out)
        assert not python_types, (path, python_types)


@pytest.mark.parametrize(
    ("label", "words"),
    [
        ("<bool>", None),
        ("<list[str]>", "TEXT..."),
        ("<int range>", "INTEGER"),
        ("<path>", "PATH"),
        ("<a|b>", "a|b"),
    ],
)
def test_types_in_words(label: str, words: str | None) -> None:
    assert in_words(label) == words


def test_the_review_summary_names_every_review_command(capsys) -> None:  # type: ignore[no-untyped-def]
    group = typer.main.get_command(app).commands["review"]  # type: ignore[attr-defined]
    summary = group.help or ""
    assert all(name in summary for name in group.commands), summary
    assert "reopen" in " ".join(run(capsys, "--help").out.split())


def test_archive_export_without_a_target_is_a_usage_error(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = run(capsys, "archive", "export", "--data-dir", str(tmp_path))
    assert result.code == 2 and result.err.strip() == (
        "error: say where to write: `incidents archive export --wacz OUT.wacz`"
    )
