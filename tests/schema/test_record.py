from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from schema.errors import RecordInvalid
from schema.record import Record
from schema.validation import validate_as
from tests.conftest import DATA

OURS = DATA / "records" / "IL-0042.json"


def _roundtrip(text: str) -> None:
    original = json.loads(text)
    dumped = Record.model_validate_json(text).model_dump(mode="json")
    assert dumped == original
    assert list(dumped) == list(original)
    for key, value in original.items():
        if isinstance(value, dict):
            assert list(dumped[key]) == list(value), key


def test_our_record_round_trips_exactly() -> None:
    _roundtrip(OURS.read_text(encoding="utf-8"))


def test_seed_record_round_trips_exactly(shared: Path) -> None:
    _roundtrip((shared / "seeds" / "000_86759986fefc91a4.txt").read_text(encoding="utf-8"))


@pytest.fixture
def good() -> dict:
    return json.loads(OURS.read_text(encoding="utf-8"))


def _problems(data: dict) -> dict[str, str]:
    with pytest.raises(RecordInvalid) as info:
        validate_as(Record, data, what="record")
    return dict(info.value.problems)


@pytest.mark.parametrize(
    ("change", "field", "fragment"),
    [
        ({"colour": "red"}, "colour", "unknown field"),
        ({"id": "IL-12"}, "id", "pattern"),
        ({"id": "XX-0001"}, "id", "pattern"),
        ({"root_cause": "gremlins"}, "root_cause", "not a term of the root_causes vocabulary"),
        ({"symptoms": ["full-outage", "sad-users"]}, "symptoms.1", "not a term"),
        ({"severity": "sev9"}, "severity", "not a term"),
        (
            {"timeline": {"detected_after": "7 hours", "resolved_after": None}},
            "timeline.detected_after",
            "ISO 8601",
        ),
        ({"date": "12/03/2026"}, "date", "ISO date"),
        ({"date": "2026-02-30"}, "date", "day is out of range"),
        ({"updated_at": "2026-03-14 10:20"}, "updated_at", "time zone"),
        ({"title": {"English": "x"}}, "title.English.[key]", "pattern"),
        ({"date_kind": "guessed"}, "date_kind", "published"),
        (
            {"impact": {"scope": "x", "users": "y", "region": "z", "cost": "1"}},
            "impact.cost",
            "unknown field",
        ),
    ],
)
def test_strict_fields_are_refused_with_the_field_named(
    good: dict, change: dict, field: str, fragment: str
) -> None:
    data = copy.deepcopy(good) | change
    problems = _problems(data)
    assert field in problems, problems
    assert fragment in problems[field]


def test_an_approved_record_needs_org_and_title(good: dict) -> None:
    data = good | {"org": None, "title": {}}
    with pytest.raises(RecordInvalid, match="needs org, title"):
        validate_as(Record, data, what="record")
