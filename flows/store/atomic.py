"""Crash-safe file writes: temp file in the same folder, fsync, os.replace, fsync the folder."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

# A bare number (not inside a string) written with an exponent or below 1e-4: the one place
# pydantic's JSON and json.dumps differ (0.00001 / 1e-05, 1e-7 / 1e-07).
_SMALL_OR_EXPONENT = re.compile(r"(?m)(?:^ *|: )-?(?:0\.0000|\d[\d.]*[eE])[\d.eE+-]*,?$")


def fsync_dir(folder: Path) -> None:
    # The rename is only durable once the directory entry is on disk too.
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that readers see the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def dumps_json(data: Any) -> str:
    """The on-disk JSON style: 2-space indent, real UTF-8, trailing newline; key order as given."""
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def dumps_model(model: BaseModel) -> str:
    """`dumps_json(model.model_dump(mode="json"))`, byte for byte, written by pydantic's Rust
    serializer: json.dumps runs in pure Python when it indents, about 5x slower on a draft."""
    text = model.model_dump_json(indent=2) + "\n"
    if _SMALL_OR_EXPONENT.search(text):
        return dumps_json(model.model_dump(mode="json"))
    return text


def write_json(path: Path, data: Any) -> None:
    write_text(path, dumps_json(data))


def append_line(path: Path, line: str) -> None:
    """Append one line and fsync: an audit line is either wholly there or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
