"""Discovery: feeds, sitemaps and index pages -> candidate post URLs, remembering what was seen."""

from __future__ import annotations

import gzip
import re
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from flows.gate import gate
from flows.jobs import IngestRequest, Job, Outcome, failure, is_url, job_for
from flows.settings import Settings
from flows.sources import SourceGroup, load_sources
from flows.store import faults
from flows.store.database import Store
from flows.store.ledger import Ledger
from schema.errors import FetchError, IngestError, InputError

if TYPE_CHECKING:
    from flows.fetch import Fetcher

# A sitemap may be gzipped; inflate at most this much (a sitemap holds at most 50 MB by the spec).
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
MAX_SITEMAP_DEPTH = 3
_LOC = re.compile(rb"<loc>\s*(.*?)\s*</loc>", re.S | re.I)
_HREF = re.compile(r"""<a\s[^>]*?href\s*=\s*["']([^"'#]+)["'][^>]*>(.*?)</a>""", re.S | re.I)
_TAGS = re.compile(r"<[^>]+>")

FetchBytes = Callable[[str], tuple[bytes, str | None]]
"""Fetch a URL politely and return (body, content type); raises FetchError / SkipSource."""


@dataclass(frozen=True)
class Candidate:
    url: str
    title: str | None
    source: str  # the SourceGroup name


def parse_feed(data: bytes, base_url: str) -> list[tuple[str, str | None]]:
    """(link, title) of each RSS or Atom entry, in feed order."""
    import feedparser

    parsed = feedparser.parse(data)
    if parsed.bozo and not parsed.entries:
        raise FetchError(f"{base_url} is not an RSS or Atom feed: {parsed.get('bozo_exception')}")
    out = []
    for entry in parsed.entries:
        link = entry.get("link")
        if link:
            out.append((urljoin(base_url, link), entry.get("title")))
    return out


def _inflate(data: bytes, url: str) -> bytes:
    if not data.startswith(b"\x1f\x8b"):
        return data
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = inflater.decompress(data, MAX_SITEMAP_BYTES + 1)
    if len(out) > MAX_SITEMAP_BYTES:
        raise FetchError(f"{url} inflates past {MAX_SITEMAP_BYTES} bytes: not a sitemap")
    return out


def parse_sitemap(data: bytes, url: str) -> tuple[list[str], list[str]]:
    """(page URLs, child sitemap URLs) of a sitemap or sitemap index, .xml or .xml.gz."""
    try:
        text = _inflate(data, url)
    except (zlib.error, gzip.BadGzipFile) as exc:
        raise FetchError(f"{url} is not a readable gzipped sitemap: {exc}") from exc
    locs = [m.decode("utf-8", "replace").strip() for m in _LOC.findall(text)]
    locs = [loc.replace("&amp;", "&") for loc in locs]
    if b"<sitemapindex" in text[:2048].lower():
        return [], locs
    if b"<urlset" not in text[:4096].lower() and not locs:
        raise FetchError(f"{url} is not a sitemap (no <urlset> or <sitemapindex>)")
    return locs, []


def parse_index(html: str, base_url: str, link_pattern: str) -> list[tuple[str, str | None]]:
    """Links of a blog index page whose URL matches `link_pattern`, de-duplicated, in page order."""
    pattern = re.compile(link_pattern)
    seen: set[str] = set()
    out = []
    for href, inner in _HREF.findall(html):
        url = urljoin(base_url, href.strip())
        if pattern.search(url) and url not in seen:
            seen.add(url)
            title = _TAGS.sub("", inner).strip() or None
            out.append((url, title))
    return out


def entries(group: SourceGroup, fetch: FetchBytes) -> Iterator[tuple[str, str | None]]:
    """Every (url, title) the group lists, before filtering."""
    if group.kind == "urls":
        yield from ((u, None) for u in group.urls)
    elif group.kind == "feed":
        data, _ = fetch(group.feed)  # type: ignore[arg-type]
        yield from parse_feed(data, group.feed)  # type: ignore[arg-type]
    elif group.kind == "index":
        data, _ = fetch(group.index)  # type: ignore[arg-type]
        yield from parse_index(data.decode("utf-8", "replace"), group.index, group.link_pattern or ".")  # type: ignore[arg-type]
    else:
        pending = [(group.sitemap, 0)]
        visited: set[str] = set()
        while pending:
            url, depth = pending.pop(0)
            if url in visited or depth > MAX_SITEMAP_DEPTH:
                continue
            visited.add(url)  # type: ignore[arg-type]
            data, _ = fetch(url)  # type: ignore[arg-type]
            pages, children = parse_sitemap(data, url)  # type: ignore[arg-type]
            yield from ((p, None) for p in pages)
            pending += [(c, depth + 1) for c in children]


