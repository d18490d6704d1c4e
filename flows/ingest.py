"""The ingest engine's public names, in one place. Each lives in the module of its concern:

- flows/jobs.py       the values: IngestRequest, Job, Outcome, and `failure`, the one error helper
- flows/drafting.py   the CPU stage that extraction workers import: extract and draft one payload
- flows/stages.py     the I/O stages (Ingestor): read or fetch, archive; queue the draft
- flows/scheduler.py  one batch through the stages: fetch threads, a process pool, the bounds
- flows/pipeline.py   the Prefect flow around them (batches, the report)
"""

from __future__ import annotations

from flows.drafting import Drafted, DraftTask, draft_for_queue, draft_payload
from flows.jobs import IngestRequest, Job, JobKind, Outcome, Status, failure, is_url, job_for, or_failure
from flows.scheduler import (
    DRAFTS_AHEAD,
    POOL_THRESHOLD,
    Scheduler,
    fetch_order,
    ingest_each,
    ingest_jobs,
    lanes,
)
from flows.stages import Ingestor, KnownUrls

__all__ = [
    "DRAFTS_AHEAD",
    "POOL_THRESHOLD",
    "DraftTask",
    "Drafted",
    "IngestRequest",
    "Ingestor",
    "Job",
    "JobKind",
    "KnownUrls",
    "Outcome",
    "Scheduler",
    "Status",
    "draft_for_queue",
    "draft_payload",
    "failure",
    "fetch_order",
    "ingest_each",
    "ingest_jobs",
    "is_url",
    "job_for",
    "lanes",
    "or_failure",
]
