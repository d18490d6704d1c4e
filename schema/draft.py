"""The draft: a machine-written record plus the evidence a reviewer needs to trust it."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from schema.record import RecordBody
from schema.types import LangCode, RecordId, Timestamp

DRAFT_ID_PATTERN = r"^d-[0-9a-f]{16}$"
Status = Literal["pending", "approved", "rejected", "superseded"]
Method = Literal[
    "metadata", "heading", "lexicon", "rule", "cue", "default", "curator", "model", "machine-translation"
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Evidence(_Strict):
    """An exact quote: `quote == document.text[start:end]`, under the heading `section`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    quote: str
    section: str | None = None
    start: int = Field(ge=0)
    end: int = Field(ge=0)

    @model_validator(mode="after")
    def _span(self) -> Evidence:
        if self.end - self.start != len(self.quote):
            raise ValueError("end - start must equal the length of the quote")
        return self


class Confidence(_Strict):
    value: float = Field(ge=0.0, le=1.0)
    method: Method


class Verdict(_Strict):
    """Is the page an incident report at all?"""

    verdict: bool  # the best guess: is this a postmortem?
    score: float = Field(ge=0.0, le=1.0)
    reasons: list[str] = Field(default_factory=list)
    # True only for a confident negative: ingest does not queue it (it is listed as skipped).
    # A page with verdict false and skip false is doubtful: queued, in the reviewers' doubtful lane.
    skip: bool = False


class Alternative(_Strict):
    """A runner-up for a field (root cause, a vocabulary term): its term, score and evidence."""

    term: str
    score: float = Field(ge=0.0, le=1.0)
    evidence: list[Evidence] = Field(default_factory=list)


class DraftSource(_Strict):
    url: str
    canonical_url: str | None = None
    snapshot: str | None = None  # capture id in raw/
    language: LangCode | None = None
    extractor: str | None = None
    drafter: str | None = None


class HistoryEntry(_Strict):
    at: Timestamp
    by: str
    action: Literal["drafted", "edited", "approved", "rejected", "superseded", "reopened"]
    record_id: RecordId | None = None
    reason: str | None = None
    code: str | None = None  # a rejection's reason code (flows/review.py REJECT_CODES)


class ModelRefusal(_Strict):
    """A model's proposal that did not reach the record, and why (shown to the reviewer). The
    proposal itself is not kept: invented quotes or terms must not reach a draft at all."""

    field: str
    reason: str


class ModelField(_Strict):
    """How the model touched one field: `method` "model" (its value, resting on checked quotes),
    and the languages it wrote by translation (`machine_translated`), for the reviewer to check."""

    method: Literal["model", "machine-translation"]
    languages: list[LangCode] = Field(default_factory=list)
    machine_translated: list[LangCode] = Field(default_factory=list)


class ModelNotes(_Strict):
    """What model-assisted drafting did to a draft: which model and prompt, field by field, what
    it refused, and a note when the rule-based draft stands (endpoint down, answer unusable)."""

    model: str
    prompt_version: str
    fields: dict[str, ModelField] = Field(default_factory=dict)
    refusals: list[ModelRefusal] = Field(default_factory=list)
    note: str | None = None


class Draft(_Strict):
    draft_id: str = Field(pattern=DRAFT_ID_PATTERN)
    version: int = Field(default=1, ge=1)
    status: Status = "pending"
    record: RecordBody
    evidence: dict[str, list[Evidence]] = Field(default_factory=dict)
    confidence: dict[str, Confidence] = Field(default_factory=dict)
    postmortem: Verdict
    source: DraftSource
    history: list[HistoryEntry] = Field(default_factory=list)
    # Set when the source changed since an earlier draft: that draft (or its record), and the
    # field-level diff from it, so the reviewer checks what moved rather than everything.
    supersedes: str | None = None
    changes: list[dict[str, Any]] = Field(default_factory=list)
    # Up to 3 ranked runners-up per field (root_cause, vocabulary fields), best first; absent
    # when there are none.
    alternatives: dict[str, list[Alternative]] = Field(default_factory=dict, exclude_if=lambda v: not v)
    # Only with model-assisted drafting (INCIDENTS_LLM_BASE_URL); absent otherwise, so drafts
    # without a model stay byte-identical to those written before it existed.
    model: ModelNotes | None = Field(default=None, exclude_if=lambda v: v is None)


def draft_id_for(canonical_url: str, snapshot_digest: str) -> str:
    """Stable id for the same source content: the same URL and bytes give the same draft id."""
    key = f"{canonical_url}\n{snapshot_digest}".encode()
    return "d-" + hashlib.sha256(key).hexdigest()[:16]
