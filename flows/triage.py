"""The gate's triage, as reviewers see it: the doubtful lane of the queue, the skipped pages, and
drafting a skipped page after all.

The gate (extractors/gate.py) says of every page whether it is a postmortem (`verdict`, its best
guess) and whether ingest leaves it out (`skip`, only for a confident "no"). A draft whose verdict
is "no" is *doubtful*: it is queued, in the doubtful lane, where a reviewer rejects look-alikes in
one bulk action. A skipped page is not queued; the ledger (raw/ledger.sqlite) keeps it with the
gate's reasons and its archived snapshot, so `incidents review skipped` and the web page /skipped
list it, and `unskip` drafts it from the snapshot (never the live site) and queues it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from dataclasses import dataclass

from extractors.gate import no_article_reason
from flows.clock import utc_now
from flows.settings import Settings
from flows.store.audit import AuditLog, audit_entry
from flows.store.ledger import Entry, Ledger
from flows.store.queue import QueueStore
from schema.draft import Draft, HistoryEntry
from schema.errors import InputError

LANES = ("postmortem", "doubtful")
DOUBTFUL = "doubtful"
SKIPPED_PREFIX = "not a postmortem: "  # how the ingest stage words a skip (flows/stages.py)


def lane_of(draft: Draft) -> str:
    """`doubtful` when the gate's best guess is "not a postmortem", else `postmortem`."""
    return "postmortem" if draft.postmortem.verdict else DOUBTFUL


def doubtful_note(verdict: bool, reasons: Iterable[str]) -> str | None:
    """What an ingest line says of a doubtful draft: the gate's first reason."""
    if verdict:
        return None
    first = next(iter(reasons), "") or "the gate's verdict"
    return f"{DOUBTFUL}: {first}"


def triage_text(draft: Draft) -> str:
    """What `review show` adds to a draft's explanation: its lane when doubtful, then the
    drafter's runners-up (`draft.alternatives`), field by field, best first, each with its score
    and first quote."""
    lines = []
    if lane_of(draft) == DOUBTFUL:
        lines += ["", "lane: doubtful (the gate says no, but was not sure enough to skip it)"]
    if draft.alternatives:
        lines += ["", "alternatives (runners-up, best first)"]
    for name, alternatives in draft.alternatives.items():
        lines.append(name)
        for alt in alternatives:
            quote = alt.evidence[0].quote.replace("\n", " ") if alt.evidence else ""
            shown = f'  < "{textwrap.shorten(quote, 100, placeholder=" …")}"' if quote else ""
            lines.append(f"    {alt.term}  {alt.score:.2f}{shown}")
    return "\n".join(lines) + "\n" if lines else ""


@dataclass(frozen=True)
class Skipped:
    """A page the gate skipped: its address, why, and the archived snapshot it was judged on."""

    url: str
    reason: str
    snapshot: str | None
    draft_id: str

    @property
    def draftable(self) -> bool:
        """False for a page that is no article at all (a listing, a few words): nothing to review."""
        return bool(self.snapshot) and not no_article_reason([self.reason])

    def as_dict(self) -> dict[str, str | None]:
        return {"url": self.url, "reason": self.reason, "snapshot": self.snapshot, "draft_id": self.draft_id}


def _ledger(settings: Settings) -> Ledger:
    return Ledger(settings.raw_dir / "ledger.sqlite", settings.database)


def skipped_pages(settings: Settings) -> list[Skipped]:
    """Every page the gate skipped, by URL (an empty list before the first ingest)."""
    if not (settings.raw_dir / "ledger.sqlite").exists():
        return []
    ledger = _ledger(settings)
    try:
        rows = ledger.all(
            "SELECT url, skipped, snapshot, draft_id FROM sources WHERE skipped IS NOT NULL ORDER BY url"
        )
    finally:
        ledger.close()
    return [Skipped(url, _plain(why), snapshot, draft_id) for url, why, snapshot, draft_id in rows]


def _plain(why: str) -> str:
    return why[len(SKIPPED_PREFIX) :] if why.startswith(SKIPPED_PREFIX) else why


def unskip(settings: Settings, urls: list[str], *, reviewer: str) -> list[Draft]:
    """Draft skipped pages from their archived snapshots and queue them (in the doubtful lane):
    one draft per URL, an audit line each (action `unskipped`), the ledger cleared of the skip.
    An address that is not a skipped page is an InputError naming it; nothing is drafted then."""
    if not urls:
        raise InputError("no skipped pages to draft (`incidents review skipped` lists them)")
    ledger = _ledger(settings)
    try:
        entries = [_skipped_entry(ledger, url) for url in urls]
        return [_unskip_one(settings, ledger, entry, reviewer) for entry in entries]
    finally:
        ledger.close()


def _skipped_entry(ledger: Ledger, url: str) -> Entry:
    entry = ledger.get(url)
    if entry is None and "://" in url:
        from flows.fetch import canonicalize_url

        entry = ledger.get(canonicalize_url(url))
    if entry is None or not entry.skipped:
        raise InputError(f"{url} is not a skipped page (`incidents review skipped` lists them)")
    if not entry.snapshot:
        raise InputError(f"{url} was skipped without a snapshot: ingest it again with --no-gate")
    if no_article_reason([_plain(entry.skipped)]):
        raise InputError(f"{url} is no article at all ({_plain(entry.skipped)}): there is nothing to review")
    return entry


def _unskip_one(settings: Settings, ledger: Ledger, entry: Entry, reviewer: str) -> Draft:
    from extractors import draft_page  # as the ingest stage drafts (flows/drafting.py), from the snapshot
    from flows.archive import Archive

    assert entry.snapshot  # _skipped_entry checked it
    with Archive(settings) as archive:
        capture = archive.get(entry.snapshot)
        data = archive.read_payload(entry.snapshot)
    now = utc_now()
    draft = draft_page(
        data,
        url=capture.url,
        content_type=capture.content_type or capture.mime,
        now=now,
        snapshot=entry.snapshot,
        digest=entry.digest,
    ).draft
    why = _plain(entry.skipped or "")
    reason = f"drafted from the skipped pages ({why})"
    step = HistoryEntry(at=now, by=reviewer, action="drafted", reason=reason)
    draft = draft.model_copy(update={"history": [*draft.history, step]})
    queue = QueueStore(settings.queue_dir, settings.database)
    if not queue.add(draft):  # queued before (e.g. by --no-gate): that draft stands
        draft = queue.get(draft.draft_id)
    ledger.put(Entry(entry.url, entry.digest, draft.draft_id, entry.snapshot))
    AuditLog(settings.audit_path).append(
        audit_entry(
            action="unskipped",
            at=now,
            by=reviewer,
            version=draft.version,
            draft_id=draft.draft_id,
            record_id=None,
            url=entry.url,
            reason=why,
        )
    )
    return draft
