"""Validate raw JSON data as a record or draft, turning pydantic errors into (field, why) pairs."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from schema.errors import RecordInvalid

M = TypeVar("M", bound=BaseModel)

_PLAIN = {
    "extra_forbidden": "unknown field",
    "missing": "required field is missing",
}


def problems_of(exc: ValidationError) -> list[tuple[str, str]]:
    """Each error as (dotted field path, human reason)."""
    out = []
    for err in exc.errors():
        field = ".".join(str(part) for part in err["loc"]) or "(record)"
        why = _PLAIN.get(err["type"], err["msg"])
        why = why.removeprefix("Value error, ")
        if err["type"] not in _PLAIN and err["type"] != "value_error" and "input" in err:
            why = f"{why} (got {err['input']!r:.60})"
        out.append((field, why))
    return out


def validate_as(model: type[M], data: Any, *, what: str) -> M:
    """`model.model_validate(data)`, raising RecordInvalid that names every bad field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = problems_of(exc)
        listing = "; ".join(f"{field}: {why}" for field, why in problems)
        raise RecordInvalid(f"{what} is invalid: {listing}", problems) from exc
