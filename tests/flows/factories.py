"""Drafts made in code for store and review tests (the drafter has its own fixtures)."""

from __future__ import annotations

from schema.draft import Draft, DraftSource, Evidence, HistoryEntry, Verdict, draft_id_for
from schema.record import RecordBody


def make_draft(n: int = 1, *, org: str | None = "Larkspur", title: str = "API outage") -> Draft:
    url = f"https://engineering.larkspur.example/posts/{n}/"
    quote = f"{title} number {n}."
    return Draft(
        draft_id=draft_id_for(url, f"sha256:{n:064x}"),
        record=RecordBody(
            org=org,
            org_slug=org.lower() if org else None,
            date="2026-03-12",
            title={"en": title},
            summary={"en": quote},
            sources=[{"url": url, "kind": "blog", "license": "unknown", "archived": f"c-{n:08x}"}],
        ),
        evidence={"summary": [Evidence(quote=quote, section="Summary", start=10, end=10 + len(quote))]},
        confidence={"summary": {"value": 0.6, "method": "heading"}},
        postmortem=Verdict(verdict=True, score=0.9, reasons=["heading: Timeline"]),
        source=DraftSource(url=url, canonical_url=url, snapshot=f"c-{n:08x}", language="en"),
        history=[HistoryEntry(at="2026-03-12T10:00:00Z", by="incident-ingest 0.1.0", action="drafted")],
    )
