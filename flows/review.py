"""Review decisions: approve a draft into records/IL-NNNN.json, or reject it with a reason."""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flows.clock import utc_now
from flows.lifecycle import (
    Version,
    apply_edits,
    locked_record,
    merge_by_url,
    plan_version,
    records_listing,
    source_urls,
)
from flows.settings import Settings
from flows.store import journal
from flows.store.audit import AuditLog, audit_entry, field_diff
from flows.store.queue import QueueStore, draft_text
from flows.store.records import RecordStore, record_text
from flows.validate import url_problems
from schema.draft import Draft, HistoryEntry
from schema.errors import IngestError, RecordInvalid, ReviewError
from schema.record import Record, RecordBody
from schema.validation import validate_as


def with_draft(sources: list[dict[str, Any]], draft: Draft) -> list[dict[str, Any]]:
    """The record's sources with the one this draft was made from marked `draft: <id>` (the
    source with the draft's URL, else the first): `incidents validate`
    then finds two records made from one draft."""
    marked = [dict(s) for s in sources]
    target = next((s for s in marked if s.get("url") == draft.source.url), None)
    if target is None and marked:
        target = next((s for s in marked if not s.get("draft")), marked[0])
    if target is not None:
        target["draft"] = draft.draft_id
    return marked


# Fields a reviewer may not set through edits: the id is allocated, review is stamped here.
_NOT_EDITABLE = ("id", "review", "updated_at")

# Why a draft is rejected: a closed list, so rejections can be counted (`incidents review stats`).
REJECT_CODES: dict[str, str] = {
    "not-postmortem": "not a postmortem",
    "duplicate": "duplicate of an existing record",
    "bad-source": "wrong or broken source",
    "too-little": "too little information",
    "other": "other",
}
_DUPLICATE_OF = re.compile(r"\bIL-\d{4,}\b")
_RECORD_ID = re.compile(r"^IL-\d{4,}$")


def _fields(entry: dict[str, Any]) -> set[str]:
    """The top-level fields an audit entry's `changes` name (malformed items skipped)."""
    changes = entry.get("changes")
    if not isinstance(changes, list):
        return set()
    return {
        c["field"].split(".")[0] for c in changes if isinstance(c, dict) and isinstance(c.get("field"), str)
    }


class Conflict(ReviewError):
    """A decision on a version of a draft that is no longer current (HTTP 409).

    `current` is the draft as it is now; `since` the history entries added after the version the
    reviewer saw: who decided what, when, and why.
    """

    def __init__(self, message: str, current: Draft, seen_version: int) -> None:
        super().__init__(message)
        self.current = current
        self.seen_version = seen_version

    @property
    def since(self) -> list[HistoryEntry]:
        # Every save bumps the version by one and appends one history entry to the one it was
        # drafted with, so the entries after version v are history[v:].
        return self.current.history[self.seen_version :]

    def as_dict(self) -> dict[str, Any]:
        return {
            "error": str(self),
            "draft_id": self.current.draft_id,
            "your_version": self.seen_version,
            "version": self.current.version,
            "status": self.current.status,
            "since": [h.model_dump(mode="json", exclude_none=True) for h in self.since],
        }


def check_code(code: str, reason: str) -> str:
    """A known reason code; `duplicate` must name the record it duplicates (IL-NNNN) in the reason."""
    if code not in REJECT_CODES:
        raise ReviewError(f"reason code {code!r} is not one of {', '.join(REJECT_CODES)}")
    if code == "duplicate" and not _DUPLICATE_OF.search(reason):
        raise ReviewError("a duplicate names the record it duplicates: say 'IL-NNNN' in the reason")
    return code


def _comment(comment: str | None) -> dict[str, str]:
    """A reviewer's optional comment on a decision, for its audit line (absent when none)."""
    text = (comment or "").strip()
    return {"comment": text} if text else {}


def merge_edits(base: dict[str, Any], edits: dict[str, Any]) -> dict[str, Any]:
    """A partial record over the draft: objects merge key by key, lists and scalars replace, and
    `null` clears a field (flows/lifecycle.py `apply_edits`, the format `--help` shows)."""
    return apply_edits(base, edits)


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


