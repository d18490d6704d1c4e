"""Decisions taken by several processes at once (the per-draft lock and the records lock are file locks)."""

from __future__ import annotations

import json
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from flows.settings import Settings
from flows.store.queue import QueueStore
from tests.flows.factories import make_draft


def _approve(data_dir: str, draft_id: str, reviewer: str, start_at: float) -> str:
    from flows.review import Reviews
    from schema.errors import ReviewError

    reviews = Reviews(Settings(data_dir=Path(data_dir)))
    time.sleep(max(0.0, start_at - time.time()))
    try:
        return reviews.approve(draft_id, reviewer=reviewer, expected_version=1).id
    except ReviewError as exc:
        return f"refused: {type(exc).__name__}"


def test_processes_on_one_draft_and_on_different_drafts(data_dir: Path) -> None:
    queue = QueueStore(Settings(data_dir=data_dir).queue_dir)
    drafts = [make_draft(n) for n in range(1, 5)]
    for draft in drafts:
        queue.add(draft)
    one = drafts[0].draft_id
    jobs = [(one, f"r{i}") for i in range(4)] + [(d.draft_id, f"s{i}") for i, d in enumerate(drafts[1:])]
    with ProcessPoolExecutor(len(jobs), mp_context=multiprocessing.get_context("spawn")) as pool:
        start_at = time.time() + 3.0  # every worker imported and waiting, then all at once
        results = list(
            pool.map(_approve, *zip(*[(str(data_dir), d, r, start_at) for d, r in jobs], strict=True))
        )
    same, different = results[:4], results[4:]
    assert sorted(same)[1:] == ["refused: Conflict"] * 3 and sorted(same)[0].startswith("IL-")
    assert len(set(different)) == 3 and all(r.startswith("IL-") for r in different)
    records = sorted(p.name for p in (data_dir / "records").glob("IL-*.json"))
    assert records == [f"IL-{n:04d}.json" for n in range(1, 5)]
    audit = [json.loads(line) for line in (data_dir / "records" / "audit.jsonl").read_text().splitlines()]
    assert sorted(e["record_id"] for e in audit) == [f"IL-{n:04d}" for n in range(1, 5)]
