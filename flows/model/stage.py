"""The ingest's model stage: a queued-to-be draft refined in the ingest process, where I/O lives.

Why here and not in the extraction workers: the model call is network I/O that waits seconds on
another machine's GPU; a worker process (or a Dask worker elsewhere) would sit idle holding a CPU
slot, and would need the endpoint's key and the answer cache. The ingest process already does the
fetching and the queueing; it re-extracts the page (a few ms, deterministic, the same Document the
worker drafted from) rather than ship the Document back from every worker for a rare feature."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from flows.model.refine import refine_with_model
from flows.settings import Settings

if TYPE_CHECKING:
    from flows.drafting import Drafted, DraftTask

log = logging.getLogger(__name__)


def refine_drafted(task: DraftTask, drafted: Drafted, settings: Settings) -> tuple[Drafted, str]:
    """The worker's draft refined by the model, and the line for the run report. Whatever goes
    wrong here, the rule-based draft is queued and the run goes on."""
    from extractors import extract_document
    from flows.drafting import Drafted

    try:
        doc = extract_document(task.data, url=task.url, content_type=task.content_type)
        if task.job.language and not doc.language:
            doc = doc.model_copy(update={"language": task.job.language})  # as draft_payload does
        draft, report = refine_with_model(drafted.draft(), doc, settings)
    except Exception as exc:  # a bug in the optional stage must not cost the source
        log.error("model stage failed on %s", task.job.source, exc_info=exc)
        return drafted, f"model: internal error ({type(exc).__name__}); the rule-based draft stands"
    if report.notes:
        log.warning("%s: %s", task.job.source, report.line())
    return Drafted.of(draft), report.line()
