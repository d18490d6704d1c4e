"""The CPU stage: extract and draft one payload (what the extraction workers import and run).

Nothing here does I/O or imports Prefect: a worker process (or a Dask worker) imports this module,
the extractors and the schema, and no more.
"""

from __future__ import annotations

from dataclasses import dataclass

from flows.deadline import run_limited
from flows.jobs import Job
from flows.store.queue import draft_text
from schema.draft import Confidence, Draft


@dataclass(frozen=True)
class DraftTask:
    """Everything the CPU stage needs; picklable, so it can cross into a worker process."""

    job: Job
    data: bytes
    url: str
    canonical_url: str
    content_type: str | None
    snapshot: str | None
    digest: str
    now: str
    weights: str | None = None  # learned weights (<data dir>/weights.json); None: the shipped ones


@dataclass(frozen=True)
class Drafted:
    """A draft as a worker hands it back: the text of its queue file, written in the worker, and
    what the last stage decides on. Pickling a Draft back and dumping it here cost this process
    about 0.3 ms a page; a string crosses for almost nothing."""

    draft_id: str
    verdict: bool
    reasons: tuple[str, ...]
    text: str
    skip: bool = False  # the gate's confident negative: not queued (verdict false, skip false: doubtful)

    @classmethod
    def of(cls, draft: Draft) -> Drafted:
        gate = draft.postmortem
        return cls(draft.draft_id, gate.verdict, tuple(gate.reasons), draft_text(draft), gate.skip)

    def draft(self) -> Draft:
        return Draft.model_validate_json(self.text)


def draft_for_queue(task: DraftTask, limit: float = 0.0) -> Drafted:
    """draft_payload, ready for the queue (what a worker process runs), in at most `limit`
    seconds where a limit can be kept (flows/deadline.py)."""
    return run_limited(lambda: Drafted.of(draft_payload(task)), limit, "extracting and drafting this page")


def draft_payload(task: DraftTask) -> Draft:
    """Extract and draft one payload: the pure CPU stage (runs in a worker process)."""
    from extractors import draft_page
    from flows.learn import learned

    # The curator's language hint from sources.toml counts only where the page itself did not tell.
    draft = draft_page(
        task.data,
        url=task.url,
        content_type=task.content_type,
        now=task.now,
        snapshot=task.snapshot,
        digest=task.digest,
        language=task.job.language,
        weights=learned(task.weights),
    ).draft
    if task.job.org:
        draft = _override_org(draft, task.job.org)
    return draft


def _override_org(draft: Draft, org: str) -> Draft:
    from extractors.draft.identity import slugify

    slug = slugify(org) or None
    record = draft.record.model_copy(update={"org": org, "org_slug": slug})
    # The curator's word, from sources.toml: no quote to show, so say where it came from, and
    # drop the drafter's quotes for the name it had found instead.
    confidence = {k: v for k, v in draft.confidence.items() if k not in ("org", "org_slug")}
    confidence["org"] = Confidence(value=1.0, method="curator")
    evidence = {k: v for k, v in draft.evidence.items() if k not in ("org", "org_slug")}
    return draft.model_copy(update={"record": record, "confidence": confidence, "evidence": evidence})
