"""`incidents validate`: check record files against the schema, vocabularies, ids and file names,
and the data directory around them: every record made by review has its audit line, no draft made
two records, every draft and audit line can be read, no decision is left unfinished."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from flows.store.records import RECORD_FILE
from schema.errors import RecordInvalid
from schema.record import Record, RecordBody
from schema.validation import validate_as


@dataclass(frozen=True)
class Problem:
    path: Path
    field: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}: {self.field}: {self.why}"


def record_files(records_dir: Path) -> list[Path]:
    """What `validate` checks by default: every record file directly in records/."""
    if not records_dir.is_dir():
        return []
    return sorted(p for p in records_dir.glob("*.json") if p.is_file())


def url_problems(record: RecordBody) -> list[tuple[str, str]]:
    """(field, why) for each URL of a record that is not http(s): a library links to them, so a
    `javascript:` or `file:` address must never reach a reader."""
    found: list[tuple[str, str]] = []
    listed = [("url", record.url)]
    listed += [(f"sources.{i}.url", s.url) for i, s in enumerate(record.sources)]
    listed += [(f"docs.{i}.url", d.url) for i, d in enumerate(record.docs)]
    for field, url in listed:
        if url is not None and not url.lower().startswith(("http://", "https://")):
            found.append((field, f"{url[:60]!r} is not an http or https URL"))
    return found


def validate_files(paths: list[Path]) -> tuple[int, list[Problem]]:
    """(files checked, problems). Folders are expanded to the record files they hold."""
    count, problems, _ = check_files(paths)
    return count, problems


def check_files(paths: list[Path]) -> tuple[int, list[Problem], dict[Path, Record]]:
    """`validate_files`, and the records that passed, by file."""
    files: list[Path] = []
    valid: dict[Path, Record] = {}
    problems: list[Problem] = []
    for path in paths:
        if path.is_dir():
            files += record_files(path)
        elif path.exists():
            files.append(path)
        else:
            problems.append(Problem(path, "(file)", "no such file"))
    owners: dict[str, Path] = {}
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            problems.append(Problem(path, "(file)", "not UTF-8 text"))
            continue
        except json.JSONDecodeError as exc:
            problems.append(Problem(path, "(file)", f"not JSON: {exc.msg} at line {exc.lineno}"))
            continue
        try:
            record = validate_as(Record, data, what=str(path))
        except RecordInvalid as exc:
            problems += [Problem(path, field, why) for field, why in exc.problems]
            continue
        problems += [Problem(path, field, why) for field, why in url_problems(record)]
        if RECORD_FILE.match(path.name) and path.stem != record.id:
            problems.append(Problem(path, "id", f"file name says {path.stem} but the record is {record.id}"))
        if record.id in owners:
            problems.append(Problem(path, "id", f"{record.id} is also the id in {owners[record.id]}"))
        else:
            owners[record.id] = path
        valid[path] = record
    return len(files), problems, valid


def data_dir_problems(data_dir: Path, records: dict[Path, Record]) -> list[Problem]:
    """What is wrong around the records (`records`: the valid ones, by file): two records from
    one draft, a record made by review without its audit line, audit lines and drafts that
    cannot be read, decisions a crash left that could not be finished."""
    from flows.store import journal
    from flows.store.audit import AuditLog
    from flows.store.queue import QueueStore

    problems: list[Problem] = []
    made_from: dict[str, tuple[str, Path]] = {}
    for path, record in sorted(records.items()):
        for i, source in enumerate(record.sources):
            if source.draft is None:
                continue
            first = made_from.setdefault(source.draft, (record.id, path))
            if first[0] != record.id:
                problems.append(
                    Problem(
                        path,
                        f"sources.{i}.draft",
                        f"draft {source.draft} also made {first[0]} ({first[1].name}): one draft, two "
                        "records; keep one and remove the other file",
                    )
                )
    log = AuditLog(data_dir / "records" / "audit.jsonl")
    read = log.read()
    problems += [Problem(b.path, f"line {b.number}", b.why) for b in read.bad]
    audited = {str(e.get("record_id")) for e in read.entries if e.get("record_id")}
    for path, record in sorted(records.items()):
        if any(s.draft for s in record.sources) and record.id not in audited:
            problems.append(
                Problem(
                    path,
                    "(audit)",
                    f"{record.id} was approved from a draft but no line of {log.path.name} records "
                    "it: the record was written outside `incidents review`, or the log lost lines",
                )
            )
    _, damaged = QueueStore(data_dir / "records" / "queue").scan()
    problems += [Problem(u.path, "(file)", u.why) for u in damaged]
    for path in journal.pending(data_dir):
        problems.append(
            Problem(
                path,
                "(intent)",
                "a decision not finished yet (a command still running, or one that died and could "
                "not be finished here): run any `incidents review` command on a writable data directory",
            )
        )
    return problems
