"""The ingest engine's values: what a curator asks for (IngestRequest), one source (Job), and
what became of it (Outcome), with the one helper that turns an error into an Outcome."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from flows.failures import data_dir_error
from flows.pages import is_warc
from schema.errors import IngestError, SkipSource

log = logging.getLogger(__name__)

T = TypeVar("T")
Status = Literal["drafted", "duplicate", "unchanged", "changed", "skipped", "failed", "gone"]
JobKind = Literal["url", "page", "warc"]


class IngestRequest(BaseModel):
    """What a curator asked for: direct sources and places to discover more."""

    sources: list[str] = Field(default_factory=list)
    url: str | None = None
    from_file: str | None = None
    feeds: list[str] = Field(default_factory=list)
    sitemaps: list[str] = Field(default_factory=list)
    sources_file: str | None = None
    groups: list[str] = Field(default_factory=list)  # only these groups of sources_file
    gate: bool = True
    workers: int | None = None


class Job(BaseModel):
    """One source to ingest, with the curator's per-source options."""

    model_config = ConfigDict(frozen=True)

    source: str
    kind: JobKind
    url: str | None = None  # the web address of a saved page
    group: str | None = None
    language: str | None = None
    org: str | None = None
    title: str | None = None  # from the feed or index page that listed it


class Outcome(BaseModel):
    """What happened to one source: exactly one status, and why when it is not `drafted`."""

    source: str
    status: Status
    reason: str | None = None
    draft_id: str | None = None
    snapshot: str | None = None
    url: str | None = None
    previous: str | None = None  # for `changed`: the earlier draft or record
    model: str | None = Field(default=None, exclude_if=lambda v: v is None)  # model tokens, time, notes

    def line(self) -> str:
        if self.status in ("skipped", "failed") or not self.draft_id:
            # no draft to name (e.g. `unchanged` for a page skipped before): say why instead
            why = f": {self.reason}" if self.reason else ""
            return f"{self.status}  {self.source}{why}"
        extra = f"  (was {self.previous})" if self.previous else ""
        if self.reason and self.status in ("drafted", "changed"):  # doubtful: the gate's first reason
            extra += f"  ({self.reason})"
        return f"{self.status}  {self.draft_id}  {self.source}{extra}"


def is_url(source: str) -> bool:
    return source.lower().startswith(("http://", "https://"))


# A URL scheme (two letters at least, so that C:\\ stays a path) at the start of a source.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):")
ONLY = "only http and https URLs, saved pages and WARC files are ingested"


def unsupported(source: str) -> str | None:
    """Why `source` cannot be ingested when it is a URL of another scheme (javascript:, file:,
    ftp:, data:...); None for http(s) URLs and paths. A file of that name wins: it is a path."""
    match = _SCHEME.match(source)
    if is_url(source) or not match or Path(source).exists():
        return None
    return f"{source}: {match.group(1).lower()}: URLs are not supported; {ONLY}"


def job_for(source: str, *, url: str | None = None) -> Job:
    if is_url(source):
        return Job(source=source, kind="url")
    if is_warc(Path(source)):
        return Job(source=source, kind="warc")
    return Job(source=source, kind="page", url=url)


def failure(source: str, exc: BaseException) -> Outcome:
    """A failed or skipped outcome whose reason a person can act on."""
    if isinstance(exc, SkipSource):
        return Outcome(source=source, status="skipped", reason=str(exc))
    if isinstance(exc, IngestError):
        return Outcome(source=source, status="failed", reason=str(exc))
    broken = data_dir_error(exc)
    if broken is not None:  # a data directory that filled up, failed or stayed locked mid-run
        return Outcome(source=source, status="failed", reason=str(broken))
    # A bug must not stop the other sources; the reason names it so it can be reported.
    log.error("unexpected error on %s", source, exc_info=exc)
    return Outcome(source=source, status="failed", reason=f"internal error: {type(exc).__name__}: {exc}")


def or_failure(source: str, step: Callable[[], T]) -> T | Outcome:
    """`step()`, or the source's failed (or skipped) Outcome when it raises: the one place where
    an error in one source's stages becomes its outcome, so that it never stops the others."""
    try:
        return step()
    except Exception as exc:  # noqa: BLE001 - every error ends as this source's outcome (failure names bugs)
        return failure(source, exc)