_MARK = "INSERT INTO seen (url, source, title) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"


class SeenStore(Store):
    """raw/discovery.sqlite (or INCIDENTS_DATABASE_URL's tables): the entries discovery has
    already handed on, per source; its schema: flows/store/migrations/discovery/."""

    component = "discovery"

    def seen(self, url: str) -> bool:
        return self.one("SELECT 1 FROM seen WHERE url = ?", (url,)) is not None

    def mark(self, url: str, source: str, title: str | None) -> None:
        self.execute(
            "INSERT INTO seen (url, source, title) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            (url, source, title),
        )

    # When each entry was last fetched (a re-check of a seen entry, on the source's `recheck`).
    def due(self, url: str, after: int, now: float) -> bool:
        """Is a seen entry due for a re-check `after` seconds after it was last fetched?"""
        row = self.one("SELECT at FROM checked WHERE url = ?", (url,))
        if row is not None:
            return bool(now - float(row[0]) >= after)
        first = self.one("SELECT first_seen FROM seen WHERE url = ?", (url,))
        if first is None or not first[0]:
            return True
        from datetime import datetime

        return bool(now - datetime.fromisoformat(str(first[0]).replace("Z", "+00:00")).timestamp() >= after)

    def checked(self, url: str, now: float) -> None:
        self.execute(
            "INSERT INTO checked (url, at) VALUES (?, ?) ON CONFLICT(url) DO UPDATE SET at=excluded.at",
            (url, now),
        )


LISTING_TYPES = frozenset(
    {
        "application/rss+xml",
        "application/atom+xml",
        "application/xml",
        "text/xml",
        "application/rdf+xml",
        "application/feed+json",
        "application/gzip",
        "application/x-gzip",
        "text/html",
        "application/xhtml+xml",
        "text/plain",
    }
)


def read_source_list(path: Path) -> list[str]:
    """--from-file: one URL or path per line; blank lines and # comments ignored."""
    if not path.is_file():
        raise InputError(f"{path}: no such file (give a text file with one URL or path per line)")
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def groups_of(request: IngestRequest) -> list[SourceGroup]:
    groups = [SourceGroup(name=f"feed-{i + 1}", feed=url) for i, url in enumerate(request.feeds)]
    groups += [SourceGroup(name=f"sitemap-{i + 1}", sitemap=url) for i, url in enumerate(request.sitemaps)]
    if request.sources_file:
        listed = load_sources(Path(request.sources_file)).source
        if request.groups:
            unknown = set(request.groups) - {g.group for g in listed} - {g.name for g in listed}
            if unknown:
                raise InputError(
                    f"{request.sources_file} has no source or group named {', '.join(sorted(unknown))}"
                )
            listed = [g for g in listed if g.group in request.groups or g.name in request.groups]
        groups += listed
    return groups


def discover(request: IngestRequest, settings: Settings, fetcher: Fetcher) -> tuple[list[Job], list[Outcome]]:
    """Jobs for every new entry of every listing; outcomes for what was left out, and why.
    `fetcher`: the run's (see ingest_flow), so its pacing per host carries on to the pages."""
    jobs: list[Job] = []
    outcomes: list[Outcome] = []
    if request.from_file:
        try:
            jobs += [job_for(s) for s in read_source_list(Path(request.from_file))]
        except IngestError as exc:
            outcomes.append(failure(request.from_file, exc))
    try:
        groups = groups_of(request)
    except IngestError as exc:
        return jobs, [*outcomes, failure(request.sources_file or "sources", exc)]
    if not groups:
        return jobs, outcomes

    seen = SeenStore(settings.raw_dir / "discovery.sqlite", settings.database)
    ledger = Ledger(settings.raw_dir / "ledger.sqlite", settings.database)
    try:
        return _discover_groups(groups, request, settings, jobs, outcomes, seen, ledger, fetcher)
    finally:
        seen.close()
        ledger.close()


