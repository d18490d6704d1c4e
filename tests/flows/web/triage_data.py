"""A data directory for the gate's triage on the web: the ten postmortems of drafts.py, a doubtful
draft (a game day told like an outage), a page the gate skipped (archived, listed in the ledger as
ingest leaves it) and alternatives on one draft's root cause and symptoms."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from extractors import draft_page
from flows.archive import Archive
from flows.settings import Settings
from flows.store.ledger import Entry, Ledger
from flows.store.queue import QueueStore
from schema.draft import Alternative, Draft
from schema.vocab import vocabulary
from tests.conftest import DATA
from tests.flows.web.drafts import add_page, build_queue

DOUBTFUL_PAGE = DATA / "triage" / "doubtful-game-day.html"
GENERIC_PAGE = DATA / "triage" / "generic-product-news.html"
SKIPPED_URL = "https://coffee.example/journal/new-grinder.html"


@dataclass
class Triage:
    drafts: list[Draft]
    doubtful: Draft
    with_alternatives: Draft
    alternative: str  # the root cause offered as a runner-up (not the drafted one)
    skipped_url: str


def build_triage(data_dir: Path) -> Triage:
    settings = Settings(data_dir=data_dir)
    drafts = build_queue(data_dir, script_page=False)
    doubtful = add_page(
        settings,
        DOUBTFUL_PAGE.read_bytes(),
        "https://harbourlight.example/blog/game-day.html",
        now="2026-03-01T10:00:00Z",
    )
    assert doubtful.postmortem.verdict is False and doubtful.postmortem.skip is False

    # A skipped page as ingest leaves it: archived, no draft queued, the ledger says why.
    data = GENERIC_PAGE.read_bytes()
    gate = draft_page(data, url=SKIPPED_URL).draft
    assert gate.postmortem.skip
    with Archive(settings) as archive:
        capture = archive.store_resource(data, url=SKIPPED_URL, content_type="text/html; charset=utf-8")
    ledger = Ledger(settings.raw_dir / "ledger.sqlite")
    why = "not a postmortem: " + "; ".join(gate.postmortem.reasons[:3])
    ledger.put(Entry(SKIPPED_URL, f"sha256:{capture.payload_sha256}", gate.draft_id, capture.id, skipped=why))
    ledger.close()

    # Runners-up on the first English draft: a root cause it did not choose, a symptom it did not tag.
    target = next(d for d in drafts if d.source.language == "en" and d.record.root_cause != "unknown")
    cause = next(t for t in vocabulary("root_causes").terms if t not in (target.record.root_cause, "unknown"))
    symptom = next(t for t in vocabulary("symptoms").terms if t not in target.record.symptoms)
    quote = next(ev for evs in target.evidence.values() for ev in evs)
    alternatives = {
        "root_cause": [Alternative(term=cause, score=0.31, evidence=[quote])],
        "symptoms": [Alternative(term=symptom, score=0.22)],
    }
    queue = QueueStore(settings.queue_dir)
    with_alternatives = queue.save(
        target.model_copy(update={"alternatives": alternatives}), expected_version=target.version
    )
    return Triage(drafts, doubtful, with_alternatives, cause, SKIPPED_URL)
