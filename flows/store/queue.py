"""records/queue/<draft_id>.json: drafts awaiting review, and decided ones with their status."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

from flows.store.atomic import _written_beside, dumps_model, file_lock, fsync_dir, write_text
from flows.store.damaged import Damaged, Unreadable, load
from schema.draft import Draft, Status
from schema.errors import ReviewError


def draft_text(draft: Draft) -> str:
    return dumps_model(draft)


class QueueStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path_for(self, draft_id: str) -> Path:
        return self.folder / f"{draft_id}.json"

    def lock_path(self, draft_id: str) -> Path:
        return self.folder / ".locks" / f"{draft_id}.lock"

    def lock_for(self, draft_id: str) -> AbstractContextManager[None]:
        """Held while a decision on one draft is taken: two reviewers cannot decide it twice, and
        decisions on different drafts do not wait for each other."""
        return file_lock(self.lock_path(draft_id))

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
