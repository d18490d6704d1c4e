"""records/queue/<draft_id>.json: drafts awaiting review, and decided ones with their status.

The files are the queue. With INCIDENTS_DATABASE_URL set, its `queue` table also indexes them
(draft id, status, version; migrations/review/), kept in step as drafts are queued and decided,
and the lock held while a draft is decided is the database's (an advisory lock per draft), so
reviewers on several machines exclude each other without file locks over a network file system.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path

from flows.store.atomic import _written_beside, dumps_model, file_lock, fsync_dir, write_text
from flows.store.damaged import Damaged, Unreadable, load
from flows.store.database import Database, open_component, upsert_sql
from schema.draft import Draft, Status
from schema.errors import DataDirError, ReviewError

_ROW = upsert_sql("queue", ("draft_id", "status", "version", "updated_at"), ("draft_id",))
# Seconds a decision waits for another reviewer's lock on the same draft (as file_lock's holders
# finish in well under a second, a wait this long means a stuck process).
LOCK_TIMEOUT = 600.0


def draft_text(draft: Draft) -> str:
    return dumps_model(draft)


class QueueStore:
    def __init__(self, folder: Path, database_url: str = "") -> None:
        self.folder = folder
        self._database_url = database_url
        self._database: Database | None = None  # opened when first needed

    def _db(self) -> Database | None:
        if self._database_url and self._database is None:
            self._database = open_component(self._database_url, "review")
        return self._database

    def close(self) -> None:
        if self._database is not None:
            self._database.close()
            self._database = None

    def path_for(self, draft_id: str) -> Path:
        return self.folder / f"{draft_id}.json"

    def lock_path(self, draft_id: str) -> Path:
        return self.folder / ".locks" / f"{draft_id}.lock"

    def lock_for(self, draft_id: str) -> AbstractContextManager[None]:
        """Held while a decision on one draft is taken: two reviewers cannot decide it twice, and
        decisions on different drafts do not wait for each other."""
        if self._database_url:
            return self._shared_lock(draft_id)
        return file_lock(self.lock_path(draft_id))

    @contextmanager
    def _shared_lock(self, draft_id: str) -> Iterator[None]:
        """A PostgreSQL advisory lock on the draft, tried every 50 ms (a blocking wait would hold
        this process's connection from its other threads)."""
        db = self._db()
        assert db is not None
        key = int.from_bytes(hashlib.sha256(f"queue:{draft_id}".encode()).digest()[:8], "big", signed=True)
        deadline = time.monotonic() + LOCK_TIMEOUT
        while not (row := db.one("SELECT pg_try_advisory_lock(?)", (key,))) or not row[0]:
            if time.monotonic() > deadline:
                raise DataDirError(
                    f"draft {draft_id} stayed locked by another reviewer past {LOCK_TIMEOUT:.0f} s "
                    f"(in the database at {db.name}); wait for them, then run the command again"
                )
            time.sleep(0.05)
        try:
            yield
        finally:
            db.execute("SELECT pg_advisory_unlock(?)", (key,))

    def indexed(self, draft: Draft) -> None:
        """The draft's row in the shared index, as it is now (nothing without a database)."""
        self._index_row(draft.draft_id, str(draft.status), draft.version)

    def _index_row(self, draft_id: str, status: str, version: int) -> None:
        db = self._db()
        if db is not None:
            db.execute(_ROW, (draft_id, status, version, datetime.now(UTC).isoformat()))

    def reindex(self, db: Database) -> int:
        """Every readable draft's row into `db` (`incidents db copy`); how many."""
        drafts, _damaged = self.scan()
        for draft in drafts:
            db.execute(
                _ROW, (draft.draft_id, str(draft.status), draft.version, datetime.now(UTC).isoformat())
            )
        return len(drafts)

    def indexed_ids(self, status: Status | None = None) -> list[str]:
        """The draft ids the shared index holds (of `status`); the files' ids without one."""
        db = self._db()
        if db is None:
            return [d.draft_id for d in self.drafts(status)] if status else self.ids()
        if status is None:
            return [str(r[0]) for r in db.all("SELECT draft_id FROM queue ORDER BY draft_id")]
        rows = db.all("SELECT draft_id FROM queue WHERE status = ? ORDER BY draft_id", (str(status),))
        return [str(r[0]) for r in rows]

    def add(self, draft: Draft) -> bool:
        """Queue a new draft; False when a draft with this id is already there (a duplicate)."""
        return self.add_text(draft.draft_id, draft_text(draft))

    def add_text(self, draft_id: str, text: str) -> bool:
        """Queue a new draft given as its file's text (`draft_text`); False for a duplicate.

        Written to a temp file and hard-linked into place: link() fails if the name exists, so of
        two processes queueing the same draft exactly one wins, and no reader sees half a file.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.path_for(draft_id)
        if target.exists():
            return False
        fd, tmp = _written_beside(target, text.encode("utf-8"))
        try:
            try:
                os.link(tmp, target)
            except FileExistsError:
                return False
        finally:
            Path(tmp).unlink(missing_ok=True)
            os.close(fd)
        fsync_dir(self.folder)
        if self._database_url:
            head = json.loads(text)
            self._index_row(draft_id, str(head.get("status") or "pending"), int(head.get("version") or 1))
        return True

    def resolve(self, draft_id: str) -> str:
        """The full id for an id or a unique prefix of one (`d-3f2a`)."""
        if self.path_for(draft_id).exists():
            return draft_id
        matches = sorted(d for d in self.ids() if d.startswith(draft_id))
        if len(matches) == 1:
            return matches[0]
        if matches:
            more = f" and {len(matches) - 10} more" if len(matches) > 10 else ""
            raise ReviewError(
                f"draft id {draft_id!r} is ambiguous: it starts {', '.join(matches[:10])}{more}; "
                "give more of the id"
            )
        raise ReviewError(f"no draft {draft_id!r} in {self.folder} (see `incidents review list`)")

    def get(self, draft_id: str) -> Draft:
        """The draft; `Damaged` (an InputError naming the file) when its file cannot be read."""
        return load(self.path_for(self.resolve(draft_id)), Draft, "draft")

    def save(self, draft: Draft, *, expected_version: int, current: Draft | None = None) -> Draft:
        """Write a changed draft, bumping its version; refuse if someone else changed it first.

        `current` is the draft as the caller read it while holding `lock_for(draft_id)` (still
        held): every writer of a queued draft holds that lock, so it is not read again."""
        updated = self.next_version(draft, expected_version=expected_version, current=current)
        write_text(self.path_for(draft.draft_id), draft_text(updated))
        self.indexed(updated)
        return updated

    def next_version(self, draft: Draft, *, expected_version: int, current: Draft | None = None) -> Draft:
        """`draft` as its next version, written by the caller (through a journal intent, as
        `draft_text(...)` to `path_for(draft_id)`); refused if someone else changed it first."""
        if current is None or current.draft_id != draft.draft_id:
            current = self.get(draft.draft_id)
        if current.version != expected_version:
            raise ReviewError(
                f"draft {draft.draft_id} changed meanwhile (version {current.version}, "
                f"expected {expected_version}): reload it and try again"
            )
        return draft.model_copy(update={"version": expected_version + 1})

    def ids(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        return sorted(p.stem for p in self.folder.glob("d-*.json"))

    def drafts(self, status: Status | None = None) -> Iterator[Draft]:
        """Every readable draft (of `status`); damaged files are skipped: `scan` names them."""
        for draft_id in self.ids():
            try:
                draft = self.get(draft_id)
            except (Damaged, FileNotFoundError):
                continue
            if status is None or draft.status == status:
                yield draft

    def scan(self, status: Status | None = None) -> tuple[list[Draft], list[Unreadable]]:
        """(the readable drafts of `status`, the files that cannot be read): one bad file is
        named, never fatal."""
        found: list[Draft] = []
        damaged: list[Unreadable] = []
        for draft_id in self.ids():
            try:
                draft = self.get(draft_id)
            except FileNotFoundError:
                continue  # removed meanwhile
            except Damaged as exc:
                damaged.append(Unreadable(exc.path, exc.why))
                continue
            if status is None or draft.status == status:
                found.append(draft)
        return found, damaged
