"""Run the `incidents` command in-process and capture what it prints."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from flows.cli import main


@dataclass
class Result:
    code: int
    out: str
    err: str


def run(capsys: pytest.CaptureFixture[str], *args: str) -> Result:
    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)
