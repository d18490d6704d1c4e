"""records/.journal/: intents, so that a decision is all or nothing across a crash or a full disk.

A decision writes several files: a record, a draft, an audit line. Before it writes any, it
writes an *intent*: one small JSON file naming the action, the draft, its version, the record id,
and every step with the text it writes (and the text it replaces). Then the steps run in order,
then the intent is removed. Its writer holds a lock (flock) on the intent file while it works.

- The process dies (kill -9, power loss) after the intent is on disk: the next command that opens
  the data directory (`recover`) finds the intent unlocked and *finishes* it: each step is done
  again unless the file already holds its text; the audit line is appended unless an identical
  line is there. The decision the person took is kept, exactly once.
- A step fails while the process lives (a full disk): the steps done are *rolled back* (the
  record removed, the draft restored), the intent removed, and the error raised: nothing
  happened, and a retry starts afresh. If the roll-back cannot write either, the intent stays
  and the next command finishes the decision instead.

Use (every write of a decision goes through this):

    from flows.store import journal
    from flows.store.audit import audit_entry

    line = audit_entry(action="approved", at=now, by=reviewer, version=new.version,
                       draft_id=draft_id, record_id=record_id, ...)
    with journal.intent(
        data_dir, action="approved", by=reviewer, draft_id=draft_id, version=new.version,
        record_id=record_id,
        steps=[journal.write("record", record_path, record_text),
               journal.write("draft", draft_path, draft_text),
               journal.audit(line)],
        cleanup=[reservation_path],
    ) as done:
        ...  # the steps are done here; `done.id` names the intent

    notes = journal.recover(data_dir)   # at the start of a command: finish what a crash left

`write` steps replace a file atomically (temp file, fsync, rename) or create it; `audit` steps
append one line to records/audit.jsonl. Steps run in the order given; put the audit line last.
The caller holds whatever lock makes the decision exclusive (the draft's lock for a draft).
`recover` also cleans what a crash leaves outside intents (see `leftovers`).
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

try:
    import fcntl
except ImportError:  # not POSIX: intents are written and rolled back, but a crash's are left
    fcntl = None  # type: ignore[assignment]

from flows.store import faults
from flows.store.atomic import _written_beside, file_lock, fsync_dir, write_text
from flows.store.audit import AuditLog
from flows.store.records import RESERVED_FILE

FOLDER = ".journal"
# A temp file or reservation younger than this may belong to a writer that has not locked it yet.
SETTLE_SECONDS = 2.0


@dataclass(frozen=True)
class Step:
    """One write of a decision: `write` a file's whole text, or append an `audit` line."""

    name: str
    kind: Literal["write", "audit"]
    path: Path | None = None
    text: str | None = None
    entry: dict[str, Any] | None = None


def write(name: str, path: Path, text: str) -> Step:
    """A step that makes `path` hold `text` (created or replaced, atomically)."""
    return Step(name, "write", path=path, text=text)


def audit(entry: dict[str, Any]) -> Step:
    """A step that appends `entry` (see `flows.store.audit.audit_entry`) to records/audit.jsonl."""
    return Step("audit", "audit", entry=entry)


@dataclass
class Intent:
    """An intent as written to records/.journal/<id>.json."""

    id: str
    action: str
    by: str
    draft_id: str | None
    version: int | None
    record_id: str | None
    steps: list[dict[str, Any]]
    cleanup: list[str] = field(default_factory=list)
    at: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "action": self.action,
            "by": self.by,
            "at": self.at,
            "draft_id": self.draft_id,
            "version": self.version,
            "record_id": self.record_id,
            "steps": self.steps,
            "cleanup": self.cleanup,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Intent:
        return cls(
            id=str(data["id"]),
            action=str(data["action"]),
            by=str(data.get("by") or ""),
            draft_id=data.get("draft_id"),
            version=data.get("version"),
            record_id=data.get("record_id"),
            steps=list(data["steps"]),
            cleanup=list(data.get("cleanup") or []),
            at=str(data.get("at") or ""),
        )

    def describe(self) -> str:
        """`approval of d-... as IL-0003 by alice`: what the intent is, for notes and errors."""
        noun = {
            "approved": "approval",
            "rejected": "rejection",
            "edited": "edit",
            "reopened": "reopening",
            "superseded": "superseding",
            "corrected": "correction",
            "updated": "update",
        }.get(self.action, f"'{self.action}'")
        what = f"{noun} of {self.draft_id or self.record_id or '?'}"
        if self.record_id and self.draft_id:
            what += f" as {self.record_id}"
        return what + (f" by {self.by}" if self.by else "")


@dataclass(frozen=True)
class Note:
    """What `recover` did or could not do: one line for the person running the command."""

    text: str
    action: str = ""
    draft_id: str | None = None
    record_id: str | None = None
    by: str = ""
    finished: bool = False
    problem: bool = False  # something left for a person (or a later, writable run) to deal with
    path: Path | None = None

    def __str__(self) -> str:
        return self.text


def folder_of(data_dir: Path) -> Path:
    return data_dir / "records" / FOLDER


