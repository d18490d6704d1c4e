"""A record's life after approval: new versions (a changed source, a correction, another write-up
added as a source), the earlier versions kept in records/history/IL-NNNN/, and the checks that
keep one incident one record.

Every new version of a record is planned by `plan_version` and written by flows/review.py in one
journal intent (flows/store/journal.py) with its audit line, so the history, the record
file and its audit line are written in one place.
"""

from __future__ import annotations

import copy
import json
import os
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date as Date
from pathlib import Path
from typing import Any

from flows.settings import Settings
from flows.store.audit import AuditLog, audit_entry, field_diff
from flows.store.journal import Step
from flows.store.records import RECORD_FILE, RecordStore, record_text
from schema.draft import Draft
from schema.errors import RecordInvalid, ReviewError
from schema.record import Record, RecordBody
from schema.validation import validate_as

# Fields a changed source never proposes: stamped at approval, or set only by reviewers.
_MANAGED = ("id", "review", "updated_at", "url", "related", "recurrence_of")
# Fields that list every write-up of the incident: merged by URL, never replaced.
_BY_URL = ("sources", "docs")
RECORD_ID = re.compile(r"^IL-\d{4,}$")
# How far apart two write-ups' dates may be and still describe one incident.
SAME_INCIDENT_DAYS = 3


def history_dir(records_dir: Path, record_id: str) -> Path:
    return records_dir / "history" / record_id


def history_versions(records_dir: Path, record_id: str) -> list[tuple[int, Path]]:
    """(version, file) of each kept earlier version, oldest first."""
    folder = history_dir(records_dir, record_id)
    if not folder.is_dir():
        return []
    found = [(int(p.stem), p) for p in folder.glob("*.json") if p.stem.isdigit()]
    return sorted(found)


def source_urls(body: RecordBody) -> list[str]:
    return [s.url for s in body.sources]


def records_by_source(records: Iterable[Record]) -> dict[str, list[str]]:
    """Source URL -> the ids of the records listing it (more than one is a duplicate)."""
    owners: dict[str, list[str]] = {}
    for record in records:
        for url in dict.fromkeys(source_urls(record)):
            owners.setdefault(url, []).append(record.id)
    return owners


# Per process: each record file's source URLs, by path, with the (mtime, size) they were read at.
# An approval then stats the record files and reads only those written since (~2 ms at 300).
_SOURCES: dict[str, tuple[tuple[int, int], tuple[str, ...]]] = {}
_SOURCES_LOCK = threading.Lock()


def _source_index(folder: Path) -> dict[str, tuple[str, ...]]:
    """Record id -> its source URLs, for every record file in `folder`."""
    if not folder.is_dir():
        return {}
    found: dict[str, tuple[str, ...]] = {}
    with os.scandir(folder) as listing:
        entries = [e for e in listing if RECORD_FILE.match(e.name)]
    for entry in entries:
        try:
            stat = entry.stat()
        except OSError:
            continue
        key = (stat.st_mtime_ns, stat.st_size)
        with _SOURCES_LOCK:
            cached = _SOURCES.get(entry.path)
        if cached is None or cached[0] != key:
            try:
                data = json.loads(Path(entry.path).read_text(encoding="utf-8"))
                urls = tuple(str(s.get("url")) for s in data.get("sources") or [] if isinstance(s, dict))
            except (OSError, ValueError, AttributeError):
                continue  # `incidents validate` names it
            cached = (key, urls)
            with _SOURCES_LOCK:
                _SOURCES[entry.path] = cached
        found[entry.name.removesuffix(".json")] = cached[1]
    return found


def records_listing(store: RecordStore, urls: set[str]) -> tuple[str, str] | None:
    """(record id, url) of a record whose sources list one of `urls`, or None."""
    wanted = {u for u in urls if u}
    for record_id, listed in sorted(_source_index(store.folder).items()):
        shared = sorted(wanted.intersection(listed))
        if shared:
            return record_id, shared[0]
    return None


def all_records(store: RecordStore) -> list[Record]:
    out = []
    for path in store.paths():
        try:
            out.append(Record.model_validate_json(path.read_text(encoding="utf-8")))
        except ValueError:
            continue  # `incidents validate` names it
    return out


