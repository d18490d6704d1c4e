"""The Prefect flows: thin wrappers that add names, retries and reporting to flows/ingest.py."""

from __future__ import annotations

from prefect import flow, task

from flows.ingest import Outcome, ingest_sources
from flows.settings import Settings


@task(name="ingest-sources")
def ingest_task(sources: list[str], settings: Settings, url: str | None = None) -> list[Outcome]:
    return ingest_sources(sources, settings=settings, url=url)


@flow(name="ingest", validate_parameters=False)
def ingest_flow(sources: list[str], settings: Settings, url: str | None = None) -> list[Outcome]:
    """Ingest saved pages, URLs and WARC files; one outcome per source, a bad one never stops the run."""
    return ingest_task(sources, settings, url)