def _rel(data_dir: Path, path: Path) -> str:
    try:
        return str(path.relative_to(data_dir))
    except ValueError:
        return str(path)


def _read_or_none(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _do_write(path: Path, text: str | None) -> None:
    if text is None:
        path.unlink(missing_ok=True)
    else:
        write_text(path, text)


@contextmanager
def intent(
    data_dir: Path,
    *,
    action: str,
    by: str,
    steps: Sequence[Step],
    draft_id: str | None = None,
    version: int | None = None,
    record_id: str | None = None,
    cleanup: Sequence[Path] = (),
    at: str = "",
) -> Iterator[Intent]:
    """Write the intent, run its steps, yield it; remove it (and the `cleanup` files) after.

    A step that fails rolls back the steps before it (unless the audit line is written: then the
    intent stays and `recover` finishes it) and re-raises. The injection points of
    `flows.store.faults` are `after:intent`, `fail:STEP`, `after:STEP` for each step name, and
    `after:steps` (all done, the intent not yet removed)."""
    folder = folder_of(data_dir)
    planned: list[dict[str, Any]] = []
    for step in steps:
        if step.kind == "write":
            assert step.path is not None and step.text is not None
            planned.append(
                {
                    "name": step.name,
                    "kind": "write",
                    "path": _rel(data_dir, step.path),
                    "before": _read_or_none(step.path),
                    "after": step.text,
                }
            )
        else:
            planned.append({"name": step.name, "kind": "audit", "entry": step.entry})
    made = Intent(
        id=f"{time.time_ns() // 1_000_000:013d}-{os.getpid()}-{secrets.token_hex(3)}",
        action=action,
        by=by,
        draft_id=draft_id,
        version=version,
        record_id=record_id,
        steps=planned,
        cleanup=[_rel(data_dir, p) for p in cleanup],
        at=at,
    )
    path = folder / f"{made.id}.json"
    faults.before("intent", path)
    # One line, no indent: json's C encoder (an indented dump runs in Python, ~5x slower here).
    fd, tmp = _written_beside(path, (json.dumps(made.as_dict(), ensure_ascii=False) + "\n").encode("utf-8"))
    try:
        os.link(tmp, path)  # the temp file is locked: so is the intent, through its other name
    except BaseException:
        os.close(fd)
        raise
    finally:
        Path(tmp).unlink(missing_ok=True)
    try:
        fsync_dir(folder)
        faults.after("intent")
        done: list[dict[str, Any]] = []
        try:
            for step, plan in zip(steps, planned, strict=True):
                faults.before(step.name, step.path)
                _run(data_dir, plan)
                done.append(plan)
                faults.after(step.name)
            faults.after("steps")
            yield made
        except BaseException:
            if not any(p["kind"] == "audit" for p in done) and _roll_back(data_dir, done):
                path.unlink(missing_ok=True)
            raise
        for name in made.cleanup:
            (data_dir / name).unlink(missing_ok=True)
        path.unlink(missing_ok=True)
    finally:
        os.close(fd)


def _run(data_dir: Path, plan: dict[str, Any]) -> None:
    if plan["kind"] == "write":
        _do_write(data_dir / plan["path"], plan["after"])
    else:
        AuditLog(data_dir / "records" / "audit.jsonl").append(plan["entry"])


def _roll_back(data_dir: Path, done: list[dict[str, Any]]) -> bool:
    """Undo the write steps done, last first; False if one of them cannot be undone."""
    try:
        for plan in reversed(done):
            _do_write(data_dir / plan["path"], plan["before"])
    except OSError:
        return False
    return True


def _locked_by_someone(fd: int) -> bool:
    if fcntl is None:  # no flock(): a live writer cannot be told from a dead one; leave it be
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    return False


def pending(data_dir: Path) -> list[Path]:
    """The intents in records/.journal/, oldest first (live ones of running commands included)."""
    folder = folder_of(data_dir)
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(folder / n for n in names if n.endswith(".json") and not n.startswith("."))


def recover(data_dir: Path, *, tidy: bool = True) -> list[Note]:
    """Finish every intent a dead process left, then (with `tidy`) clean the leftovers of
    crashes (`leftovers`); what was done.

    Safe to run at any time, by several processes at once: an intent whose writer still runs is
    locked and left alone. Never raises for a write it cannot do (a full disk, a read-only copy):
    that is a note with `problem=True`, and a later run finishes it."""
    notes: list[Note] = []
    for path in pending(data_dir):
        moved: list[str] = []
        note = _recover_one(data_dir, path, moved)
        notes += [Note(line, path=data_dir / "records" / "audit.jsonl") for line in moved]
        if note is not None:
            notes.append(note)
    if tidy:
        notes += leftovers(data_dir)
    return notes


def _recover_one(data_dir: Path, path: Path, moved: list[str]) -> Note | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None  # finished meanwhile
    try:
        if _locked_by_someone(fd) or os.fstat(fd).st_nlink == 0:
            return None  # its writer is still at work, or has just finished
        try:
            made = Intent.from_dict(json.loads(os.read(fd, 1 << 30).decode("utf-8")))
        except (ValueError, KeyError, TypeError) as exc:
            return Note(
                f"{path}: (intent): cannot be read ({exc}); it was left by a command that died: "
                "check the draft and record it names, then remove it",
                problem=True,
                path=path,
            )
        what = made.describe()
        conflicts: list[str] = []
        try:
            for plan in made.steps:
                _redo(data_dir, plan, conflicts, moved)
            for name in made.cleanup:
                (data_dir / name).unlink(missing_ok=True)
            path.unlink()
        except OSError as exc:
            from flows.store.atomic import unwritable

            why = unwritable(exc) or f"{exc.strerror or exc} ({exc.filename or path})"
            return Note(
                f"an interrupted {what} could not be finished yet: {why}; it is finished by the "
                "next command that can write",
                action=made.action,
                draft_id=made.draft_id,
                record_id=made.record_id,
                by=made.by,
                problem=True,
                path=path,
            )
        text = f"finished an interrupted {what} ({path.name})"
        if conflicts:
            text += ": " + "; ".join(conflicts)
        return Note(
            text,
            action=made.action,
            draft_id=made.draft_id,
            record_id=made.record_id,
            by=made.by,
            finished=True,
            problem=bool(conflicts),
            path=path,
        )
    finally:
        os.close(fd)


def _redo(data_dir: Path, plan: dict[str, Any], conflicts: list[str], moved: list[str]) -> None:
    """Do one step of a dead intent again, unless it is done (the file holds its text, the log
    its line); a file that holds neither its old nor its new text is left as it is."""
    if plan["kind"] == "write":
        target = data_dir / plan["path"]
        now = _read_or_none(target)
        if now == plan["after"]:
            return
        if now != plan["before"]:
            conflicts.append(f"{plan['path']} changed since, left as it is")
            return
        _do_write(target, plan["after"])
        return
    log = AuditLog(data_dir / "records" / "audit.jsonl")
    if torn := log.repair():
        moved.append(torn)
    if not log.contains(plan["entry"]):
        log.append(plan["entry"])


def _is_dead(path: Path, now: float, settle: float) -> bool:
    """A temp file or reservation whose writer is gone: old enough and not locked."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        if now - os.fstat(fd).st_mtime < settle:
            return False
        return not _locked_by_someone(fd)
    finally:
        os.close(fd)


def _reservations(records: Path, clean: bool) -> list[Note]:
    """Reservations (.IL-NNNN.reserved) whose approval died: looked at under the records lock,
    under which every live one is created and locked at once, so an unlocked one is dead."""
    try:
        names = sorted(n for n in os.listdir(records) if RESERVED_FILE.match(n))
    except (FileNotFoundError, NotADirectoryError):
        return []
    if not names:
        return []
    kind = "an id reservation of an approval that was killed before it wrote anything (the id is free again)"
    notes: list[Note] = []
    try:
        with file_lock(records / ".records.lock"):
            for name in names:
                if _is_dead(records / name, time.time(), 0.0):
                    notes += _clean(records / name, kind, clean)
    except OSError as exc:  # a read-only copy: cannot take the lock, so cannot tell
        notes.append(
            Note(
                f"{records}: (leftover): {len(names)} id reservation(s) left by killed approvals "
                f"({exc.strerror}); removed by the next command on a writable data directory",
                problem=True,
                path=records,
            )
        )
    return notes


def _clean(path: Path, kind: str, clean: bool) -> list[Note]:
    if not clean:
        return [Note(f"{path}: (leftover): {kind}; removed by the next command", path=path)]
    try:
        path.unlink()
    except FileNotFoundError:
        return []
    except OSError as exc:
        why = f"{path}: (leftover): {kind}; cannot remove it ({exc.strerror})"
        return [Note(why, problem=True, path=path)]
    return [Note(f"removed {path}: {kind}", path=path)]


def leftovers(data_dir: Path, *, clean: bool = True) -> list[Note]:
    """What crashes leave outside intents, removed (with `clean`) and reported.

    - records/.IL-NNNN.reserved: an id reserved by an approval that died before its intent
      was written (nothing of the decision was written: the id is free again);
    - .NAME.*.tmp in records/, records/queue/ and records/.journal/: a write killed before its
      temp file was renamed into place (the file it was for is whole, old or new);
    - a torn last line of records/audit.jsonl (moved aside to audit.jsonl.torn).
    Live ones (locked by their writer, or only just made) are left alone."""
    records = data_dir / "records"
    notes: list[Note] = []
    now = time.time()
    for folder in (records, records / "queue", records / FOLDER):
        try:
            names = os.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            continue
        for name in sorted(names):
            if name.startswith(".") and name.endswith(".tmp"):
                kind = "a temp file of a write that was killed (the file it was for is whole)"
                path = folder / name
                if _is_dead(path, now, SETTLE_SECONDS):
                    notes += _clean(path, kind, clean)
    notes += _reservations(records, clean)
    if clean:
        try:
            moved = AuditLog(records / "audit.jsonl").repair()
        except OSError as exc:
            moved = f"{records / 'audit.jsonl'}: its torn last line cannot be moved aside ({exc.strerror})"
        if moved:
            notes.append(Note(moved, path=records / "audit.jsonl"))
    return notes
