"""Constrained scalar types shared by the record, the draft and the document."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Annotated

from pydantic import AfterValidator, StringConstraints, WithJsonSchema

from schema.vocab import Kind, check_term, vocabulary

RECORD_ID_PATTERN = r"^IL-\d{4,}$"
LANG_PATTERN = r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$"
SLUG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
DURATION_PATTERN = r"^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$"

RecordId = Annotated[str, StringConstraints(pattern=RECORD_ID_PATTERN)]
LangCode = Annotated[str, StringConstraints(pattern=LANG_PATTERN)]
Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN)]


def _check_date(value: str) -> str:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise ValueError(f"{value!r} is not an ISO date (YYYY-MM-DD)")
    date.fromisoformat(value)
    return value


def _check_timestamp(value: str) -> str:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not an ISO 8601 timestamp") from exc
    if "T" not in value or parsed.tzinfo is None:
        raise ValueError(f"{value!r} needs a date, a time and a time zone (use ...Z for UTC)")
    return value


def _check_duration(value: str) -> str:
    if not re.fullmatch(DURATION_PATTERN, value):
        raise ValueError(f"{value!r} is not an ISO 8601 duration (PT7H, PT54H10M, P2D)")
    return value


# Kept as strings, not date/datetime, so a record round-trips byte for byte ("...205520Z").
IsoDate = Annotated[str, AfterValidator(_check_date), WithJsonSchema({"type": "string", "format": "date"})]
Duration = Annotated[
    str,
    AfterValidator(_check_duration),
    WithJsonSchema({"type": "string", "pattern": r"^P(\d+[YMWD])*(T(\d+[HM])*(\d+(\.\d+)?S)?)?$"}),
]
Timestamp = Annotated[
    str, AfterValidator(_check_timestamp), WithJsonSchema({"type": "string", "format": "date-time"})
]


def term_of(kind: Kind) -> object:
    """A str type that accepts only the terms of one vocabulary (listed as an enum in the schema)."""

    def check(value: str) -> str:
        return check_term(kind, value)

    return Annotated[
        str,
        AfterValidator(check),
        WithJsonSchema({"type": "string", "enum": sorted(vocabulary(kind).terms)}),
    ]


RootCause = term_of("root_causes")
Contributing = term_of("contributing")
Symptom = term_of("symptoms")
Component = term_of("components")
Domain = term_of("domains")
Severity = term_of("severity")
SourceKind = term_of("source_kinds")
