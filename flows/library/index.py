"""The library's search index: records/ in SQLite (FTS5 over tokens.py's tokens, bm25), kept current.

The index is a cache: delete it and the next query rebuilds it. A rescan compares the records
folder with what the index holds (a stat per file) and re-reads only the files whose size or mtime
changed; a file whose bytes are unchanged (a `touch`, a git checkout of the same content) is
recognised by its digest and not re-parsed. A query rescans first when the folder itself changed
(a record added, removed or replaced by rename: our own writes, git, most editors), so such a
change is picked up on the next query, in any process; an edit written in place into the
existing file is picked up within RESCAN_AFTER seconds.

Full text: one FTS5 row per record and language (title; the other localized fields; the
organisation; the labels and aliases of its vocabulary terms in every language), holding the
tokens of flows/library/tokens.py (English stems, CJK character pairs: the one tokenizer the static
site's index uses too), ranked by bm25.

Filters and facets are answered in memory from sets of records kept as bitmasks (flows/library/
bits.py), loaded from the index when it changes; SQLite holds the texts, the records and the terms.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import heapq
import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from flows.library import bits
from flows.library.models import (
    FACET_KINDS,
    TOPIC_KINDS,
    Brief,
    FacetCount,
    Incident,
    RelatedIncident,
    SearchResult,
    Topic,
)
from flows.library.terms import (
    brief,
    check_terms,
    labels,
    languages,
    record_terms,
    texts,
    topic_kind,
)
from flows.library.tokens import Word, fts_query, query_words, snippet, term_text, tokens
from flows.related import GENERIC_CAUSES, GENERIC_COMPONENTS, WEIGHTS, rank_related
from flows.settings import Settings
from flows.store.database import in_chunks
from flows.store.records import RECORD_FILE
from schema.record import Record
from schema.vocab import vocabulary

log = logging.getLogger(__name__)

INDEX_NAME = "library.sqlite"
SCHEMA_VERSION = 6
MAX_PAGE_SIZE = 100
# Related incidents shown with a record: the few that say most (issue 37: ten were mostly noise).
MAX_RELATED = 5
# Seconds between full rescans of records/ when the folder itself has not changed: a stat of every
# file costs about 3.5 us, so 35 ms at 10,000 records, too much to pay on every query (bench/search.py).
RESCAN_AFTER = 1.0
# bm25 column weights: a word in the title counts most, then the organisation, then a vocabulary
# term's label, then the body.
RANK = "bm25(5.0, 1.0, 2.0, 1.5)"

# Full detail: with detail=none, bm25 re-tokenizes every matching row (160 ms for a bigram in 2,000
# records, against 3 ms). The columns hold tokens.tokens() joined by spaces, so unicode61 (without
# its diacritics folding) splits them back into exactly those tokens.
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    name TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, digest TEXT NOT NULL,
    problem TEXT
);
CREATE TABLE IF NOT EXISTS records (
    id TEXT PRIMARY KEY, number INTEGER NOT NULL UNIQUE, org TEXT NOT NULL, org_slug TEXT, date TEXT,
    langs TEXT NOT NULL, brief TEXT NOT NULL, body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS terms (record_id TEXT NOT NULL, kind TEXT NOT NULL, term TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS terms_by_record ON terms (record_id);
CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5(
    title, body, org, terms, tokenize = 'unicode61 remove_diacritics 0'
);
INSERT INTO texts (texts, rank) VALUES ('rank', '{RANK}');
"""

Sort = Literal["relevance", "newest", "oldest"]


