"""records/audit.jsonl: one JSON line per decision, appended whole and fsynced.

The one audit format. Every line is a JSON object with at least

    "action"   what was done: approved, rejected, edited, reopened, superseded, corrected,
               updated, source-added, gone, ... (any word: readers accept every action kind)
    "at"       when (ISO 8601 UTC, `flows.clock.utc_now()`)
    "by"       who (a reviewer's name, or the program: "incidents ingest")
    "version"  the version of the thing decided on *after* the decision (a draft's new version)

and then what the action concerns (`draft_id`, `record_id`) and its details (`reason`, `code`,
`changes`, `drafter`, ...). Build lines with `audit_entry()`; write them with `AuditLog.append`,
or, for a decision that also writes files, as the last step of a journal intent
(`flows.store.journal.audit`), which appends it exactly once even across a crash.

Appends are one O_APPEND write each, under a lock (records/.audit.lock), checked for length and
fsynced; a failed or short write is cut off again. A torn tail (a line without its newline, left
by a kill mid-write or by an editor) is moved aside to records/audit.jsonl.torn before the next
append, and reported. Readers (`AuditLog.read`) skip and report bad lines, never crash.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flows.store import faults
from flows.store.atomic import append_whole, file_lock, open_append

log = logging.getLogger(__name__)

REQUIRED = ("action", "at", "by", "version")
_UNSET = object()


def field_diff(before: Any, after: Any, prefix: str = "") -> list[dict[str, Any]]:
    """Field-level changes between two JSON values, dotted paths for nested objects."""
    if isinstance(before, dict) and isinstance(after, dict):
        changes: list[dict[str, Any]] = []
        for key in list(before) + [k for k in after if k not in before]:
            path = f"{prefix}.{key}" if prefix else str(key)
            changes += field_diff(before.get(key, _UNSET), after.get(key, _UNSET), path)
        return changes
    if before == after:
        return []
    return [
        {
            "field": prefix,
            "from": None if before is _UNSET else before,
            "to": None if after is _UNSET else after,
        }
    ]


def audit_entry(*, action: str, at: str, by: str, version: int | None, **details: Any) -> dict[str, Any]:
    """One audit line: at, by, action, version first, then `details` in the order given."""
    return {"at": at, "by": by, "action": action, "version": version} | details


@dataclass(frozen=True)
class BadLine:
    """A line of the audit log that is not an audit entry; `number` counts from 1."""

    path: Path
    number: int
    why: str

    def __str__(self) -> str:
        return f"{self.path} line {self.number}: {self.why}; skipped"


@dataclass
class AuditRead:
    entries: list[dict[str, Any]] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)


def _problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return "not a JSON object"
    missing = [key for key in ("action", "at", "by") if not isinstance(entry.get(key), str)]
    if missing:
        return f"not an audit entry (no {', '.join(missing)})"
    return None


class AuditLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def torn_path(self) -> Path:
        """Where torn tails are moved aside to (kept for a person to look at, never read back)."""
        return self.path.with_name(self.path.name + ".torn")

    def _lock_path(self) -> Path:
        return self.path.with_name(".audit.lock")

    def append(self, entry: dict[str, Any]) -> None:
        """Append one entry (it must have action, at, by and version) as one whole line."""
        missing = [key for key in REQUIRED if key not in entry]
        if missing or _problem(entry):
            raise ValueError(f"an audit entry needs {', '.join(REQUIRED)}: {entry!r} lacks {missing}")
        data = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
        faults.before("audit", self.path)
        fd = open_append(self.path)
        try:
            with file_lock(self._lock_path()):
                moved = self._set_torn_tail_aside(fd)
                if moved:
                    log.warning("%s", moved)
                if faults.torn("audit"):
                    os.write(fd, data[: len(data) // 2])
                    os.fsync(fd)
                    faults.kill_now()
                append_whole(fd, data, self.path, sync=False)
            # fsynced outside the lock: concurrent deciders' fsyncs share the file system's commits
            os.fsync(fd)
        finally:
            os.close(fd)

    def repair(self) -> str | None:
        """Move a torn tail aside now (at the start of a command); a line saying so, or None."""
        if not self.path.is_file():
            return None
        with open(self.path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return None
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) == b"\n":
                return None
        with file_lock(self._lock_path()):
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
            try:
                return self._set_torn_tail_aside(fd)
            finally:
                os.close(fd)

    def _set_torn_tail_aside(self, fd: int) -> str | None:
        """With the lock held: a last line without its newline is cut off the log and appended to
        audit.jsonl.torn, so the next line starts on a line of its own."""
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return None
        with open(self.path, "rb") as handle:
            end = size
            tail = b""
            while end > 0:
                start = max(0, end - 65536)
                handle.seek(start)
                chunk = handle.read(end - start)
                cut = chunk.rfind(b"\n")
                if cut >= 0:
                    tail = chunk[cut + 1 :] + tail
                    end = start + cut + 1
                    break
                tail = chunk + tail
                end = start
        if not tail:
            return None
        aside = open_append(self.torn_path)
        try:
            append_whole(aside, tail + b"\n", self.torn_path)
        finally:
            os.close(aside)
        os.ftruncate(fd, end)
        os.fsync(fd)
        return (
            f"{self.path}: a torn last line ({len(tail)} bytes, an interrupted write) was moved "
            f"aside to {self.torn_path.name}"
        )

    def read(self) -> AuditRead:
        """Every entry, and every line that is not one (not JSON, not an object, no action, at
        or by, or torn), named by its number: skipped, never fatal."""
        found = AuditRead()
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return found
        lines = data.split(b"\n")
        torn = lines[-1] != b""
        if not torn:
            lines.pop()
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            if torn and number == len(lines):
                why = "torn (no end of line: an interrupted write); moved aside at the next decision"
                found.bad.append(BadLine(self.path, number, why))
                continue
            try:
                entry = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                found.bad.append(BadLine(self.path, number, "not UTF-8 text"))
                continue
            except json.JSONDecodeError as exc:
                found.bad.append(BadLine(self.path, number, f"not JSON ({exc.msg})"))
                continue
            problem = _problem(entry)
            if problem:
                found.bad.append(BadLine(self.path, number, problem))
            else:
                found.entries.append(entry)
        return found

    def entries(self) -> list[dict[str, Any]]:
        """The readable entries, oldest first (bad lines skipped: `read()` names them)."""
        return self.read().entries

    def contains(self, entry: dict[str, Any]) -> bool:
        return entry in self.read().entries
