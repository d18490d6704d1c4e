"""The Prefect flows: thin wrappers that name, batch and report the stages of flows/scheduler.py.

Why batches: Prefect records every task run from events, and on 2 cores 1,000 one-source tasks
keep its server busy for about 50 s after the flow returns (see bench/prefect_overhead.py). One
task per batch of BATCH_SIZE sources keeps that overhead to a few tasks per run, while Prefect
still shows discovery and each batch as its own task with its own state. Batches are 500 rather
than 200: memory does not grow with them, as the Scheduler bounds the pages it holds.

Why the flow holds one sync client: a sync task run looks for a SyncClientContext and, finding
none, builds its own API client, and with it a TLS context from the CA bundle: about 60 ms of CPU
per task (even for an http:// API). Opening one context for the whole flow makes every task
reuse its client: a task then costs about 15 ms. `run_ingest` opens it before the flow starts,
so the engine's own lookup of the default result storage shares it too (one client a run, not two).

Why an async flow: a sync flow run costs Prefect about 1.3 s on this 2-core machine, an async one
about 0.6 s (measured with two tasks and an artifact), and on a re-run over unchanged sources
that fixed cost is most of the run. The tasks stay sync: each blocks the flow's event loop while
it runs, and nothing else is waiting on that loop. `run_ingest` is the sync entry point.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from prefect import flow, task
from prefect.artifacts import acreate_table_artifact
from prefect.cache_policies import NONE
from prefect.context import SyncClientContext
from prefect.utilities.annotations import quote

from flows.clock import utc_now
from flows.discover import discover, remember
from flows.fetch import Fetcher
from flows.jobs import IngestRequest, Job, Outcome, job_for
from flows.pool import dask_pool, make_pool, start_server
from flows.scheduler import POOL_THRESHOLD, fetch_order, ingest_each
from flows.settings import Settings
from schema.errors import InputError

BATCH_SIZE = 500
log = logging.getLogger(__name__)


class Reporter(Protocol):
    """What the CLI's progress bar listens with: how many sources, then each outcome as it ends."""

    def total(self, count: int) -> None: ...

    def outcome(self, outcome: Outcome) -> None: ...


# Process-local, never part of a flow's parameters (a deployment run simply has none).
reporter: ContextVar[Reporter | None] = ContextVar("reporter", default=None)


def _emit(outcome: Outcome) -> None:
    listener = reporter.get()
    if listener:
        listener.outcome(outcome)


def _on_outcome() -> Callable[[Outcome], None] | None:
    listener = reporter.get()
    return listener.outcome if listener else None


@task(name="discover", cache_policy=NONE)
def discover_task(
    request: IngestRequest, settings: Settings, fetcher: Fetcher
) -> tuple[list[Job], list[Outcome]]:
    direct = [job_for(s, url=request.url) for s in request.sources]
    jobs, outcomes = discover(request, settings, fetcher)
    listener = reporter.get()
    if listener:
        listener.total(len(direct) + len(jobs) + len(outcomes))
    for outcome in outcomes:
        _emit(outcome)
    return direct + jobs, outcomes


@task(name="ingest-batch", cache_policy=NONE)
def ingest_batch(
    jobs: list[Job], settings: Settings, pool: cf.Executor | None, gate: bool, fetcher: Fetcher
) -> list[list[Outcome]]:
    return ingest_each(
        jobs, settings=settings, pool=pool, on_outcome=_on_outcome(), gate=gate, fetcher=fetcher
    )


if TYPE_CHECKING:
    from typing import Self

    # What quote[list[Outcome]] is. mypy 2.4 cannot read Prefect's quote (its TypeVar is
    # typing_extensions' infer_variance one): a subclass with methods fails with "Name T is
    # not defined" and no line to put an ignore on.
    class _Quoted(tuple[list[Outcome]]):
        def __new__(cls, value: list[Outcome]) -> Self: ...
        def unquote(self) -> list[Outcome]: ...
else:
    _Quoted = quote


class Outcomes(_Quoted):
    """The flow's outcomes, quoted (see ingest_flow), with a short repr: asyncio.run repr()s its
    main task, result included, while restoring the SIGINT handler (twice, 10 ms for 2,000)."""

    def __repr__(self) -> str:
        return f"Outcomes(<{len(self.unquote())} outcomes>)"

    def __getnewargs__(self) -> tuple[list[Outcome]]:
        # tuple's own would hand __new__ the 1-tuple, and a persisted result would come back
        # wrapped once more (Prefect's quote has that flaw)
        return (self.unquote(),)