# One in-process lock per lock file: threads of one server queue here, in order, rather than on
# the file lock (which polls every 50 ms when contended); the file lock still guards other processes.
_LOCAL_LOCKS: dict[str, threading.Lock] = {}
_LOCAL_LOCKS_GUARD = threading.Lock()


@contextmanager
def _locked(key: str) -> Iterator[None]:
    with _LOCAL_LOCKS_GUARD:
        lock = _LOCAL_LOCKS.setdefault(key, threading.Lock())
    with lock:
        yield


class Reviews:
    """The review queue's decisions; safe with several reviewers in several processes.

    Each decision is all or nothing (flows/store/journal.py): an intent first, then the record,
    the draft and the audit line. Opening the data directory finishes what a crash left (`notes`
    says what was done; the commands print it)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.queue = QueueStore(settings.queue_dir, settings.database)
        self.records = RecordStore(settings.records_dir, settings.database)
        self.audit = AuditLog(settings.audit_path)
        self.notes: list[journal.Note] = journal.recover(settings.data_dir)

    @contextmanager
    def _deciding(self, draft_id: str) -> Iterator[str]:
        """The full id, with the draft's lock held (in this process and across processes), and
        any decision a crash left unfinished finished first (it may be this draft's)."""
        full = self.queue.resolve(draft_id)
        with _locked(str(self.queue.lock_path(full))), self.queue.lock_for(full):
            if journal.pending(self.settings.data_dir):  # usually other reviewers' live intents
                self.notes += journal.recover(self.settings.data_dir, tidy=False, wait_for=full)
            yield full

    def _finished_by_recovery(self, draft_id: str, action: str, reviewer: str) -> bool:
        """True when this very decision (same draft, action and reviewer) was interrupted and has
        just been finished: the retry reports it done rather than refusing it."""
        return any(
            n.finished and n.draft_id == draft_id and n.action == action and n.by == reviewer
            for n in self.notes
        )

    def _decide(
        self,
        draft: Draft,
        entry: HistoryEntry,
        update: dict[str, Any],
        audit: dict[str, Any],
        *,
        record: Record | None = None,
        reservation: Any = None,
        version: Version | None = None,
    ) -> Draft:
        """One decision on `draft`: `update` and the history `entry` saved as its next version (a
        stale version is a Conflict), then the audit line: who, when, what, and `audit`'s details;
        with `record`, the record file first. All through one journal intent."""
        # `draft` was read under its lock, which _deciding holds until the decision is written.
        saved = self.queue.next_version(
            draft.model_copy(update=update | {"history": [*draft.history, entry]}),
            expected_version=draft.version,
            current=draft,
        )
        line = audit_entry(
            action=entry.action,
            at=entry.at,
            by=entry.by,
            version=saved.version,
            draft_id=draft.draft_id,
            record_id=entry.record_id,
            **audit,
        )
        steps = [journal.write("draft", self.queue.path_for(draft.draft_id), draft_text(saved))]
        if record is not None:
            steps.insert(0, journal.write("record", self.records.path_for(record.id), record_text(record)))
        if version is not None:  # a new version of an existing record: its history, then it
            steps = [*version.steps, *steps]
        with journal.intent(
            self.settings.data_dir,
            action=entry.action,
            by=entry.by,
            at=entry.at,
            draft_id=draft.draft_id,
            version=saved.version,
            record_id=entry.record_id,
            steps=[*steps, journal.audit(line)],
            cleanup=[reservation] if reservation is not None else [],
        ):
            pass
        self.queue.indexed(saved)  # the shared index, if any, once the files are written
        return saved

    def _pending(self, draft_id: str, action: str, expected_version: int | None = None) -> Draft:
        draft = self.queue.get(draft_id)
        if expected_version is not None and draft.version != expected_version:
            last = draft.history[-1] if draft.history else None
            what = f" ({last.action} by {last.by} at {last.at})" if last else ""
            raise Conflict(
                f"draft {draft.draft_id} changed since you opened it: version {draft.version}, "
                f"you saw {expected_version}{what}; reload it",
                draft,
                expected_version,
            )
        if draft.status == "approved":
            record_id = next((h.record_id for h in draft.history if h.record_id), None)
            raise ReviewError(f"cannot {action} {draft.draft_id}: already approved as {record_id}")
        if draft.status == "rejected":
            raise ReviewError(
                f"cannot {action} {draft.draft_id}: it was rejected "
                "(reopen it first: `incidents review reopen`)"
            )
        if draft.status == "superseded":
            newer = next((h.reason for h in reversed(draft.history) if h.action == "superseded"), None)
            raise ReviewError(
                f"cannot {action} {draft.draft_id}: it was superseded by {newer or 'a newer draft'} "
                "of the same source; review that one"
            )
        return draft

    def approve(
        self,
        draft_id: str,
        *,
        reviewer: str,
        edits: dict[str, Any] | None = None,
        now: str | None = None,
        expected_version: int | None = None,
        comment: str | None = None,
        source_of: str | None = None,
    ) -> Record:
        now = now or utc_now()
        if not reviewer.strip():
            raise ReviewError("--reviewer must name who approves")
        edits = check_edits(edits or {})
        with self._deciding(draft_id) as draft_id:
            if self._finished_by_recovery(draft_id, "approved", reviewer):
                done = self.queue.get(draft_id)
                record_id = next((h.record_id for h in reversed(done.history) if h.record_id), None)
                if done.status == "approved" and record_id:
                    return self.records.read(record_id)
            draft = self._pending(draft_id, "approve", expected_version)
            target = source_of or (draft.supersedes if _RECORD_ID.match(draft.supersedes or "") else None)
            if target:
                return self._approve_into(
                    draft, target, reviewer, edits, now, as_source=bool(source_of), comment=comment
                )
            machine = draft.record.model_dump(mode="json")
            merged = merge_edits(machine, edits) if edits else machine  # a fresh dump: no copy
            # Validate the merge before an id is spent or anything is written.
            body = validate_as(RecordBody, merged, what=f"draft {draft.draft_id} with these edits")
            # A record links its sources for readers: `incidents validate` refuses any but http(s),
            # and a saved page without a canonical link was drafted under its local file:// path.
            bad_urls = url_problems(body)
            if bad_urls:
                named = "; ".join(f"{field}: {why}" for field, why in bad_urls)
                raise RecordInvalid(
                    f"draft {draft.draft_id}: {named}; a record links only to http or https "
                    "addresses: give the page's web address in these fields with --edits",
                    bad_urls,
                )
            self._refuse_known_source(draft, body)
            stamped = body.model_dump(mode="json") | {
                "review": {
                    "written_by": body.review.written_by,
                    "reviewed_at": now,
                    "reviewed_by": reviewer,
                },
                "updated_at": now,
            }

            stamped["sources"] = with_draft(stamped.get("sources") or [], draft)
            # which draft a source came from is bookkeeping, not a reviewer's change
            marked = with_draft(machine.get("sources") or [], draft)

            def build(record_id: str) -> Record:
                base = self.settings.library_base_url.rstrip("/")
                url = f"{base}/{record_id}" if base else None  # null unless the curator names a library
                data = stamped | {"id": record_id, "url": stamped.get("url") or url}
                return validate_as(Record, data, what=f"record {record_id} from {draft.draft_id}")

            # The id is reserved under the records lock (held only while it is allocated), and the
            # reservation is kept until the decision is written.
            with self.records.reserve(build) as (record, reservation):
                approved = record.model_dump(mode="json")
                self._decide(
                    draft,
                    HistoryEntry(at=now, by=reviewer, action="approved", record_id=record.id),
                    {"status": "approved"},
                    {
                        "drafter": draft.source.drafter,
                        "changes": [
                            c
                            for c in field_diff(machine | {"sources": marked}, approved)
                            if c["field"].split(".")[0] not in _NOT_EDITABLE
                            # the library URL is stamped at approval; a change only when edited
                            and (c["field"] != "url" or "url" in edits)
                        ],
                    }
                    | _comment(comment),
                    record=record,
                    reservation=reservation,
                )
            return record

    # -- a record's later versions (flows/lifecycle.py): every write goes through _write_version --

    def _write_version(
        self, version: Version, *, by: str, at: str, action: str, comment: str | None = None
    ) -> Record:
        """A record's new version without a draft (a correction): the earlier version into
        history, the record, and its audit line, in one journal intent."""
        line = audit_entry(
            action=action,
            at=at,
            by=by,
            version=version.version,
            record_id=version.record.id,
            changes=version.changes,
            **_comment(comment),
        )
        with journal.intent(
            self.settings.data_dir,
            action=action,
            by=by,
            at=at,
            version=version.version,
            record_id=version.record.id,
            steps=[*version.steps, journal.audit(line)],
        ):
            pass
        return version.record

    def _refuse_known_source(self, draft: Draft, body: RecordBody) -> None:
        """A new record for a source a record already lists would be a second record of it."""
        found = records_listing(self.records, set(source_urls(body)) | {draft.source.canonical_url or ""})
        if found:
            record_id, url = found
            raise ReviewError(
                f"{record_id} already lists {url} as a source: approve {draft.draft_id} into it "
                f"(`--source-of {record_id}`) or reject it as a duplicate"
            )

    def _approve_into(
        self,
        draft: Draft,
        record_id: str,
        reviewer: str,
        edits: dict[str, Any],
        now: str,
        *,
        as_source: bool,
        comment: str | None = None,
    ) -> Record:
        """Approve a draft into an existing record: a changed source's new version (the draft holds
        the three-way merge against the record), or another write-up added as a source."""
        if not _RECORD_ID.match(record_id):
            raise ReviewError(f"{record_id!r} is not a record id (IL-NNNN)")
        with _locked(f"record:{record_id}"), locked_record(self.records, record_id):
            if not self.records.path_for(record_id).exists():
                raise ReviewError(f"no record {record_id} in {self.records.folder}")
            current = self.records.read(record_id).model_dump(mode="json")
            if as_source:
                added = draft.record.model_dump(mode="json")
                body = current | {
                    key: merge_by_url(current.get(key) or [], added.get(key) or [])
                    for key in ("sources", "docs")
                }
                body = apply_edits(body, edits) if edits else body
                allow_same = False
            else:
                machine = draft.record.model_dump(mode="json")
                body = apply_edits(machine, edits) if edits else machine
                allow_same = True
            validate_as(
                RecordBody, {k: v for k, v in body.items() if k != "id"}, what=f"draft {draft.draft_id}"
            )
            bad_urls = url_problems(RecordBody.model_validate({k: v for k, v in body.items() if k != "id"}))
            if bad_urls:
                named = "; ".join(f"{field}: {why}" for field, why in bad_urls)
                raise RecordInvalid(f"draft {draft.draft_id}: {named}", bad_urls)
            body["sources"] = with_draft(body.get("sources") or [], draft)
            planned = plan_version(self.records, record_id, body, by=reviewer, at=now, allow_same=allow_same)
            details: dict[str, Any] = {"drafter": draft.source.drafter, "record_version": planned.version}
            if as_source:
                details["source_of"] = record_id
                details["source"] = draft.source.canonical_url or draft.source.url
                details["evidence"] = {
                    k: [e.model_dump(mode="json") for e in v] for k, v in draft.evidence.items()
                }
                details["changes"] = []
            else:
                # what the reviewer changed at this approval (the draft held the source's proposals)
                machine = draft.record.model_dump(mode="json")
                approved = planned.record.model_dump(mode="json")
                details["changes"] = [
                    c
                    for c in field_diff(machine | {"sources": body["sources"]}, approved)
                    if c["field"].split(".")[0] not in (*_NOT_EDITABLE, "url")
                ]
                details["source_changes"] = [
                    c["field"] for c in draft.changes if c.get("action") == "proposed"
                ]
            details |= _comment(comment)
            self._decide(
                draft,
                HistoryEntry(at=now, by=reviewer, action="approved", record_id=record_id),
                {"status": "approved"},
                details,
                version=planned,
            )
            record = planned.record
            return record

    def correct(
        self, record_id: str, *, reviewer: str, edits: Any, now: str | None = None, comment: str | None = None
    ) -> Record:
        """A correction of an approved record: `edits` over it, written as its next version (the
        earlier one kept in records/history/), with the field diff in the audit log. `null` clears
        a field; edits that change nothing are refused."""
        now = now or utc_now()
        if not reviewer.strip():
            raise ReviewError("--reviewer must name who corrects")
        edits = check_edits(edits)
        if not edits:
            raise ReviewError(f"no edits for {record_id}: give the fields to change (see --help)")
        if not _RECORD_ID.match(record_id):
            raise ReviewError(f"{record_id!r} is not a record id (IL-NNNN)")
        with _locked(f"record:{record_id}"), locked_record(self.records, record_id):
            if not self.records.path_for(record_id).exists():
                raise ReviewError(
                    f"no record {record_id} in {self.records.folder} (see `incidents library list`)"
                )
            current = self.records.read(record_id).model_dump(mode="json")
            body = apply_edits(current, edits)
            bad_urls = url_problems(
                validate_as(RecordBody, {k: v for k, v in body.items() if k != "id"}, what=record_id)
            )
            if bad_urls:
                named = "; ".join(f"{field}: {why}" for field, why in bad_urls)
                raise RecordInvalid(f"{record_id}: {named}", bad_urls)
            planned = plan_version(self.records, record_id, body, by=reviewer, at=now)
            return self._write_version(planned, by=reviewer, at=now, action="corrected", comment=comment)

    def supersede(self, draft_id: str, *, newer: str, by: str, now: str | None = None) -> Draft | None:
        """Close a pending draft that a newer draft of the same source replaces (None if not pending)."""
        now = now or utc_now()
        with self._deciding(draft_id) as draft_id:
            draft = self.queue.get(draft_id)
            if draft.status != "pending":
                return None
            return self._decide(
                draft,
                HistoryEntry(at=now, by=by, action="superseded", reason=newer),
                {"status": "superseded"},
                {"superseded_by": newer},
            )

    def reject(
        self,
        draft_id: str,
        *,
        reviewer: str,
        reason: str,
        now: str | None = None,
        code: str | None = None,
        expected_version: int | None = None,
        comment: str | None = None,
    ) -> Draft:
        now = now or utc_now()
        if not reviewer.strip():
            raise ReviewError("--reviewer must name who rejects")
        if code is not None:
            check_code(code, reason)
        if not reason.strip() and code in (None, "other"):
            raise ReviewError("--reason must say why the draft is rejected (rejections are data)")
        reason = reason.strip() or REJECT_CODES[code or "other"]
        with self._deciding(draft_id) as draft_id:
            if self._finished_by_recovery(draft_id, "rejected", reviewer):
                done = self.queue.get(draft_id)
                if done.status == "rejected":
                    return done
            draft = self._pending(draft_id, "reject", expected_version)
            return self._decide(
                draft,
                HistoryEntry(at=now, by=reviewer, action="rejected", reason=reason, code=code),
                {"status": "rejected"},
                {"reason": reason, "code": code, "drafter": draft.source.drafter} | _comment(comment),
            )

    def save_edits(
        self,
        draft_id: str,
        *,
        reviewer: str,
        edits: dict[str, Any],
        expected_version: int,
        now: str | None = None,
        comment: str | None = None,
    ) -> Draft:
        """Keep a reviewer's edits on a pending draft without deciding yet (a new version).

        The audit log gets the edit's field diff, so a later approval's diff plus these is the
        whole change from the machine draft."""
        now = now or utc_now()
        if not reviewer.strip():
            raise ReviewError("--reviewer must name who edits")
        edits = check_edits(edits)
        with self._deciding(draft_id) as draft_id:
            draft = self._pending(draft_id, "edit", expected_version)
            before = draft.record.model_dump(mode="json")
            body = validate_as(
                RecordBody, merge_edits(before, edits), what=f"draft {draft.draft_id} with these edits"
            )
            changes = field_diff(before, body.model_dump(mode="json"))
            if not changes:
                return draft
            names = sorted({c["field"] for c in changes})
            return self._decide(
                draft,
                HistoryEntry(
                    at=now, by=reviewer, action="edited", reason="changed " + ", ".join(names)[:500]
                ),
                {"record": body},
                {"drafter": draft.source.drafter, "changes": changes} | _comment(comment),
            )

    def reject_many(
        self,
        draft_ids: list[str],
        *,
        reviewer: str,
        reason: str,
        code: str,
        now: str | None = None,
        comment: str | None = None,
    ) -> tuple[list[str], list[str]]:
        """Reject each pending draft with one reason (junk after a bad import): (rejected ids, problems).

        Each draft is its own decision and audit line; one that is no longer pending is reported,
        not fatal, so a half-done bulk action can be repeated."""
        check_code(code, reason)
        done: list[str] = []
        problems: list[str] = []
        for draft_id in draft_ids:
            try:
                done.append(
                    self.reject(
                        draft_id, reviewer=reviewer, reason=reason, code=code, now=now, comment=comment
                    ).draft_id
                )
            except ReviewError as exc:
                problems.append(str(exc))
        return done, problems

    def reopen(
        self,
        draft_id: str,
        *,
        reviewer: str,
        reason: str = "",
        now: str | None = None,
        expected_version: int | None = None,
        comment: str | None = None,
    ) -> Draft:
        """Put a rejected draft back in the queue; its history (the rejection too) is kept."""
        now = now or utc_now()
        if not reviewer.strip():
            raise ReviewError("--reviewer must name who reopens")
        with self._deciding(draft_id) as draft_id:
            draft = self.queue.get(draft_id)
            if expected_version is not None and draft.version != expected_version:
                raise Conflict(
                    f"draft {draft.draft_id} changed since you opened it: version {draft.version}, "
                    f"you saw {expected_version}; reload it",
                    draft,
                    expected_version,
                )
            if draft.status != "rejected":
                raise ReviewError(
                    f"cannot reopen {draft.draft_id}: it is {draft.status}"
                    + (
                        " (an approved record is changed by editing records/, not by reopening)"
                        if draft.status == "approved"
                        else ""
                    )
                )
            return self._decide(
                draft,
                HistoryEntry(at=now, by=reviewer, action="reopened", reason=reason.strip() or None),
                {"status": "pending"},
                {"reason": reason.strip() or None} | _comment(comment),
            )

    def stats(self) -> dict[str, Any]:
        """From the audit log: acceptance rate, rejection reasons, most-edited fields per drafter."""
        read = self.audit.read()
        entries = read.entries
        # A reopened draft's earlier rejection no longer counts: its last decision does.
        last: dict[str, dict[str, Any]] = {}
        for entry in entries:
            if entry.get("action") == "reopened":
                last.pop(entry.get("draft_id", ""), None)
            elif entry.get("action") in ("approved", "rejected"):
                last[entry.get("draft_id", "")] = entry
        decided = list(last.values())
        approved = [e for e in decided if e["action"] == "approved"]
        rejected = [e for e in decided if e["action"] == "rejected"]
        codes = Counter(str(e.get("code") or "(no code)") for e in rejected)
        drafters: dict[str, dict[str, Any]] = {}
        # Edits saved before a decision count with the approval they led to.
        saved_edits: dict[str, set[str]] = {}
        for entry in entries:
            if entry.get("action") == "edited":
                saved_edits.setdefault(entry.get("draft_id", ""), set()).update(_fields(entry))
        for entry in approved:
            drafter = str(entry.get("drafter") or self._drafter_of(str(entry.get("draft_id", ""))))
            slot = drafters.setdefault(drafter, {"approved": 0, "edited": 0, "fields": Counter()})
            slot["approved"] += 1
            fields = _fields(entry)
            fields |= saved_edits.get(entry.get("draft_id", ""), set())
            slot["edited"] += bool(fields)
            slot["fields"].update(fields)
        drafts, unreadable = self.queue.scan()
        by_status = Counter(d.status for d in drafts)
        return {
            "decisions": len(decided),
            "approved": len(approved),
            "rejected": len(rejected),
            "acceptance_rate": round(len(approved) / len(decided), 3) if decided else None,
            "rejection_reasons": dict(codes.most_common()),
            "queue": {s: by_status.get(s, 0) for s in ("pending", "approved", "rejected")},
            "drafters": {
                name: {
                    "approved": slot["approved"],
                    "approved_with_edits": slot["edited"],
                    "most_edited_fields": dict(slot["fields"].most_common(10)),
                }
                for name, slot in sorted(drafters.items())
            },
            # What could not be counted: damaged draft files, audit lines that are not entries.
            "unreadable": {
                "drafts": [str(u.path) for u in unreadable],
                "audit_lines": [str(b) for b in read.bad],
            },
        }

    def _drafter_of(self, draft_id: str) -> str:
        try:
            return self.queue.get(draft_id).source.drafter or "(unknown drafter)"
        except (IngestError, OSError):
            return "(unknown drafter)"
