"""records/IL-NNNN.json: approved records, one pretty-printed file each, ids allocated under a lock."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock

from flows.store.atomic import dumps_model, write_text
from schema.record import Record

RECORD_FILE = re.compile(r"^IL-(\d{4,})\.json$")


def record_text(record: Record) -> str:
    """The on-disk form: the model's key order, 2-space indent, trailing newline."""
    return dumps_model(record)


class RecordStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _lock(self) -> FileLock:
        self.folder.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.folder / ".records.lock"))

    def paths(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.iterdir() if RECORD_FILE.match(p.name))

    def highest_number(self) -> int:
        # Names only: building and sorting Paths cost ~20 ms an approval at a few hundred records.
        if not self.folder.is_dir():
            return 0
        return max(
            (int(m.group(1)) for n in os.listdir(self.folder) if (m := RECORD_FILE.match(n))), default=0
        )

    def path_for(self, record_id: str) -> Path:
        return self.folder / f"{record_id}.json"

    def read(self, record_id: str) -> Record:
        return Record.model_validate_json(self.path_for(record_id).read_text(encoding="utf-8"))

    def create(self, build: Callable[[str], Record]) -> Record:
        """Allocate the next id and write the record `build(id)` makes, all under one lock.

        The lock spans allocation and write, so two reviewers approving at once in different
        processes get different ids; `build` may raise, and then nothing is written.
        """
        with self._lock():
            record_id = f"IL-{self.highest_number() + 1:04d}"
            record = build(record_id)
            path = self.path_for(record.id)
            if path.exists():  # build() must use the id it was given
                raise FileExistsError(path)
            write_text(path, record_text(record))
            return record
