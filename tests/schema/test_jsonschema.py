from __future__ import annotations

import pytest

from schema.jsonschema import schema_path, schema_text
from tests.cli import run


@pytest.mark.parametrize("name", ["record", "draft"])
def test_committed_schema_is_current(name: str) -> None:
    committed = schema_path(name).read_text(encoding="utf-8")  # type: ignore[arg-type]
    assert committed == schema_text(name), "stale: run `incidents schema --write` and commit"  # type: ignore[arg-type]


def test_schema_command_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "schema", "draft")
    assert result.code == 0
    assert '"draft_id"' in result.out
    assert run(capsys, "schema", "nonsense").code == 2