def _discover_groups(
    groups: list[SourceGroup],
    request: IngestRequest,
    settings: Settings,
    jobs: list[Job],
    outcomes: list[Outcome],
    seen: SeenStore,
    ledger: Ledger,
    fetcher: Fetcher,
) -> tuple[list[Job], list[Outcome]]:
    from flows.archive import Archive
    from flows.fetch import canonicalize_url

    queued: set[str] = set()
    with Archive(settings) as archive:

        def fetch(url: str) -> tuple[bytes, str | None]:
            # Conditional on every run (ETag, Last-Modified of the newest capture): a 304 adds a
            # server-not-modified revisit, not a new payload, and the listing is read from the
            # capture it confirms.
            previous = archive.latest(url)
            result = fetcher.fetch(url, accept=LISTING_TYPES, conditional=previous)
            try:
                capture = archive.record_fetch(result)
            finally:
                result.discard()
            content_type = result.content_type
            if result.outcome == "unchanged" and previous is not None:
                content_type = previous.content_type
            return archive.read_payload(capture.id), content_type

        for group in groups:
            label = group.feed or group.sitemap or group.index or group.name
            try:
                listed = list(entries(group, fetch))
            except IngestError as exc:
                outcomes.append(failure(label, exc))
                continue
            taken = 0
            for url, title in listed:
                canonical = canonicalize_url(url)
                if canonical in queued:
                    continue
                queued.add(canonical)
                after = group.recheck_after
                recheck = after is not None and group.kind != "urls" and seen.seen(canonical)
                if recheck and not seen.due(canonical, after, time.time()):  # type: ignore[arg-type]
                    recheck = False
                    outcomes.append(
                        Outcome(
                            source=url,
                            status="unchanged",
                            reason=f"checked within {group.recheck} (recheck of {group.name})",
                            url=canonical,
                        )
                    )
                    continue
                if group.kind != "urls" and seen.seen(canonical) and not recheck:
                    entry = ledger.get(canonical)
                    then = f", skipped then: {entry.skipped}" if entry and entry.skipped else ""
                    outcomes.append(
                        Outcome(
                            source=url,
                            status="unchanged",
                            reason=f"seen before in {group.name}{then}",
                            draft_id=entry.draft_id if entry and not entry.skipped else None,
                            url=canonical,
                        )
                    )
                    continue
                if not group.wants(url):
                    outcomes.append(
                        Outcome(
                            source=url, status="skipped", reason=f"excluded by the patterns of {group.name}"
                        )
                    )
                    continue
                keep, why = gate(url, title) if request.gate else (True, "gate off")
                if keep is False:
                    outcomes.append(Outcome(source=url, status="skipped", reason=why, url=canonical))
                    continue
                if taken >= group.max_entries:
                    outcomes.append(
                        Outcome(
                            source=url,
                            status="skipped",
                            reason=f"over max_entries={group.max_entries} of {group.name}",
                        )
                    )
                    continue
                taken += 1
                jobs.append(
                    Job(
                        source=url,
                        kind="url",
                        group=group.name,
                        language=group.language,
                        org=group.org,
                        title=title,
                    )
                )
    return jobs, outcomes


def remember(outcomes: list[Outcome], settings: Settings) -> None:
    """Mark as seen every URL that reached a final state; failures stay unseen, to be tried again."""
    from flows.fetch import canonicalize_url

    final = {"drafted", "duplicate", "unchanged", "changed", "skipped", "gone"}
    now = time.time()
    store = SeenStore(settings.raw_dir / "discovery.sqlite", settings.database)
    try:
        for outcome in outcomes:
            if outcome.status in final and is_url(outcome.source):
                store.mark(canonicalize_url(outcome.source), "", None)
                if outcome.reason is None or not outcome.reason.startswith(("seen before", "checked within")):
                    store.checked(canonicalize_url(outcome.source), now)
    finally:
        store.close()
    faults.after("discovery")  # the run's entries are marked seen; its report is not out yet
