"""The incident record: the approved, reviewed shape stored as records/IL-NNNN.json."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from schema.types import (
    Component,
    Contributing,
    Domain,
    Duration,
    IsoDate,
    LangCode,
    RecordId,
    RootCause,
    Severity,
    Slug,
    SourceKind,
    Symptom,
    Timestamp,
)

Localized = dict[LangCode, str]
"""Text keyed by language code: {"en": "...", "ko": "..."}."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Impact(_Strict):
    scope: str = "unknown"
    users: str = "unknown"
    region: str = "unknown"


class Timeline(_Strict):
    detected_after: Duration | None = None
    resolved_after: Duration | None = None


class Review(_Strict):
    written_by: str = "session"
    reviewed_at: Timestamp | None = None
    reviewed_by: str | None = None


class SourceRef(_Strict):
    url: str
    kind: SourceKind = "blog"  # type: ignore[valid-type]
    license: str = "unknown"
    archived: str | None = None
    # The review-queue draft this source was approved from (set by `incidents review approve`):
    # `incidents validate` reports two records from one draft. Absent on records made by hand.
    draft: str | None = Field(default=None, pattern=r"^d-[0-9a-f]{16}$", exclude_if=lambda v: v is None)


class Item(_Strict):
    """One remediation step or action item."""

    text: Localized


# Field order is the incident library's own (see the seed record IL-0171); dumps keep it.
class RecordBody(_Strict):
    """Every record field but the id: what a draft holds and a reviewer edits."""

    org: str | None = None
    date: IsoDate | None = None
    docs: list[SourceRef] = Field(default_factory=list)
    title: Localized = Field(default_factory=dict)
    domain: list[Domain] = Field(default_factory=list)  # type: ignore[valid-type]
    impact: Impact = Field(default_factory=Impact)
    review: Review = Field(default_factory=Review)
    lessons: Localized = Field(default_factory=dict)
    related: list[RecordId] = Field(default_factory=list)
    sources: list[SourceRef] = Field(default_factory=list)
    summary: Localized = Field(default_factory=dict)
    trigger: Localized = Field(default_factory=dict)
    severity: Severity = "unknown"  # type: ignore[valid-type]
    symptoms: list[Symptom] = Field(default_factory=list)  # type: ignore[valid-type]
    timeline: Timeline = Field(default_factory=Timeline)
    date_kind: Literal["published", "occurred"] = "published"
    detection: Localized = Field(default_factory=dict)
    components: list[Component] = Field(default_factory=list)  # type: ignore[valid-type]
    root_cause: RootCause = "unknown"  # type: ignore[valid-type]
    remediation: list[Item] = Field(default_factory=list)
    action_items: list[Item] = Field(default_factory=list)
    contributing: list[Contributing] = Field(default_factory=list)  # type: ignore[valid-type]
    recurrence_of: RecordId | None = None
    symptoms_text: Localized = Field(default_factory=dict)
    updated_at: Timestamp | None = None
    url: str | None = None
    org_slug: Slug | None = None


class Record(RecordBody):
    """An approved record. It has an id, an organisation and a title."""

    id: RecordId

    @model_validator(mode="after")
    def _complete(self) -> Record:
        missing = [
            name
            for name, value in (
                ("org", self.org),
                ("org_slug", self.org_slug),
                ("title", self.title),
            )
            if not value
        ]
        if missing:
            raise ValueError(f"an approved record needs {', '.join(missing)}")
        return self

    @model_serializer(mode="wrap")
    def _id_first(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        return {"id": data.pop("id"), **data}