def merge_by_url(kept: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`kept` with each entry of `new` replacing the one of its URL, or appended."""
    out = [copy.deepcopy(e) for e in kept]
    where = {e.get("url"): i for i, e in enumerate(out)}
    for entry in new:
        if entry.get("url") in where:
            out[where[entry.get("url")]] = copy.deepcopy(entry)
        else:
            where[entry.get("url")] = len(out)
            out.append(copy.deepcopy(entry))
    return out


def three_way(
    base: dict[str, Any], record: dict[str, Any], new: dict[str, Any], edited: set[str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The record a changed source proposes, and its changes field by field.

    `base` is the machine draft the record was approved from, `record` the record as approved
    (what a reviewer signed), `new` the machine draft of the changed page, `edited` the fields a
    reviewer changed (saved edits before approval, corrections after). Per top-level field: the
    source changed it and no reviewer did -> proposed (the new value); a reviewer edited it -> kept
    (the record's value, the source's new one shown beside it); the source did not change it ->
    stays. Sources and docs merge by URL. Each change: field, action (proposed/kept), from
    (the record's value), to (what approval writes) and source (the page's new value).
    """
    body = {k: v for k, v in record.items() if k != "id"}
    changes: list[dict[str, Any]] = []
    for key in [k for k in new if k not in _MANAGED]:
        if key in _BY_URL:
            merged = merge_by_url(record.get(key) or [], new.get(key) or [])
            if merged != record.get(key):
                body[key] = merged
                changes.append(
                    {
                        "field": key,
                        "action": "proposed",
                        "from": record.get(key),
                        "to": merged,
                        "source": new.get(key),
                    }
                )
            continue
        if base.get(key) == new.get(key) or record.get(key) == new.get(key):
            continue  # the source did not change it, or the record already says it
        reviewer_edited = key in edited or base.get(key) != record.get(key)
        if reviewer_edited:
            changes.append(
                {
                    "field": key,
                    "action": "kept",
                    "from": record.get(key),
                    "to": record.get(key),
                    "source": new.get(key),
                }
            )
        else:
            body[key] = copy.deepcopy(new.get(key))
            changes.append(
                {
                    "field": key,
                    "action": "proposed",
                    "from": record.get(key),
                    "to": new.get(key),
                    "source": new.get(key),
                }
            )
    return body, changes


def edited_fields(audit: AuditLog, record_id: str) -> set[str]:
    """Top-level fields a reviewer changed on this record or the drafts approved into it (saved
    edits, edits at approval, corrections); a changed source's own proposals are not counted."""
    entries = audit.entries()
    draft_ids = {e.get("draft_id") for e in entries if e.get("record_id") == record_id and e.get("draft_id")}
    fields: set[str] = set()
    for entry in entries:
        mine = entry.get("record_id") == record_id or entry.get("draft_id") in draft_ids
        if mine and entry.get("action") in ("edited", "approved", "corrected"):
            for change in entry.get("changes") or []:
                if change.get("action") == "proposed":
                    continue  # the source's change, not a reviewer's
                if isinstance(change.get("field"), str):
                    fields.add(change["field"].split(".")[0])
    return fields - set(_MANAGED)


# -- edits: clearing a field, and an edit that changes nothing --


def clear_value(field: str) -> Any:
    """What `null` clears a record field to: its empty value, `"unknown"` where the schema has it."""
    info = RecordBody.model_fields.get(field)
    if info is None:
        raise RecordInvalid(
            f"edits name {field!r}, which is not a record field", [(field, "not a record field")]
        )
    if info.default_factory is not None:
        made = info.default_factory()  # type: ignore[call-arg]
        return made.model_dump(mode="json") if hasattr(made, "model_dump") else made
    return info.default


def apply_edits(base: dict[str, Any], edits: dict[str, Any]) -> dict[str, Any]:
    """A partial record over `base`: objects merge key by key, lists and scalars replace, and
    `null` clears: a top-level field to its empty value (or "unknown"), a key of an object (one
    language of a text field, a timeline entry) to nothing or its default."""
    merged = copy.deepcopy(base)
    for key, value in edits.items():
        if value is None:
            merged[key] = clear_value(key)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            inner = merged[key]
            defaults = clear_value(key) if key in RecordBody.model_fields else {}
            for sub, sub_value in value.items():
                if sub_value is None:
                    if isinstance(defaults, dict) and sub in defaults:
                        inner[sub] = defaults[sub]
                    else:
                        inner.pop(sub, None)
                else:
                    inner[sub] = copy.deepcopy(sub_value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


EDITS_HELP = """Edits: a JSON object of record fields, merged over the record. One example per kind:
text, by language: {"summary": {"en": "What happened."}}
one language cleared: {"summary": {"ko": null}}
list of steps: {"remediation": [{"text": {"en": "Rolled back."}}]}
vocabulary term: {"root_cause": "config-change"}
term cleared to "unknown": {"root_cause": null}
vocabulary list: {"components": ["dns", "load-balancer"]}
list cleared: {"components": null}
date: {"date": "2026-03-12"}; cleared: {"date": null}
object, one key: {"impact": {"users": "all EU customers"}}
any field cleared: {"trigger": null}
In a correction an edit that changes nothing is refused."""


# -- writing a new version --


@dataclass(frozen=True)
class Version:
    """A record's next version, planned and not written: the caller writes `steps` (the earlier
    version into history, then the record) in one journal intent with its audit line."""

    record: Record
    version: int  # 1 for the first approval; each new version adds one
    changes: list[dict[str, Any]]
    steps: list[Step]


def current_version(store: RecordStore, record_id: str) -> int:
    kept = history_versions(store.folder, record_id)
    return (kept[-1][0] if kept else 0) + 1


def plan_version(
    store: RecordStore, record_id: str, body: dict[str, Any], *, by: str, at: str, allow_same: bool = False
) -> Version:
    """`body` (every record field) as the next version of `record_id`, reviewed by `by` at `at`.

    The caller holds the record's lock (`locked_record`). An edit that changes nothing is refused
    unless `allow_same` (a changed source approved as it stands still moves `updated_at`)."""
    from flows.store import journal

    if not store.path_for(record_id).exists():
        raise ReviewError(f"no record {record_id} in {store.folder} (see `incidents library list`)")
    before = store.read(record_id)
    old = before.model_dump(mode="json")
    data = {k: v for k, v in body.items() if k not in ("id", "review", "updated_at")}
    data |= {
        "id": record_id,
        "review": {"written_by": before.review.written_by, "reviewed_at": at, "reviewed_by": by},
        "updated_at": at,
    }
    record = validate_as(Record, data, what=f"record {record_id} with these edits")
    new = record.model_dump(mode="json")
    changes = [c for c in field_diff(old, new) if c["field"].split(".")[0] not in ("review", "updated_at")]
    if not changes and not allow_same:
        raise ReviewError(f"these edits change nothing in {record_id}: it already says that")
    version = current_version(store, record_id)
    kept = history_dir(store.folder, record_id) / f"{version}.json"
    kept.parent.mkdir(parents=True, exist_ok=True)
    steps = [
        journal.write("history", kept, record_text(before)),
        journal.write("record", store.path_for(record_id), record_text(record)),
    ]
    return Version(record, version + 1, changes, steps)


def locked_record(store: RecordStore, record_id: str) -> Any:
    from flows.store.atomic import file_lock

    return file_lock(store.folder / ".locks" / f"{record_id}.lock")


# -- one incident, several write-ups --


def _days_apart(a: str | None, b: str | None) -> int | None:
    if not a or not b:
        return None
    try:
        return abs((Date.fromisoformat(a) - Date.fromisoformat(b)).days)
    except ValueError:
        return None


def _same_org(a: RecordBody, b: RecordBody) -> bool:
    if a.org_slug and b.org_slug:
        return a.org_slug == b.org_slug
    return bool(a.org and b.org and a.org.strip().casefold() == b.org.strip().casefold())


def same_incident_why(subject: RecordBody, other: RecordBody) -> str | None:
    """Why `other` looks like another write-up of `subject`'s incident, or None: the same source
    URL; or the same organisation, dates within SAME_INCIDENT_DAYS, and a shared component or
    (informative) root cause. A later incident of the same cause is a recurrence, not this."""
    shared_url = set(source_urls(subject)) & set(source_urls(other))
    if shared_url:
        return f"same source: {sorted(shared_url)[0]}"
    if not _same_org(subject, other):
        return None
    apart = _days_apart(subject.date, other.date)
    if apart is None or apart > SAME_INCIDENT_DAYS:
        return None
    components = [c for c in subject.components if c in other.components]
    cause = subject.root_cause if subject.root_cause not in ("unknown", "other") else None
    if components:
        return f"same organisation, {apart} day(s) apart, shared components: {', '.join(components)}"
    if cause and cause == other.root_cause:
        return f"same organisation, {apart} day(s) apart, same root cause: {cause}"
    return None


def same_incident(subject: RecordBody, records: Iterable[Record]) -> list[tuple[str, str]]:
    """(record id, why) of each record that may be another write-up of this incident."""
    return [(r.id, why) for r in records if (why := same_incident_why(subject, r))]


# -- validate --


def lifecycle_problems(records_dir: Path) -> list[tuple[Path, str, str]]:
    """(path, field, why) for: two records listing the same source URL; a superseded draft that
    was approved; a record history that does not chain (versions 1..n of the same id, each
    updated before the next and before the record)."""
    problems: list[tuple[Path, str, str]] = []
    records: list[Record] = []
    for path in sorted(p for p in records_dir.glob("*.json") if RECORD_FILE.match(p.name)):
        try:
            records.append(Record.model_validate_json(path.read_text(encoding="utf-8")))
        except ValueError:
            continue  # named by the schema check
    for url, owners in records_by_source(records).items():
        if len(owners) > 1:
            for record_id in owners:
                others = ", ".join(o for o in owners if o != record_id)
                problems.append(
                    (records_dir / f"{record_id}.json", "sources", f"{url} is also a source of {others}")
                )
    by_id = {r.id: r for r in records}
    history_root = records_dir / "history"
    if history_root.is_dir():
        for folder in sorted(p for p in history_root.iterdir() if p.is_dir()):
            problems += _chain_problems(folder, by_id.get(folder.name))
    queue = records_dir / "queue"
    if queue.is_dir():
        for path in sorted(queue.glob("d-*.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError):
                continue
            actions = [h.get("action") for h in data.get("history", [])]
            if "superseded" in actions and "approved" in actions[actions.index("superseded") :]:
                problems.append(
                    (path, "status", f"draft {data.get('draft_id')} was superseded and then approved")
                )
    return problems


def _chain_problems(folder: Path, current: Record | None) -> list[tuple[Path, str, str]]:
    problems: list[tuple[Path, str, str]] = []
    record_id = folder.name
    if current is None:
        return [(folder, "history", f"history of {record_id} but no record {record_id}.json")]
    versions = history_versions(folder.parent.parent, record_id)
    numbers = [n for n, _ in versions]
    if numbers != list(range(1, len(numbers) + 1)):
        problems.append((folder, "history", f"versions of {record_id} are {numbers}: they must run 1..n"))
    last = None
    for number, path in versions:
        try:
            kept = Record.model_validate_json(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            problems.append(
                (path, "history", f"version {number} of {record_id} is not a record: {exc}"[:300])
            )
            continue
        if kept.id != record_id:
            problems.append((path, "id", f"version {number} in {record_id}'s history is {kept.id}"))
        if last is not None and kept.updated_at and last >= kept.updated_at:
            problems.append(
                (path, "updated_at", f"version {number} of {record_id} is not newer than the one before")
            )
        last = kept.updated_at or last
    if last is not None and current.updated_at and last >= current.updated_at:
        problems.append(
            (
                folder.parent.parent / f"{record_id}.json",
                "updated_at",
                f"{record_id} is not newer than its last kept version",
            )
        )
    return problems


# -- a changed source (called by the ingest stage that queues drafts) --


def redraft(settings: Settings, earlier: Draft, draft: Draft) -> tuple[Draft, str]:
    """The new draft of a changed source, linked to what it replaces: the record the earlier
    draft was approved into (its changes three-way against that record), else the earlier draft
    (its changes against that draft). Returns the draft and the id it supersedes."""
    record_id = next((h.record_id for h in earlier.history if h.record_id), None)
    if record_id is None and earlier.supersedes and RECORD_ID.match(earlier.supersedes):
        record_id = earlier.supersedes  # a pending changed draft: its record is still the target
    store = RecordStore(settings.records_dir)
    new = draft.record.model_dump(mode="json")
    if record_id is not None and store.path_for(record_id).exists():
        record = store.read(record_id).model_dump(mode="json")
        edited = edited_fields(AuditLog(settings.audit_path), record_id)
        if _added_write_up(record, new):
            # another write-up added as a source: its change updates its source, not the record's text
            edited = set(record) - set(_BY_URL)
        body, changes = three_way(earlier.record.model_dump(mode="json"), record, new, edited)
        if _added_write_up(record, new):
            changes = [c for c in changes if c["field"] in _BY_URL]
        merged = RecordBody.model_validate(body)
        return draft.model_copy(
            update={"record": merged, "supersedes": record_id, "changes": changes}
        ), record_id
    changes = field_diff(earlier.record.model_dump(mode="json"), new)
    return draft.model_copy(update={"supersedes": earlier.draft_id, "changes": changes}), earlier.draft_id


def _added_write_up(record: dict[str, Any], new: dict[str, Any]) -> bool:
    """Is the changed page a write-up added to the record as a later source (not its first)?"""
    urls = {s.get("url") for s in new.get("sources") or []}
    listed = [s.get("url") for s in record.get("sources") or []]
    return bool(listed) and listed[0] not in urls and bool(urls & set(listed))


def lifecycle_lines(settings: Settings, draft: Draft) -> list[str]:
    """What `review show` adds for a draft: the diff against the record it updates, and records
    it may be another write-up of ("add as a source of IL-NNNN")."""
    lines: list[str] = []
    if draft.supersedes and RECORD_ID.match(draft.supersedes):
        lines.append(
            f"\nchanged source: approving updates {draft.supersedes} (diff against the record as approved)"
        )
        for change in draft.changes:
            what = change.get("action", "changed")
            field = change.get("field")
            if what == "kept":
                lines.append(f"  kept     {field}: {_short(change.get('to'))} (a reviewer's edit)")
                lines.append(f"           the source now says: {_short(change.get('source'))}")
            else:
                was, now = _around(change.get("from"), change.get("to"))
                lines.append(f"  {what:<8} {field}: {was}")
                lines.append(f"           -> {now}")
        if not draft.changes:
            lines.append("  no field changed")
    elif draft.supersedes:
        lines.append(f"\nchanged source: replaces draft {draft.supersedes}")
    if draft.status == "pending" and not draft.supersedes:
        found = same_incident(draft.record, all_records(RecordStore(settings.records_dir)))
        for record_id, why in found:
            lines.append(
                f"\nsame incident? {why}: add as a source of {record_id} "
                f"(`incidents review approve {draft.draft_id} --source-of {record_id} --reviewer NAME`) "
                "or approve as a new record"
            )
    return lines


def _around(before: Any, after: Any, width: int = 90) -> tuple[str, str]:
    """Both values as JSON, cut to the same window around their first difference."""
    a, b = json.dumps(before, ensure_ascii=False), json.dumps(after, ensure_ascii=False)
    first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = max(0, first - width // 3)

    def cut(text: str) -> str:
        piece = text[start : start + width]
        return ("..." if start else "") + piece + ("..." if start + width < len(text) else "")

    return cut(a), cut(b)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 100 else text[:97] + "..."


# -- a source that is gone --


def gone_path(records_dir: Path) -> Path:
    return records_dir / "marks" / "gone.json"


def gone_marks(records_dir: Path) -> dict[str, dict[str, Any]]:
    """records/marks/gone.json: source URL -> {records, at, why} of each source found gone."""
    path = gone_path(records_dir)
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def gone_sources(records_dir: Path, record: RecordBody) -> list[dict[str, Any]]:
    """The record's sources found gone: {url, at, why} each (records/marks/gone.json)."""
    marks = gone_marks(records_dir)
    return [{"url": url} | marks[url] for url in source_urls(record) if url in marks]


def mark_gone(settings: Settings, url: str, why: str, *, at: str | None = None) -> str | None:
    """Mark the records listing `url` as having lost that source (records are never deleted):
    records/marks/gone.json and one audit line per record. Returns the ids marked, or None."""
    from flows.clock import utc_now
    from flows.store.atomic import dumps_json, file_lock

    at = at or utc_now()
    store = RecordStore(settings.records_dir)
    owners = records_by_source(all_records(store)).get(url, [])
    if not owners:
        return None
    from flows.store import journal

    with file_lock(settings.records_dir / ".locks" / "gone.lock"):
        marks = gone_marks(settings.records_dir)
        if url in marks:
            return ", ".join(owners)  # marked before: one mark, one audit line per record
        marks[url] = {"records": owners, "at": at, "why": why}
        gone_path(settings.records_dir).parent.mkdir(parents=True, exist_ok=True)
        lines = [
            audit_entry(
                action="source-gone",
                at=at,
                by="incident-ingest",
                version=current_version(store, record_id),
                record_id=record_id,
                source=url,
                reason=why,
            )
            for record_id in owners
        ]
        with journal.intent(
            settings.data_dir,
            action="source-gone",
            by="incident-ingest",
            at=at,
            record_id=owners[0],
            steps=[
                journal.write("gone", gone_path(settings.records_dir), dumps_json(marks)),
                *(journal.audit(line) for line in lines),
            ],
        ):
            pass
    return ", ".join(owners)
