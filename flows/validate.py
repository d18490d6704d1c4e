"""`incidents validate`: check record files against the schema, vocabularies, ids and file names."""

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
    files: list[Path] = []
    problems: list[Problem] = []
    for path in paths:
        if path.is_dir():
            files += record_files(path)
            # one source, one record; histories that chain; no superseded draft approved
            from flows.lifecycle import lifecycle_problems

            problems += [Problem(*found) for found in lifecycle_problems(path)]
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
    return len(files), problems
