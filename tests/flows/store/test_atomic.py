from __future__ import annotations

import os
from pathlib import Path

import pytest

from flows.store.atomic import append_line, write_json, write_text


def test_write_replaces_whole_file_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "x.json"
    write_json(target, {"b": 1, "a": "한국어"})
    write_json(target, {"b": 2})
    assert target.read_text(encoding="utf-8") == '{\n  "b": 2\n}\n'
    assert [p.name for p in target.parent.iterdir()] == ["x.json"]


def test_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "x.txt"
    write_text(target, "old")

    def boom(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]


def test_append_line_adds_whole_lines(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    append_line(log, '{"a": 1}')
    append_line(log, '{"a": 2}\n')
    assert log.read_text() == '{"a": 1}\n{"a": 2}\n'
