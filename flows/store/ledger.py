"""raw/ledger.sqlite (or INCIDENTS_DATABASE_URL's `sources` table): per source URL, the last
snapshot digest and the draft made from it.

A derived index for speed: a re-run decides `duplicate` / `unchanged` without extracting again.
Losing it costs only speed: the queue's content-derived draft ids still catch every duplicate.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from flows.store.database import Store, in_chunks

_SELECT = "SELECT url, digest, draft_id, snapshot, skipped FROM sources"


@dataclass(frozen=True)
class Entry:
    url: str
    digest: str
    draft_id: str
    snapshot: str | None
    skipped: str | None = None  # why the gate left it out, when it did


class Ledger(Store):
    """Its schema: flows/store/migrations/ledger/."""

    component = "ledger"

    def get(self, url: str) -> Entry | None:
        row = self.one(f"{_SELECT} WHERE url = ?", (url,))
        return Entry(*row) if row else None

    def get_many(self, urls: Collection[str]) -> dict[str, Entry]:
        """The entries of those URLs that have one, a query a few hundred URLs."""
        found: dict[str, Entry] = {}
        for chunk, marks in in_chunks(urls):
            for row in self.all(f"{_SELECT} WHERE url IN ({marks})", tuple(chunk)):
                found[row[0]] = Entry(*row)
        return found

    def put(self, entry: Entry) -> None:
        self.execute(
            "INSERT INTO sources (url, digest, draft_id, snapshot, skipped) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT(url) DO UPDATE SET digest=excluded.digest, draft_id=excluded.draft_id,"
            " snapshot=excluded.snapshot, skipped=excluded.skipped",
            (entry.url, entry.digest, entry.draft_id, entry.snapshot, entry.skipped),
        )
