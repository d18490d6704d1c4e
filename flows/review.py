"""Review decisions: approve a draft into records/IL-NNNN.json, or reject it with a reason."""

from __future__ import annotations

import copy
from typing import Any

from flows.clock import utc_now
from flows.settings import Settings
from flows.store.audit import AuditLog, field_diff
from flows.store.queue import QueueStore
from flows.store.records import RecordStore
from schema.draft import Draft, HistoryEntry
from schema.errors import RecordInvalid, ReviewError
from schema.record import Record, RecordBody
from schema.validation import validate_as

# Fields a reviewer may not set through edits: the id is allocated, review is stamped here.
_NOT_EDITABLE = ("id", "review", "updated_at")


def merge_edits(base: dict[str, Any], edits: dict[str, Any]) -> dict[str, Any]:
    """A partial record over the draft: objects merge key by key, lists and scalars replace."""
    merged = copy.deepcopy(base)
    for key, value in edits.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_edits(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def check_edits(edits: Any) -> dict[str, Any]:
    """Edits must be a JSON object of record fields, none of them managed by review itself."""
    if not isinstance(edits, dict):
        raise RecordInvalid('edits must be a JSON object of record fields, e.g. {"org": "Acme"}')
    bad = [key for key in edits if key in _NOT_EDITABLE]
    if bad:
        raise RecordInvalid(
            f"edits may not set {', '.join(bad)}: ids and review stamps are set on approval",
            [(key, "set on approval, not editable") for key in bad],
        )
    return edits


class Reviews:
    """The review queue's decisions; safe with several reviewers in several processes."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.queue = QueueStore(settings.queue_dir)
        self.records = RecordStore(settings.records_dir)
        self.audit = AuditLog(settings.audit_path)

    def _pending(self, draft_id: str, action: str) -> Draft:
        draft = self.queue.get(draft_id)
        if draft.status == "approved":
            record_id = next((h.record_id for h in draft.history if h.record_id), None)
            raise ReviewError(f"cannot {action} {draft.draft_id}: already approved as {record_id}")
        if draft.status == "rejected":
            raise ReviewError(
                f"cannot {action} {draft.draft_id}: it was rejected; re-ingest the source for a new draft"
            )
        return draft

    def approve(
        self, draft_id: str, *, reviewer: str, edits: dict[str, Any] | None = None, now: str | None = None
    ) -> Record:
        now = now or utc_now()
        if not reviewer.strip():
            raise ReviewError("--reviewer must name who approves")
        edits = check_edits(edits or {})
        with self.queue.lock():
            draft = self._pending(draft_id, "approve")
            machine = draft.record.model_dump(mode="json")
            merged = merge_edits(machine, edits)
            # Validate the merge before an id is spent or anything is written.
            body = validate_as(RecordBody, merged, what=f"draft {draft.draft_id} with these edits")
            stamped = body.model_dump(mode="json") | {
                "review": {
                    "written_by": body.review.written_by,
                    "reviewed_at": now,
                    "reviewed_by": reviewer,
                },
                "updated_at": now,
            }

            def build(record_id: str) -> Record:
                base = self.settings.library_base_url.rstrip("/")
                url = f"{base}/{record_id}" if base else None  # null unless the curator names a library
                data = stamped | {"id": record_id, "url": stamped.get("url") or url}
                return validate_as(Record, data, what=f"record {record_id} from {draft.draft_id}")

            record = self.records.create(build)
            history = [
                *draft.history,
                HistoryEntry(at=now, by=reviewer, action="approved", record_id=record.id),
            ]
            self.queue.save(
                draft.model_copy(update={"status": "approved", "history": history}),
                expected_version=draft.version,
            )
            approved = record.model_dump(mode="json")
            self.audit.append(
                {
                    "at": now,
                    "by": reviewer,
                    "action": "approved",
                    "draft_id": draft.draft_id,
                    "record_id": record.id,
                    "changes": [
                        c
                        for c in field_diff(machine, approved)
                        if c["field"].split(".")[0] not in _NOT_EDITABLE
                    ],
                }
            )
            return record

    def reject(self, draft_id: str, *, reviewer: str, reason: str, now: str | None = None) -> Draft:
        now = now or utc_now()
        if not reviewer.strip():
            raise ReviewError("--reviewer must name who rejects")
        if not reason.strip():
            raise ReviewError("--reason must say why the draft is rejected (rejections are data)")
        with self.queue.lock():
            draft = self._pending(draft_id, "reject")
            history = [*draft.history, HistoryEntry(at=now, by=reviewer, action="rejected", reason=reason)]
            saved = self.queue.save(
                draft.model_copy(update={"status": "rejected", "history": history}),
                expected_version=draft.version,
            )
            self.audit.append(
                {
                    "at": now,
                    "by": reviewer,
                    "action": "rejected",
                    "draft_id": draft.draft_id,
                    "record_id": None,
                    "reason": reason,
                }
            )
            return saved
