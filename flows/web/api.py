"""The JSON API: everything the pages do, for scripts. The reviewer is named by `X-Reviewer`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Header, Request
from pydantic import BaseModel, ConfigDict, Field

from flows.review import REJECT_CODES
from flows.web.security import check_reviewer
from flows.web.services import Services, valid_draft_id
from flows.web.views import QueueFilter
from schema.errors import InputError

review = APIRouter(prefix="/api", tags=["review"])
records = APIRouter(prefix="/api", tags=["records"])


def services(request: Request) -> Services:
    return request.app.state.services


def reviewer(
    x_reviewer: str = Header(
        "", description="Who takes the decision (required): 1-60 letters, digits, spaces or . @ ' -"
    ),
) -> str:
    """A cross-site form cannot set this header, so requiring it on every POST stops forged
    decisions. The name follows the same rule as the pages' Reviewer box."""
    if not x_reviewer.strip():
        raise InputError("the X-Reviewer header must name who takes the decision (1-60 characters)")
    return check_reviewer(x_reviewer)


COMMENT = Field(default="", max_length=2000, description="An optional comment, kept in the audit log.")


class Approve(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1, description="The draft version the decision was taken on.")
    edits: dict[str, Any] = Field(default_factory=dict, description="A partial record merged over the draft.")
    comment: str = COMMENT


class Reject(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1)
    code: str = Field(description="One of: " + ", ".join(REJECT_CODES))
    reason: str = ""
    comment: str = COMMENT


class BulkReject(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ids: list[str] = Field(min_length=1, max_length=5000)
    code: str
    reason: str = ""
    comment: str = COMMENT


class Reopen(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int | None = Field(default=None, ge=1)
    reason: str = ""
    comment: str = COMMENT


@review.get("/drafts")
def list_drafts(
    request: Request,
    status: str = "all",
    org: str = "",
    lang: str = "",
    host: str = "",
    low: bool = False,
    q: str = "",
    sort: str = "age",
) -> dict[str, Any]:
    """Queue rows, filtered like the queue page; `counts` are by status over the whole queue."""
    rows = services(request).summaries()
    shown = QueueFilter(status, org, lang, host, low, q, sort).apply(rows)
    counts = {s: sum(1 for r in rows if r.status == s) for s in ("pending", "approved", "rejected")}
    return {"counts": counts, "total": len(shown), "drafts": [r.as_dict() for r in shown]}


@review.get("/drafts/{draft_id}")
def get_draft(request: Request, draft_id: str) -> dict[str, Any]:
    """The whole draft: record, evidence, confidence, version and history."""
    return services(request).draft(draft_id).model_dump(mode="json")


@review.post("/drafts/{draft_id}/approve")
def approve(request: Request, draft_id: str, body: Approve, who: str = Depends(reviewer)) -> dict[str, Any]:
    """Write records/IL-NNNN.json; 409 (with what changed) when `version` is not the current one."""
    record = services(request).reviews.approve(
        valid_draft_id(draft_id),
        reviewer=who,
        edits=body.edits,
        expected_version=body.version,
        comment=body.comment or None,
    )
    return {"draft_id": draft_id, "record_id": record.id, "record": record.model_dump(mode="json")}


@review.post("/drafts/{draft_id}/edit")
def edit(request: Request, draft_id: str, body: Approve, who: str = Depends(reviewer)) -> dict[str, Any]:
    """Keep edits on a pending draft without deciding (a new version; 409 when `version` is stale)."""
    draft = services(request).reviews.save_edits(
        valid_draft_id(draft_id),
        reviewer=who,
        edits=body.edits,
        expected_version=body.version,
        comment=body.comment or None,
    )
    return {"draft_id": draft.draft_id, "status": draft.status, "version": draft.version}


@review.post("/drafts/{draft_id}/reject")
def reject(request: Request, draft_id: str, body: Reject, who: str = Depends(reviewer)) -> dict[str, Any]:
    draft = services(request).reviews.reject(
        valid_draft_id(draft_id),
        reviewer=who,
        reason=body.reason,
        code=body.code,
        expected_version=body.version,
        comment=body.comment or None,
    )
    return {"draft_id": draft.draft_id, "status": draft.status, "version": draft.version}


@review.post("/drafts/reject")
def reject_many(request: Request, body: BulkReject, who: str = Depends(reviewer)) -> dict[str, Any]:
    """Reject many pending drafts with one reason (junk after a bad import)."""
    ids = [valid_draft_id(i) for i in body.ids]
    done, problems = services(request).reviews.reject_many(
        ids, reviewer=who, reason=body.reason, code=body.code, comment=body.comment or None
    )
    return {"rejected": done, "problems": problems}


@review.post("/drafts/{draft_id}/reopen")
def reopen(
    request: Request, draft_id: str, body: Reopen | None = None, who: str = Depends(reviewer)
) -> dict[str, Any]:
    """Put a rejected draft back in the queue, its history kept."""
    body = body or Reopen()
    draft = services(request).reviews.reopen(
        valid_draft_id(draft_id),
        reviewer=who,
        reason=body.reason,
        expected_version=body.version,
        comment=body.comment or None,
    )
    return {"draft_id": draft.draft_id, "status": draft.status, "version": draft.version}


@review.get("/stats")
def stats(request: Request) -> dict[str, Any]:
    """Acceptance rate, rejection reasons, most-edited fields per drafter version."""
    return services(request).reviews.stats()


@records.get("/records")
def list_records(
    request: Request, org: str = "", root_cause: str = "", component: str = "", q: str = ""
) -> dict[str, Any]:
    rows = services(request).records()
    needle = q.casefold()
    shown = [
        r.model_dump(mode="json")
        for r in rows
        if (not org or r.org == org)
        and (not root_cause or r.root_cause == root_cause)
        and (not component or component in r.components)
        and (not needle or needle in f"{r.id} {r.org} {' '.join(r.title.values())}".casefold())
    ]
    return {"total": len(shown), "records": shown}


@records.get("/records/{record_id}")
def get_record(request: Request, record_id: str) -> dict[str, Any]:
    return services(request).record(record_id).model_dump(mode="json")
