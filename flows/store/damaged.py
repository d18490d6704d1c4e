"""Files of the data directory that cannot be read: named, one line each, never a crash.

A truncated or garbage draft or record (a disk that filled, an editor, a bad copy) must not stop
the others from being listed, shown, counted and served. Readers use `load` and collect the
`Damaged` it raises; the commands print `summary_line` ("1 draft cannot be read: FILE").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from schema.errors import InputError
from schema.validation import problems_of

M = TypeVar("M", bound=BaseModel)


class Damaged(InputError):
    """A draft or record file that cannot be read: `path` and `why` ("not JSON: ...")."""

    def __init__(self, path: Path, why: str, kind: str = "file") -> None:
        self.path = path
        self.why = why
        self.kind = kind
        super().__init__(
            f"{path}: (file): {why}; the {kind} cannot be read: restore it from a backup or "
            "move it out of the data directory"
        )


@dataclass(frozen=True)
class Unreadable:
    """One damaged file, as the listings report it."""

    path: Path
    why: str

    def __str__(self) -> str:
        return f"{self.path}: (file): {self.why}"


def why_not(data: bytes, model: type[BaseModel]) -> str | None:
    """Why `data` is not a `model` file, in the words `incidents validate` uses; None if it is."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text"
    if not text.strip():
        return "empty (a write cut short)"
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"not JSON: {exc.msg} at line {exc.lineno} (truncated or overwritten)"
    try:
        model.model_validate(parsed)
    except ValidationError as exc:
        listing = "; ".join(f"{field}: {why}" for field, why in problems_of(exc)[:3])
        return f"not a valid {model.__name__.lower()}: {listing}"
    return None


def load(path: Path, model: type[M], kind: str) -> M:
    """`model` read from `path`; `Damaged` (one line naming the file) if it cannot be read.

    FileNotFoundError passes through: a missing file is the caller's to explain."""
    data = path.read_bytes()
    try:
        return model.model_validate_json(data)
    except ValueError:
        raise Damaged(path, why_not(data, model) or "cannot be read", kind) from None


def summary_line(found: Sequence[Unreadable | Path | str], kind: str) -> str:
    """`1 draft cannot be read: FILE` / `3 drafts cannot be read: A, B, C` (files or their paths)."""
    noun = kind if len(found) == 1 else f"{kind}s"
    names = ", ".join(str(u.path if isinstance(u, Unreadable) else u) for u in found[:10])
    more = f" and {len(found) - 10} more" if len(found) > 10 else ""
    return f"{len(found)} {noun} cannot be read: {names}{more} (`incidents validate` says why)"
