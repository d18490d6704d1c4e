"""Discovery: feeds, sitemaps and index pages -> candidate post URLs, remembering what was seen."""

from __future__ import annotations

import gzip
import re
import sqlite3
import zlib
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

from flows.sources import SourceGroup
from schema.errors import FetchError

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


class SeenStore:
    """raw/discovery.sqlite: the entries discovery has already handed on, per source."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        with closing(self._connect()) as db, db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS seen (url TEXT PRIMARY KEY, source TEXT, title TEXT,"
                " first_seen TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')))"
            )

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def seen(self, url: str) -> bool:
        with closing(self._connect()) as db:
            return db.execute("SELECT 1 FROM seen WHERE url = ?", (url,)).fetchone() is not None

    def mark(self, url: str, source: str, title: str | None) -> None:
        with closing(self._connect()) as db, db:
            db.execute(
                "INSERT OR IGNORE INTO seen (url, source, title) VALUES (?, ?, ?)", (url, source, title)
            )
