"""Crash-safe file writes: temp file in the same folder, fsync, os.replace, fsync the folder."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel


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


def _floats_agree(text: str) -> bool:
    """False when pydantic may have written a float that json.dumps writes otherwise: the two
    differ only below 1e-4 (0.00001 / 1e-05) and in exponents (1e-7 / 1e-07), and pydantic
    writes those as 0.0000... or with e- / e+ after a digit. Plain string searches: a regex over
    the whole draft cost more than the serializer saved."""
    if "0.0000" in text:
        return False
    for marker in ("e-", "e+"):
        at = text.find(marker)
        while at > 0:
            if text[at - 1].isdigit():
                return False
            at = text.find(marker, at + 2)
    return True


def dumps_model(model: BaseModel) -> str:
    """`dumps_json(model.model_dump(mode="json"))`, byte for byte, written by pydantic's Rust
    serializer: json.dumps runs in pure Python when it indents, about 5x slower on a draft."""
    text = model.model_dump_json(indent=2) + "\n"
    if not _floats_agree(text):
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