class Query(BaseModel):
    """A search: words, filters (terms of one kind must all match), a page."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    q: str = ""
    org: str | None = None
    since: str | None = None
    until: str | None = None
    lang: str | None = None
    root_cause: tuple[str, ...] = ()
    component: tuple[str, ...] = ()
    contributing: tuple[str, ...] = ()
    symptom: tuple[str, ...] = ()
    domain: tuple[str, ...] = ()
    severity: tuple[str, ...] = ()
    page: int = Field(default=1, ge=1)
    page_size: int = Field(default=20, ge=1, le=MAX_PAGE_SIZE)
    sort: Sort = "relevance"
    facets: bool = True

    def filters(self) -> dict[str, Any]:
        """The filters that are set, as given (for echoing back)."""
        out: dict[str, Any] = {}
        for name in ("org", "since", "until", "lang", *TOPIC_KINDS):
            value = getattr(self, name)
            if value:
                out[name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class RefreshStats:
    indexed: int  # files (re)parsed: new or changed content
    touched: int  # files whose mtime changed but bytes did not
    removed: int
    problems: int  # files that are not valid records (kept out of the index, named in problems())

    @property
    def changed(self) -> bool:
        return bool(self.indexed or self.touched or self.removed)


# Each record's full-text rows have rowids number * _LANG_SLOTS + i (i: its i-th language), so
# they can be found and deleted by rowid range.
_LANG_SLOTS = 64


def words(q: str) -> list[str]:
    """The words of a query as typed (the first MAX_WORDS distinct ones that hold a letter or digit)."""
    return [word.text for word in query_words(q)]


def _snippet(item: Brief, all_words: list[Word], lang: str | None) -> str | None:
    """Where the words matched: the title, then the summary (the query's language first), then the
    vocabulary label or alias that matched ("certificate: 인증서")."""
    pairs = sorted([*item.title.items(), *item.summary.items()], key=lambda pair: pair[0] != lang)
    found = snippet([text for _, text in pairs], all_words)
    if found is not None:
        return found
    for kind, term in _brief_terms(item):
        lines = term_text(TOPIC_KINDS[kind][0], term).splitlines()
        found = snippet([f"{term}: {line}" for line in lines], all_words)
        if found is not None:
            return found
    return None


def _brief_terms(item: Brief) -> list[tuple[str, str]]:
    pairs = [("root_cause", item.root_cause), ("severity", item.severity)]
    pairs += [("component", t) for t in item.components]
    pairs += [("contributing", t) for t in item.contributing]
    pairs += [("symptom", t) for t in item.symptoms]
    pairs += [("domain", t) for t in item.domain]
    return pairs


@dataclass
class _Catalog:
    """The records as positions (oldest first, undated lowest) and the sets filters and facets use."""

    ids: list[str]
    dates: list[str]  # "" for undated
    langs: list[list[str]]  # each record's text languages, by full-text slot
    by_number: dict[int, int]  # record number -> position
    masks: dict[tuple[str, str], int]  # (kind, term) -> records
    org_slugs: dict[str, str]  # casefolded name or slug -> slug
    org_names: dict[str, str]  # slug -> name
    dated_from: int

    @property
    def size(self) -> int:
        return len(self.ids)

    @property
    def everything(self) -> int:
        return bits.span(0, self.size)

    def date_range(self, since: str | None, until: str | None) -> int:
        dated = self.dates[self.dated_from :]
        start = self.dated_from + (bisect.bisect_left(dated, since) if since else 0)
        stop = self.dated_from + (bisect.bisect_right(dated, until) if until else len(dated))
        return bits.span(start, stop)


class LibraryIndex:
    """The search index of one records folder; safe to share between a process's threads."""

    def __init__(
        self, records_dir: Path, path: Path, *, auto_refresh: bool = True, rescan_after: float = RESCAN_AFTER
    ) -> None:
        self.records_dir = records_dir
        self.path = path
        self.auto_refresh = auto_refresh
        self.rescan_after = rescan_after
        self._folder_mtime: int | None = None
        self._scanned_at = -math.inf
        self._catalog_cache: _Catalog | None = None
        self._data_version: int | None = None
        self._known: dict[str, tuple[int, int]] | None = None  # file name -> (mtime_ns, size)
        self._known_version: int | None = None
        self._rescanning = False
        self._closed = False
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        try:
            self._db = self._connect()
        except sqlite3.DatabaseError as exc:  # not a database, or damaged: it is a cache, so start again
            log.warning("library index %s is unreadable (%s): rebuilding it", path, exc)
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            self._db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            self._db = db
            self._open()
        except BaseException:
            db.close()
            raise
        return db

    @classmethod
    def for_settings(
        cls, settings: Settings, *, auto_refresh: bool = True, rescan_after: float = RESCAN_AFTER
    ) -> LibraryIndex:
        """The index of the data directory's records/, stored beside the other SQLite files in raw/."""
        return cls(
            settings.records_dir,
            settings.raw_dir / INDEX_NAME,
            auto_refresh=auto_refresh,
            rescan_after=rescan_after,
        )

    def _open(self) -> None:
        with self._lock:
            row = None
            with contextlib.suppress(sqlite3.OperationalError):  # a new file: no meta table yet
                row = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is not None and row[0] == str(SCHEMA_VERSION):
                return  # no DDL on an index in use: it would make other connections' statements fail
            self._db.execute("BEGIN IMMEDIATE")
            try:
                # New, or written by another version: it is a cache, so start again.
                for table in ("meta", "files", "records", "terms", "texts", "grams"):  # grams: schema 5
                    self._db.execute(f"DROP TABLE IF EXISTS {table}")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                self._db.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._db.close()

    def __enter__(self) -> LibraryIndex:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ---- keeping current -------------------------------------------------------------------

    def _scan(self) -> dict[str, tuple[int, int]]:
        found: dict[str, tuple[int, int]] = {}
        try:
            entries = os.scandir(self.records_dir)
        except FileNotFoundError:
            return found
        with entries:
            for entry in entries:
                if RECORD_FILE.match(entry.name):
                    try:
                        stat = entry.stat()
                    except FileNotFoundError:
                        continue
                    found[entry.name] = (stat.st_mtime_ns, stat.st_size)
        return found

    def _folder_stamp(self) -> int:
        try:
            return self.records_dir.stat().st_mtime_ns
        except FileNotFoundError:
            return -1

    def refresh(self) -> RefreshStats:
        """Bring the index up to date with records/: re-read changed files, drop deleted ones."""
        # Stamped before the scan: a change during the scan is seen by the next one. The scan (a
        # stat per file) runs outside the lock, so queries go on meanwhile.
        folder_mtime = self._folder_stamp()
        scanned_at = time.monotonic()
        on_disk = self._scan()
        with self._lock:
            if self._closed:
                return RefreshStats(0, 0, 0, 0)
            self._folder_mtime = folder_mtime
            self._scanned_at = scanned_at
            version = self._db.execute("PRAGMA data_version").fetchone()[0]
            if self._known is None or version != self._known_version:
                self._known = {
                    name: (mtime, size)
                    for name, mtime, size in self._db.execute("SELECT name, mtime_ns, size FROM files")
                }
                self._known_version = version
            known = self._known
            changed = [n for n, stat in on_disk.items() if known.get(n) != stat]
            removed = [n for n in known if n not in on_disk]
            if not changed and not removed:
                return RefreshStats(0, 0, 0, 0)
            self._known = None  # reloaded after the update
            indexed = touched = problems = 0
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for name in removed:
                    self._forget(name)
                # By number: a record's id is checked against the others' in _add.
                for name in sorted(changed):
                    path = self.records_dir / name
                    try:
                        data = path.read_bytes()
                        stat = path.stat()
                    except FileNotFoundError:
                        self._forget(name)
                        continue
                    digest = hashlib.sha256(data).hexdigest()
                    row = self._db.execute("SELECT digest FROM files WHERE name = ?", (name,)).fetchone()
                    if row is not None and row[0] == digest:
                        self._db.execute(
                            "UPDATE files SET mtime_ns = ?, size = ? WHERE name = ?",
                            (stat.st_mtime_ns, stat.st_size, name),
                        )
                        touched += 1
                        continue
                    self._forget(name)
                    problem = self._add(name, data)
                    problems += problem is not None
                    indexed += 1
                    self._db.execute(
                        "INSERT INTO files (name, mtime_ns, size, digest, problem) VALUES (?, ?, ?, ?, ?)",
                        (name, stat.st_mtime_ns, stat.st_size, digest, problem),
                    )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            finally:
                self._catalog_cache = None
            if problems:
                log.warning("%d record file(s) in %s are not valid records", problems, self.records_dir)
            return RefreshStats(indexed, touched, len(removed), problems)

    def rebuild(self) -> RefreshStats:
        """Forget everything and index records/ again."""
        with self._lock:
            for table in ("files", "records", "terms", "texts"):
                self._db.execute(f"DELETE FROM {table}")
            self._catalog_cache = None
            return self.refresh()

    def _forget(self, name: str) -> None:
        record_id = name.removesuffix(".json")
        self._db.execute("DELETE FROM files WHERE name = ?", (name,))
        row = self._db.execute("SELECT number FROM records WHERE id = ?", (record_id,)).fetchone()
        if row is None:
            return
        first = row[0] * _LANG_SLOTS
        self._db.execute("DELETE FROM records WHERE id = ?", (record_id,))
        self._db.execute("DELETE FROM terms WHERE record_id = ?", (record_id,))
        # By rowid range: a record's full-text rows are numbered after the record (see _LANG_SLOTS).
        self._db.execute("DELETE FROM texts WHERE rowid BETWEEN ? AND ?", (first, first + _LANG_SLOTS - 1))

    def _add(self, name: str, data: bytes) -> str | None:
        """Index one record file; the problem in words when it is not a valid record."""
        try:
            record = Record.model_validate_json(data)
        except ValidationError as exc:
            first_error = exc.errors()[0]
            where = ".".join(str(part) for part in first_error["loc"]) or "record"
            return f"{where}: {first_error['msg']} ({exc.error_count()} problem(s))"
        if f"{record.id}.json" != name:
            return f"its id {record.id} does not match its file name"
        number = int(record.id.removeprefix("IL-"))
        clash = self._db.execute("SELECT id FROM records WHERE number = ?", (number,)).fetchone()
        if clash is not None:
            return f"its number is {clash[0]}'s too"
        langs = languages(record)[:_LANG_SLOTS]
        self._db.execute(
            "INSERT INTO records (id, number, org, org_slug, date, langs, brief, body) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.id,
                number,
                record.org or "",
                record.org_slug,
                record.date,
                " ".join(langs),
                brief(record).model_dump_json(),
                record.model_dump_json(),
            ),
        )
        self._db.executemany(
            "INSERT INTO terms (record_id, kind, term) VALUES (?, ?, ?)",
            [(record.id, kind, term) for kind, term in record_terms(record)],
        )
        rows = texts(record)[:_LANG_SLOTS]
        first = number * _LANG_SLOTS
        org = " ".join(tokens(record.org or ""))
        # Every language's row holds the terms' labels in every language: 인증서 finds an English record.
        labels_ = [term_text(TOPIC_KINDS[k][0], t) for k, t in record_terms(record) if k in TOPIC_KINDS]
        terms = " ".join(tokens("\n".join(labels_)))
        self._db.executemany(
            "INSERT INTO texts (rowid, title, body, org, terms) VALUES (?, ?, ?, ?, ?)",
            [
                (first + slot, " ".join(tokens(title)), " ".join(tokens(body)), org, terms)
                for slot, (_, title, body) in enumerate(rows)
            ],
        )
        return None

    def _fresh(self) -> None:
        """Before a query: rescan first when records/ itself changed (a file added, removed or
        replaced, as our writes, git and most editors do); when the last scan is `rescan_after`
        seconds old, rescan in the background (an edit in place changes only the file's mtime, and a
        stat per file, 35 ms at 10,000 records, is the only way to see it: no query waits for it)."""
        if not self.auto_refresh:
            return
        if self.rescan_after <= 0 or self._folder_stamp() != self._folder_mtime:
            self.refresh()
            return
        if time.monotonic() - self._scanned_at >= self.rescan_after:
            with self._lock:
                if self._rescanning or self._closed:
                    return
                self._rescanning = True
            threading.Thread(target=self._rescan, name="library-rescan", daemon=True).start()

    def _rescan(self) -> None:
        try:
            self.refresh()
        except Exception:  # a background thread has nobody to tell but the log
            log.exception("rescanning %s failed", self.records_dir)
        finally:
            self._rescanning = False

    def _catalog(self) -> _Catalog:
        """The in-memory sets, reloaded when this or another process changed the index."""
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        if self._catalog_cache is not None and version == self._data_version:
            return self._catalog_cache
        rows = self._db.execute("SELECT id, date, org, org_slug, langs FROM records").fetchall()
        # Oldest first, undated lowest, and ids descending within a day: read from the top down,
        # the newest come first and a day's records in id order.
        rows.sort(key=lambda row: row[0], reverse=True)
        rows.sort(key=lambda row: (row[1] is not None, row[1] or ""))
        position = {row[0]: i for i, row in enumerate(rows)}
        members: dict[tuple[str, str], list[int]] = {}
        for record_id, kind, term in self._db.execute("SELECT record_id, kind, term FROM terms"):
            if record_id in position:
                members.setdefault((kind, term), []).append(position[record_id])
        size = len(rows)
        org_slugs: dict[str, str] = {}
        org_names: dict[str, str] = {}
        for _, _, org, slug, _ in rows:
            key = slug or org.casefold()
            org_names.setdefault(key, org)
            org_slugs[key] = key
            org_slugs.setdefault(org.casefold(), key)
        catalog = _Catalog(
            ids=[row[0] for row in rows],
            dates=[row[1] or "" for row in rows],
            langs=[row[4].split() for row in rows],
            by_number={int(row[0].removeprefix("IL-")): i for i, row in enumerate(rows)},
            masks={key: bits.to_mask(found, size) for key, found in members.items()},
            org_slugs=org_slugs,
            org_names=org_names,
            dated_from=sum(1 for row in rows if row[1] is None),
        )
        self._catalog_cache = catalog
        self._data_version = version
        return catalog

    def problems(self) -> list[tuple[str, str]]:
        """(file name, why) for every file in records/ that is not a valid record."""
        self._fresh()
        with self._lock:
            return list(
                self._db.execute("SELECT name, problem FROM files WHERE problem IS NOT NULL ORDER BY name")
            )

    # ---- reading ---------------------------------------------------------------------------

    def count(self) -> int:
        self._fresh()
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM records").fetchone()[0])

    def get(self, record_id: str) -> Record | None:
        self._fresh()
        with self._lock:
            row = self._db.execute("SELECT body FROM records WHERE id = ?", (record_id,)).fetchone()
        return None if row is None else Record.model_validate_json(row[0])

    def records(self) -> Iterator[Record]:
        """Every indexed record, by id (validated again: the index is a cache, the files are the truth)."""
        for body in self.record_lines():
            yield Record.model_validate_json(body)

    def record_lines(self) -> Iterator[str]:
        """Every record as one line of compact JSON, by id: the JSON Lines dump."""
        self._fresh()
        with self._lock:
            bodies = [row[0] for row in self._db.execute("SELECT body FROM records ORDER BY id")]
        yield from bodies

    def briefs(self) -> list[Brief]:
        """Every record as a list item, newest first (undated last)."""
        self._fresh()
        with self._lock:
            catalog = self._catalog()
            return self._briefs(list(reversed(catalog.ids)))

    def _briefs(self, record_ids: list[str]) -> list[Brief]:
        found: dict[str, str] = {}
        for chunk, marks in in_chunks(record_ids):
            found.update(self._db.execute(f"SELECT id, brief FROM records WHERE id IN ({marks})", chunk))
        return [Brief.model_validate_json(found[i]) for i in record_ids if i in found]

    def search(self, query: Query) -> SearchResult:
        """Records matching the query's words and filters, ranked (bm25) or by date, with facet counts."""
        for kind in TOPIC_KINDS:
            check_terms(kind, getattr(query, kind))
        self._fresh()
        with self._lock:
            catalog = self._catalog()
            matched = self._filter(catalog, query)
            scores: dict[int, float] | None = None
            all_words = query_words(query.q)
            if query.q.strip() and not all_words:
                matched = 0  # only punctuation: nothing can match it
            if all_words and matched:
                scores = self._text_scores(catalog, all_words, query.lang)
                matched &= bits.to_mask(scores, catalog.size)
            total = matched.bit_count()
            facets = self._facets(catalog, matched) if query.facets else {}
            found = bits.positions(matched)
            start = (query.page - 1) * query.page_size
            if scores is not None and query.sort == "relevance":
                # Ties (and the many records a common word scores alike) newest first.
                best = heapq.nsmallest(start + query.page_size, found, key=lambda p: (-scores[p], -p))
                page = best[start:]
            else:
                if query.sort == "oldest":
                    cut = bisect.bisect_left(found, catalog.dated_from)
                    found = found[cut:] + found[:cut]
                else:
                    found.reverse()
                page = found[start : start + query.page_size]
            items = self._briefs([catalog.ids[p] for p in page])
        if scores is not None:
            for position, item in zip(page, items, strict=True):
                item.score = round(scores[position], 4)
                item.snippet = _snippet(item, all_words, query.lang)
        return SearchResult(
            query=query.q,
            filters=query.filters(),
            total=total,
            page=query.page,
            page_size=query.page_size,
            items=items,
            facets=facets,
        )

    def _filter(self, catalog: _Catalog, query: Query) -> int:
        matched = catalog.everything
        for kind in TOPIC_KINDS:
            for term in getattr(query, kind):
                matched &= catalog.masks.get((kind, term), 0)
        if query.lang:
            matched &= catalog.masks.get(("lang", query.lang), 0)
        if query.org:
            slug = catalog.org_slugs.get(query.org.casefold())
            matched &= catalog.masks.get(("org", slug), 0) if slug else 0
        if query.since or query.until:
            matched &= catalog.date_range(query.since, query.until)
        return matched

    def _text_scores(self, catalog: _Catalog, all_words: list[Word], lang: str | None) -> dict[int, float]:
        """Record position -> relevance (higher is better) of the records whose text in one language
        (with its terms' labels) holds every word: bm25, the best of a record's languages."""
        match = " AND ".join(fts_query(word) for word in all_words)
        scores: dict[int, float] = {}
        if not lang:
            # One row per record, done in SQLite: a common word matches thousands of rows.
            sql = f"SELECT rowid / {_LANG_SLOTS}, min(rank) FROM texts WHERE texts MATCH ? GROUP BY 1"
            by_number = catalog.by_number
            for number, score in self._db.execute(sql, (match,)):
                position = by_number.get(number)
                if position is not None:
                    scores[position] = -score
            return scores
        for rowid, score in self._db.execute("SELECT rowid, rank FROM texts WHERE texts MATCH ?", (match,)):
            position = catalog.by_number.get(rowid // _LANG_SLOTS)
            if position is None:
                continue
            slot = rowid % _LANG_SLOTS
            if slot < len(catalog.langs[position]) and catalog.langs[position][slot] == lang:
                scores[position] = max(-score, scores.get(position, -math.inf))
        return scores

    def _facets(self, catalog: _Catalog, matched: int) -> dict[str, list[FacetCount]]:
        facets: dict[str, list[tuple[str, int]]] = {kind: [] for kind in FACET_KINDS}
        for (kind, term), mask in catalog.masks.items():
            count = (matched & mask).bit_count()
            if count:
                facets[kind].append((term, count))
        out: dict[str, list[FacetCount]] = {}
        for kind, counts in facets.items():
            if kind == "year":
                counts.sort(reverse=True)  # newest year first
            else:
                counts.sort(key=lambda pair: (-pair[1], pair[0]))
            if kind in TOPIC_KINDS:
                out[kind] = [FacetCount(term=t, count=c, labels=labels(kind, t)) for t, c in counts]
            elif kind == "org":
                out[kind] = [
                    FacetCount(term=t, count=c, labels={"en": catalog.org_names.get(t, t)}) for t, c in counts
                ]
            else:
                out[kind] = [FacetCount(term=t, count=c) for t, c in counts]
        return out

    def incident(self, record_id: str, *, related: int = MAX_RELATED) -> Incident | None:
        """One record and the records related to it (shared root cause or components), each with why."""
        record = self.get(record_id)
        if record is None:
            return None
        return Incident(record=record, related=self.related(record, limit=related))

    def related(self, record: Record, *, limit: int = MAX_RELATED) -> list[RelatedIncident]:
        """flows.related's ranking over the records sharing the root cause or a component.

        The index picks the candidates and scores them from its sets with flows.related's weights
        (the same score, and positions order ties as it does: newest first, then by id), so only the
        best few records are read and handed to flows.related, which ranks them and says why.
        """
        weights = {
            kind: WEIGHTS[kind] for kind in ("root_cause", "component", "contributing", "symptom", "org")
        }
        subject = [
            (k, t)
            for k, t in record_terms(record)
            if k in weights and not (k == "root_cause" and t in ("unknown", "other"))
        ]
        # Candidates share a cause or component that says something (flows/data/related.json).
        keys = [
            (k, t)
            for k, t in subject
            if (k == "component" and t not in GENERIC_COMPONENTS)
            or (k == "root_cause" and t not in ("unknown", "other") and t not in GENERIC_CAUSES)
        ]
        self._fresh()
        with self._lock:
            catalog = self._catalog()
            candidates = 0
            for key in keys:
                candidates |= catalog.masks.get(key, 0)
            own = catalog.ids.index(record.id) if record.id in catalog.ids else None
            if own is not None:
                candidates &= ~(1 << own)
            score: dict[int, float] = {}
            for kind, term in subject:
                for position in bits.positions(candidates & catalog.masks.get((kind, term), 0)):
                    score[position] = score.get(position, 0.0) + weights[kind]
            best = sorted(score, key=lambda p: (-score[p], -p))[: limit * 2]
            chosen = [catalog.ids[p] for p in best]
            bodies: list[str] = []
            for chunk, marks in in_chunks(chosen):
                sql = f"SELECT body FROM records WHERE id IN ({marks})"
                bodies += [row[0] for row in self._db.execute(sql, chunk)]
        others = {c.id: c for c in (Record.model_validate_json(b) for b in bodies)}
        return [
            RelatedIncident(
                id=r.record_id,
                score=r.score,
                why=list(r.why),
                root_cause=r.root_cause,
                components=list(r.components),
                same_org=r.same_org,
                may_recur=r.may_recur,
                date=r.date,
                org=others[r.record_id].org,
                title=dict(others[r.record_id].title),
            )
            for r in rank_related(record, others.values(), exclude=record.id, limit=limit)
        ]

    def topic(self, kind: str, term: str, *, page: int = 1, page_size: int = 20) -> Topic:
        """Records sharing one vocabulary term, newest first."""
        kind = topic_kind(kind)
        check_terms(kind, (term,))
        found = vocabulary(TOPIC_KINDS[kind][0]).terms[term]
        query = Query.model_validate(
            {kind: (term,), "page": page, "page_size": page_size, "sort": "newest", "facets": False}
        )
        result = self.search(query)
        return Topic(
            kind=kind,
            term=term,
            labels=dict(found.labels),
            definition=found.definition,
            total=result.total,
            page=page,
            page_size=page_size,
            items=result.items,
        )
