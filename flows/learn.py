"""Learning from reviewers: refit the drafter's candidate weights on the data directory's decisions.

Every approved draft is a labelled page: its archived snapshot (raw/) is extracted again, the
drafter's candidates drawn (with the rules' own weights, as bench/train.py draws them), and the
approved record, with the reviewer's edits, says which root cause and vocabulary terms apply. A
rejected draft says the page is no postmortem: it is counted, and teaches the vocabulary models
nothing (they learn which terms a postmortem takes). The shipped training set (extractors/draft/
data/training_set.json: the candidates and gold of the labelled pages bench/train.py fitted on)
comes first, so a few approvals refine the weights rather than replace them.

`learn` writes <data dir>/weights.json; the ingest flow drafts with it when it is there (each
draft's `source.drafter` names the weights' version); without it, the shipped weights.
`evaluate` replays the approvals in the order they were decided: each is drafted with weights
fitted on the shipped set and the approvals decided before it only, and scored against what the
reviewer approved (a learning curve).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from extractors.draft.linear import Weights, dump, hand, load
from extractors.draft.training import VOCAB_FIELDS, Labelled, Step, refit, replay, shipped_set
from flows.settings import Settings
from flows.store.atomic import write_text
from schema.draft import Draft
from schema.errors import InputError

log = logging.getLogger(__name__)
WEIGHTS_NAME = "weights.json"


def weights_path(settings: Settings) -> Path:
    return settings.data_dir / WEIGHTS_NAME


def active_weights_file(settings: Settings) -> str | None:
    """The learned weights' path when the data directory has them (else the shipped ones apply)."""
    path = weights_path(settings)
    return str(path) if path.is_file() else None


def learned(path: str | None) -> Weights | None:
    """The weights at `path` (None: the shipped ones), read once per file version."""
    if path is None:
        return None
    p = Path(path)
    try:
        stat = p.stat()
    except OSError:
        return None
    return _read(path, stat.st_mtime_ns, stat.st_size)


@cache
def _read(path: str, _mtime: int, _size: int) -> Weights:
    return load(Path(path))


@dataclass(frozen=True)
class Decision:
    """One reviewer's decision on a draft, in the order decisions were taken."""

    at: str
    action: str  # "approved" or "rejected"
    draft: Draft
    record_id: str | None


def decisions(settings: Settings) -> list[Decision]:
    """Approvals and rejections in the queue, oldest decision first (ties: the draft id)."""
    from flows.store.queue import QueueStore

    out = []
    for draft in QueueStore(settings.queue_dir).drafts():
        if draft.status not in ("approved", "rejected"):
            continue
        last = next((h for h in reversed(draft.history) if h.action == draft.status), None)
        if last is not None:
            out.append(Decision(last.at, draft.status, draft, last.record_id))
    return sorted(out, key=lambda d: (d.at, d.draft.draft_id))


def _group(draft: Draft) -> str:
    """An approval's organisation (its fold group): the approved org slug, else the host."""
    return draft.record.org_slug or urlsplit(draft.source.url).hostname or "unknown"


def labelled(settings: Settings, decision: Decision) -> Labelled | None:
    """The approval as a labelled page: the snapshot's candidates and the approved record's terms.
    None (with a log line) when its snapshot is not in the archive any more."""
    from extractors import extract_document
    from extractors.draft import DraftOptions, candidates_of
    from flows.archive import Archive
    from flows.store.records import RecordStore
    from schema.errors import IngestError

    draft = decision.draft
    if decision.action != "approved" or not draft.source.snapshot or not decision.record_id:
        return None
    try:
        archive = Archive(settings)
        capture = archive.get(draft.source.snapshot)
        data = archive.read_payload(capture.id)
        record = RecordStore(settings.records_dir).read(decision.record_id)
        doc = extract_document(data, url=draft.source.url, content_type=capture.mime)
    except (IngestError, OSError, ValueError) as exc:
        log.warning("approval %s not learned from: %s", draft.draft_id, exc)
        return None
    cands = candidates_of(doc, source_url=draft.source.url, options=DraftOptions(weights=hand()))
    rc = record.root_cause
    good = frozenset([rc]) if rc and rc != "unknown" else None
    body = record.model_dump(mode="json")
    must = {f: frozenset(body.get(f) or []) for f in VOCAB_FIELDS}
    return Labelled(_group(draft), draft.draft_id, cands, good, must, {})


@dataclass(frozen=True)
class Learned:
    weights: Weights
    approvals: int
    rejections: int
    skipped: int  # approvals whose snapshot or record could not be read


def learn(settings: Settings) -> Learned:
    """Refit on the shipped training set plus every approval; write <data dir>/weights.json.
    Without a readable approval nothing is written: the shipped weights apply."""
    from extractors.draft.linear import shipped

    decided = decisions(settings)
    approvals = [d for d in decided if d.action == "approved"]
    pages = [p for p in (labelled(settings, d) for d in approvals) if p is not None]
    if not pages:
        return Learned(shipped(), 0, len(decided) - len(approvals), len(approvals))
    base = shipped_set()
    note = f"{len(base)} shipped labelled pages and {len(pages)} approvals of {settings.data_dir}"
    weights = refit([*base, *pages], note)
    if not settings.data_dir.is_dir():
        raise InputError(f"{settings.data_dir}: no data directory here; pass --data-dir DIR")
    write_text(weights_path(settings), dump(weights))
    return Learned(weights, len(pages), len(decided) - len(approvals), len(approvals) - len(pages))


def evaluate(settings: Settings, steps: int = 5) -> list[Step]:
    """The learning curve: approvals in decision order, in `steps` groups; each group scored with
    weights fitted on the shipped set and the approvals before it (beside: the shipped weights)."""
    from extractors.draft.linear import shipped

    approvals = [d for d in decisions(settings) if d.action == "approved"]
    pages = [p for p in (labelled(settings, d) for d in approvals) if p is not None]
    return replay(shipped_set(), pages, shipped(), steps)