@flow(name="ingest", validate_parameters=False)
async def ingest_flow(
    request: IngestRequest | dict,
    settings: Settings | None = None,
    data_dir: str | None = None,
    announce: str = "",
) -> Outcomes:
    """Discover, fetch, archive, extract, draft and queue; one outcome per source, never stopping.

    Returns the outcomes quoted (`.unquote()` them; run_ingest does): Prefect walks a flow's
    return value looking for futures, about 0.25 ms a source.

    In-process callers pass Settings; a deployment passes plain JSON (the request and a data
    directory) and the settings are built here from the environment, so no secret is stored
    with the flow run's parameters. `announce` ("line" or "json", set by `incidents schedule`):
    print one line about the run when it ends, with its counts (a served run's output is the
    schedule command's).
    """
    started = time.monotonic()
    request = IngestRequest.model_validate(request)
    if settings is None:
        settings = Settings() if data_dir is None else Settings(data_dir=Path(data_dir))
    workers = warm_workers(request, settings)  # the fork server warms while discovery and fetching run
    # One fetcher for the whole run: its per-host pacing, robots.txt rules and connections
    # carry over from discovery to the batches and from batch to batch.
    with SyncClientContext.get_or_create(), Fetcher(settings) as fetcher:
        jobs, outcomes = discover_task(request, settings, fetcher)
        pool = extraction_pool(settings, workers, len(jobs))
        # Batches are cut from the fetch order (hosts in turn), so that a batch of one blog's
        # entries does not fetch one page at a time; the report keeps the sources' own order.
        order = fetch_order(jobs)
        each: list[list[Outcome]] = [[] for _ in jobs]
        try:
            for start in range(0, len(order), BATCH_SIZE):
                picked = order[start : start + BATCH_SIZE]
                # quote(): Prefect would otherwise walk every Job of the batch looking for futures
                # (about 0.15 s for 200); the task still receives the plain list.
                batch = quote([jobs[i] for i in picked])
                # the engine unquotes it before the task runs
                outcomes_of = ingest_batch(batch, settings, pool, request.gate, fetcher)  # type: ignore[call-overload]
                for i, done in zip(picked, outcomes_of, strict=True):
                    each[i] = done
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
    outcomes += [outcome for done in each for outcome in done]
    remember(outcomes, settings)
    await publish_report(outcomes)
    if announce:
        print(run_line(request, outcomes, time.monotonic() - started, as_json=announce == "json"), flush=True)
    return Outcomes(outcomes)


def run_line(
    request: IngestRequest, outcomes: list[Outcome], seconds: float, *, as_json: bool = False
) -> str:
    """One line about a finished scheduled run: when, which deployment, how many sources and how
    many of each outcome (as JSON with `as_json`)."""
    counts = dict(sorted(Counter(o.status for o in outcomes).items()))
    name = "ingest-" + "+".join(request.groups) if request.groups else "ingest"
    if as_json:
        return json.dumps(
            {
                "finished": utc_now(),
                "deployment": name,
                "sources": len(outcomes),
                "counts": counts,
                "seconds": round(seconds, 1),
            }
        )
    shown = ", ".join(f"{n} {status}" for status, n in counts.items()) or "nothing new"
    return f"{utc_now()}  {name}  {len(outcomes)} source(s): {shown} ({seconds:.1f} s)"


def run_ingest(request: IngestRequest, settings: Settings) -> list[Outcome]:
    """Run the ingest flow from sync code (the CLI, benchmarks) and return its outcomes."""
    # Opened before the flow starts, the context also serves the engine's own sync lookup (the
    # default result storage), which would otherwise build a second client and TLS context.
    with SyncClientContext.get_or_create():
        return asyncio.run(ingest_flow(request, settings)).unquote()


def extraction_pool(settings: Settings, workers: int, jobs: int) -> cf.Executor | None:
    """Where the CPU stage runs: a Dask cluster when one is configured and answers, else local
    worker processes; None (this process) for a run too small to be worth starting them."""
    if jobs < POOL_THRESHOLD:
        return None
    if settings.dask_scheduler:
        try:
            return dask_pool(
                settings.dask_scheduler,
                timeout=settings.connect_timeout,
                draft_timeout=settings.draft_timeout,
            )
        except InputError as exc:
            # A scheduled run still gets its sources drafted; the warning says what to fix.
            log.warning("%s; drafting on this machine instead", exc)
    return make_pool(workers) if workers > 1 else None


def warm_workers(request: IngestRequest, settings: Settings) -> int:
    """Start warming the extraction workers when the request may need them; how many it gets.

    Callers that start Prefect (the CLI) call this first, so the warm-up hides behind
    Prefect's own start; calling it again is free. With a Dask cluster the local workers are
    only its fallback, and warming them would cost about 1.5 s of CPU for nothing.
    """
    workers = request.workers or os.cpu_count() or 1
    discovers = request.from_file or request.feeds or request.sitemaps or request.sources_file
    if workers > 1 and not settings.dask_scheduler and (discovers or len(request.sources) >= POOL_THRESHOLD):
        start_server()
    return workers


async def publish_report(outcomes: list[Outcome]) -> None:
    """A table artifact with every source's outcome, and a count per status in its description."""
    counts = Counter(o.status for o in outcomes)
    await acreate_table_artifact(
        key="ingest-report",
        table=[
            {
                "source": o.source,
                "status": o.status,
                "reason": o.reason or "",
                "draft": o.draft_id or "",
                "snapshot": o.snapshot or "",
                **({"model": o.model or ""} if any(x.model for x in outcomes) else {}),
            }
            for o in outcomes
        ],
        description="Ingest run: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())),
    )
