from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import RootModel

from flows.store.atomic import (
    append_line,
    create_bytes,
    dumps_json,
    dumps_model,
    file_lock,
    write_json,
    write_text,
)

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=25,
)


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


@given(JSON)
@example({"confidence": 1e-05, "note": "at 1e-05: fine"})  # pydantic alone would write 0.00001
@example([1e-07, 0.00012, 1e16, "한국어 \u2028 \x7f \x1f"])
def test_dumps_model_writes_what_dumps_json_writes(value: Any) -> None:
    assert dumps_model(RootModel[Any](value)) == dumps_json(value)


def test_file_lock_excludes_threads_and_a_filelock_on_the_same_file(tmp_path: Path) -> None:
    from filelock import FileLock, Timeout

    path = tmp_path / "made" / "x.lock"  # its folder is made when missing
    inside: list[int] = []
    overlaps: list[int] = []

    def hold(n: int) -> None:
        with file_lock(path):
            inside.append(n)
            if len(inside) > 1:
                overlaps.append(n)
            time.sleep(0.002)
            inside.remove(n)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(hold, range(40)))
    assert overlaps == []
    with file_lock(path), pytest.raises(Timeout):  # filelock (other code, old servers) waits for it
        FileLock(str(path), timeout=0.1).acquire()
    with FileLock(str(path), timeout=1):  # and it is free again once released
        pass


def test_new_files_and_lines_go_into_folders_made_when_missing(tmp_path: Path) -> None:
    create_bytes(tmp_path / "a" / "b" / "new.json", b"{}\n")
    append_line(tmp_path / "c" / "d" / "log.jsonl", '{"n": 1}')
    assert (tmp_path / "a" / "b" / "new.json").read_bytes() == b"{}\n"
    assert (tmp_path / "c" / "d" / "log.jsonl").read_text() == '{"n": 1}\n'
    with pytest.raises(FileExistsError):  # never over an existing file
        create_bytes(tmp_path / "a" / "b" / "new.json", b"other\n")
    assert (tmp_path / "a" / "b" / "new.json").read_bytes() == b"{}\n"
    assert [p.name for p in (tmp_path / "a" / "b").iterdir()] == ["new.json"]  # no temp file left
