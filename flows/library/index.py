"""The library's search index: records/ in SQLite (FTS5 trigram, bm25), kept current by file mtime and digest.

The index is a cache: delete it and the next query rebuilds it. Every query first compares the
records folder with what the index holds (a stat per file, cheap) and re-reads only the files whose
size or mtime changed; a file whose bytes are unchanged (a `touch`, a git checkout of the same
content) is recognised by its digest and not re-parsed. So a record edited by hand or by git is
picked up on the next query, in any process that reads the index.

Full text: one FTS5 row per record and language (title; the other localized fields; the
organisation), with the trigram tokenizer, which finds a Korean or Japanese word inside a sentence
without a word segmenter. Trigrams need three characters: shorter words (many Korean and Japanese
words have two) are matched as substrings of the same row by `instr`, because SQLite 3.40's
trigram LIKE misses short non-ASCII patterns.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from flows.library.models import (
    FACET_KINDS,
    TOPIC_KINDS,
    Brief,
    FacetCount,
    Incident,
    RelatedIncident,
    SearchResult,
    SourceLink,
    Topic,
    Vocab,
    VocabTerm,
)
from flows.related import WEIGHTS, rank_related
from flows.settings import Settings
from flows.store.records import RECORD_FILE
from schema.errors import InputError
from schema.record import Record
from schema.vocab import check_term, vocabulary

log = logging.getLogger(__name__)

INDEX_NAME = "library.sqlite"
SCHEMA_VERSION = 1
MAX_PAGE_SIZE = 100
# bm25 column weights: a word in the title counts most, then the organisation, then the body.
RANK = "bm25(0, 0, 5.0, 1.0, 2.0)"

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    name TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, digest TEXT NOT NULL,
    problem TEXT
);
CREATE TABLE IF NOT EXISTS records (
    id TEXT PRIMARY KEY, org TEXT NOT NULL, org_slug TEXT, date TEXT, brief TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_date ON records (date DESC, id);
CREATE TABLE IF NOT EXISTS terms (record_id TEXT NOT NULL, kind TEXT NOT NULL, term TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS terms_by_term ON terms (kind, term, record_id);
CREATE INDEX IF NOT EXISTS terms_by_record ON terms (record_id);
CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5(
    record_id UNINDEXED, lang UNINDEXED, title, body, org, tokenize = 'trigram'
);
INSERT OR IGNORE INTO texts (texts, rank) VALUES ('rank', '{RANK}');
"""

# Localized fields searched as the body, in the order a reader meets them on the record page.
_BODY_FIELDS = ("summary", "trigger", "detection", "symptoms_text", "lessons")
_ITEM_FIELDS = ("remediation", "action_items")

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


def check_terms(kind: str, terms: tuple[str, ...]) -> None:
    """Raise InputError naming the first term its vocabulary does not know (with close alternatives)."""
    vocab_kind = TOPIC_KINDS[kind][0]
    for term in terms:
        try:
            check_term(vocab_kind, term)
        except ValueError as exc:
            raise InputError(f"{kind}: {exc}") from None


def topic_kind(kind: str) -> str:
    """The API's name of a topic kind; the vocabulary's and the record field's names are accepted too."""
    if kind in TOPIC_KINDS:
        return kind
    for name, (vocab_kind, field) in TOPIC_KINDS.items():
        if kind in (vocab_kind, field):
            return name
    raise InputError(f"unknown topic kind {kind!r}: use one of {', '.join(TOPIC_KINDS)}")


def labels(kind: str, term: str) -> dict[str, str]:
    """The English and Korean labels of a vocabulary term ({} for a term the vocabulary lacks)."""
    found = vocabulary(TOPIC_KINDS[kind][0]).terms.get(term)
    return dict(found.labels) if found else {}


def vocab(kind: str | None = None) -> Vocab:
    """The vocabularies (or one), each term with its labels, definition and aliases."""
    kinds = [topic_kind(kind)] if kind else list(TOPIC_KINDS)
    return Vocab(
        kinds={
            name: [
                VocabTerm(term=key, labels=dict(t.labels), definition=t.definition, aliases=dict(t.aliases))
                for key, t in sorted(vocabulary(TOPIC_KINDS[name][0]).terms.items())
            ]
            for name in kinds
        }
    )


def record_terms(record: Record) -> list[tuple[str, str]]:
    """(kind, term) pairs a record can be filtered and faceted by."""
    pairs: list[tuple[str, str]] = []
    for kind, (_, field) in TOPIC_KINDS.items():
        value = getattr(record, field)
        for term in [value] if isinstance(value, str) else value:
            pairs.append((kind, term))
    pairs.append(("org", record.org_slug or (record.org or "").casefold()))
    pairs += [("lang", lang) for lang in languages(record)]
    return list(dict.fromkeys(pairs))


def languages(record: Record) -> list[str]:
    """Every language the record has text in, title's first."""
    found: dict[str, None] = dict.fromkeys(record.title)
    for field in _BODY_FIELDS:
        found.update(dict.fromkeys(getattr(record, field)))
    for field in _ITEM_FIELDS:
        for item in getattr(record, field):
            found.update(dict.fromkeys(item.text))
    return list(found)


def texts(record: Record) -> list[tuple[str, str, str]]:
    """(lang, title, body) per language: the rows the full-text index holds for a record."""
    rows = []
    for lang in languages(record):
        body = [getattr(record, field).get(lang, "") for field in _BODY_FIELDS]
        for field in _ITEM_FIELDS:
            body += [item.text.get(lang, "") for item in getattr(record, field)]
        rows.append((lang, record.title.get(lang, ""), "\n".join(part for part in body if part)))
    return rows


def brief(record: Record) -> Brief:
    return Brief(
        id=record.id,
        org=record.org or "",
        org_slug=record.org_slug,
        date=record.date,
        title=dict(record.title),
        summary=dict(record.summary),
        root_cause=record.root_cause,
        severity=record.severity,
        components=list(record.components),
        contributing=list(record.contributing),
        symptoms=list(record.symptoms),
        domain=list(record.domain),
        languages=languages(record),
        sources=[SourceLink(url=s.url, kind=s.kind, archived=s.archived) for s in record.sources],
        url=record.url,
    )


def words(q: str) -> list[str]:
    """The words of a query: whitespace-separated, quotes dropped, each one matched as a substring."""
    return [w for w in q.replace('"', " ").split() if w]


class LibraryIndex:
    """The search index of one records folder; safe to share between a process's threads."""

    def __init__(self, records_dir: Path, path: Path, *, auto_refresh: bool = True) -> None:
        self.records_dir = records_dir
        self.path = path
        self.auto_refresh = auto_refresh
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path, timeout=60, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._open()

    @classmethod
    def for_settings(cls, settings: Settings, *, auto_refresh: bool = True) -> LibraryIndex:
        """The index of the data directory's records/, stored beside the other SQLite files in raw/."""
        return cls(settings.records_dir, settings.raw_dir / INDEX_NAME, auto_refresh=auto_refresh)

    def _open(self) -> None:
        with self._lock:
            row = None
            with contextlib.suppress(sqlite3.OperationalError):  # a new file: no meta table yet
                row = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is not None and row[0] != str(SCHEMA_VERSION):
                # An index written by another version: it is a cache, so start again.
                for table in ("meta", "files", "records", "terms", "texts"):
                    self._db.execute(f"DROP TABLE IF EXISTS {table}")
            self._db.executescript(_SCHEMA)
            self._db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
            )

    def close(self) -> None:
        with self._lock:
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

    def refresh(self) -> RefreshStats:
        """Bring the index up to date with records/: re-read changed files, drop deleted ones."""
        with self._lock:
            on_disk = self._scan()
            known = {
                name: (mtime, size, digest)
                for name, mtime, size, digest in self._db.execute(
                    "SELECT name, mtime_ns, size, digest FROM files"
                )
            }
            changed = [n for n, stat in on_disk.items() if known.get(n, (None, None))[:2] != stat]
            removed = [n for n in known if n not in on_disk]
            if not changed and not removed:
                return RefreshStats(0, 0, 0, 0)
            indexed = touched = problems = 0
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for name in removed:
                    self._forget(name)
                for name in changed:
                    path = self.records_dir / name
                    try:
                        data = path.read_bytes()
                        stat = path.stat()
                    except FileNotFoundError:
                        self._forget(name)
                        continue
                    digest = hashlib.sha256(data).hexdigest()
                    if name in known and known[name][2] == digest:
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
            if problems:
                log.warning("%d record file(s) in %s are not valid records", problems, self.records_dir)
            return RefreshStats(indexed, touched, len(removed), problems)

    def rebuild(self) -> RefreshStats:
        """Forget everything and index records/ again."""
        with self._lock:
            for table in ("files", "records", "terms", "texts"):
                self._db.execute(f"DELETE FROM {table}")
            return self.refresh()

    def _forget(self, name: str) -> None:
        record_id = name.removesuffix(".json")
        self._db.execute("DELETE FROM files WHERE name = ?", (name,))
        self._db.execute("DELETE FROM records WHERE id = ?", (record_id,))
        self._db.execute("DELETE FROM terms WHERE record_id = ?", (record_id,))
        self._db.execute("DELETE FROM texts WHERE record_id = ?", (record_id,))

    def _add(self, name: str, data: bytes) -> str | None:
        """Index one record file; the problem in words when it is not a valid record."""
        try:
            record = Record.model_validate_json(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "record"
            return f"{where}: {first['msg']} ({exc.error_count()} problem(s))"
        if f"{record.id}.json" != name:
            return f"its id {record.id} does not match its file name"
        self._db.execute(
            "INSERT INTO records (id, org, org_slug, date, brief, body) VALUES (?, ?, ?, ?, ?, ?)",
            (
                record.id,
                record.org or "",
                record.org_slug,
                record.date,
                brief(record).model_dump_json(),
                record.model_dump_json(),
            ),
        )
        self._db.executemany(
            "INSERT INTO terms (record_id, kind, term) VALUES (?, ?, ?)",
            [(record.id, kind, term) for kind, term in record_terms(record)],
        )
        self._db.executemany(
            "INSERT INTO texts (record_id, lang, title, body, org) VALUES (?, ?, ?, ?, ?)",
            [(record.id, lang, title, body, record.org or "") for lang, title, body in texts(record)],
        )
        return None

    def _fresh(self) -> None:
        if self.auto_refresh:
            self.refresh()

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
        self._fresh()
        with self._lock:
            bodies = [row[0] for row in self._db.execute("SELECT body FROM records ORDER BY id")]
        for body in bodies:
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
            rows = self._db.execute(
                "SELECT brief FROM records ORDER BY date IS NULL, date DESC, id"
            ).fetchall()
        return [Brief.model_validate_json(row[0]) for row in rows]

    def search(self, query: Query) -> SearchResult:
        """Records matching the query's words and filters, ranked (bm25) or by date, with facet counts."""
        for kind in TOPIC_KINDS:
            check_terms(kind, getattr(query, kind))
        self._fresh()
        matched_sql, params, ranked = self._matched(query)
        if ranked and query.sort == "relevance":
            order = "m.score, r.date DESC, r.id"
        elif query.sort == "oldest":
            order = "r.date IS NULL, r.date, r.id"
        else:
            order = "r.date IS NULL, r.date DESC, r.id"
        offset = (query.page - 1) * query.page_size
        with self._lock:
            total = self._db.execute(f"SELECT count(*) FROM ({matched_sql})", params).fetchone()[0]
            rows = self._db.execute(
                f"SELECT r.brief, m.score FROM ({matched_sql}) m JOIN records r ON r.id = m.id "
                f"ORDER BY {order} LIMIT ? OFFSET ?",
                [*params, query.page_size, offset],
            ).fetchall()
            facets = self._facets(matched_sql, params) if query.facets else {}
        items = []
        for body, score in rows:
            item = Brief.model_validate_json(body)
            if ranked:
                item.score = round(-float(score), 4) + 0.0
            items.append(item)
        return SearchResult(
            query=query.q,
            filters=query.filters(),
            total=total,
            page=query.page,
            page_size=query.page_size,
            items=items,
            facets=facets,
        )

    def _matched(self, query: Query) -> tuple[str, list[Any], bool]:
        """SQL selecting (id, score) of the matching records, its parameters, and whether it is ranked."""
        where: list[str] = []
        params: list[Any] = []
        all_words = words(query.q)
        long = [w for w in all_words if len(w) >= 3]
        short = [w for w in all_words if len(w) < 3]
        ranked = bool(all_words)
        if ranked:
            text_where: list[str] = []
            text_params: list[Any] = []
            if long:
                text_where.append("texts MATCH ?")
                text_params.append(" ".join('"' + w.replace('"', '""') + '"' for w in long))
            for w in short:
                text_where.append("instr(lower(title || ' ' || body || ' ' || org), lower(?)) > 0")
                text_params.append(w)
            if query.lang:
                text_where.append("lang = ?")
                text_params.append(query.lang)
            score = "rank" if long else "0.0"
            base = (
                f"SELECT record_id AS id, min({score}) AS score FROM texts "
                f"WHERE {' AND '.join(text_where)} GROUP BY record_id"
            )
            params += text_params
        else:
            base = "SELECT id, 0.0 AS score FROM records"
        for kind in TOPIC_KINDS:
            for term in getattr(query, kind):
                where.append("id IN (SELECT record_id FROM terms WHERE kind = ? AND term = ?)")
                params += [kind, term]
        if query.lang:
            where.append("id IN (SELECT record_id FROM terms WHERE kind = 'lang' AND term = ?)")
            params.append(query.lang)
        if query.org:
            where.append(
                "id IN (SELECT id FROM records WHERE org_slug = ? OR lower(org) = lower(?) "
                "UNION SELECT record_id FROM terms WHERE kind = 'org' AND term = ?)"
            )
            params += [query.org, query.org, query.org.casefold()]
        if query.since:
            where.append("id IN (SELECT id FROM records WHERE date >= ?)")
            params.append(query.since)
        if query.until:
            where.append("id IN (SELECT id FROM records WHERE date <= ?)")
            params.append(query.until)
        sql = f"SELECT id, score FROM ({base})"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return sql, params, ranked

    def _facets(self, matched_sql: str, params: list[Any]) -> dict[str, list[FacetCount]]:
        rows = self._db.execute(
            f"SELECT kind, term, count(*) FROM terms WHERE record_id IN (SELECT id FROM ({matched_sql})) "
            "GROUP BY kind, term ORDER BY kind, count(*) DESC, term",
            params,
        ).fetchall()
        facets: dict[str, list[FacetCount]] = {kind: [] for kind in FACET_KINDS}
        org_names: dict[str, str] = {}
        if any(kind == "org" for kind, _, _ in rows):
            org_names = {
                slug: org
                for slug, org in self._db.execute(
                    "SELECT coalesce(org_slug, lower(org)), org FROM records GROUP BY 1"
                )
            }
        for kind, term, count in rows:
            if kind in TOPIC_KINDS:
                names = labels(kind, term)
            elif kind == "org":
                names = {"en": org_names.get(term, term)}
            else:
                names = {}
            facets[kind].append(FacetCount(term=term, count=count, labels=names))
        return facets

    def incident(self, record_id: str, *, related: int = 10) -> Incident | None:
        """One record and the records related to it (shared root cause or components), each with why."""
        record = self.get(record_id)
        if record is None:
            return None
        return Incident(record=record, related=self.related(record, limit=related))

    def related(self, record: Record, *, limit: int = 10) -> list[RelatedIncident]:
        """flows.related's ranking over the records sharing the root cause or a component.

        The index picks the candidates (and pre-scores them with the same weights, so a term shared
        by thousands of records costs a few hundred reads, not thousands); flows.related ranks them.
        """
        subject = [(kind, term) for kind, term in record_terms(record) if kind in TOPIC_KINDS]
        keys = [
            (k, t)
            for k, t in subject
            if k == "component" or (k == "root_cause" and t not in ("unknown", "other"))
        ]
        if not keys:
            return []
        weight = {kind: WEIGHTS[kind] for kind in ("root_cause", "component", "contributing", "symptom")}
        pairs = " OR ".join("(kind = ? AND term = ?)" for _ in subject)
        cases = " ".join(f"WHEN '{k}' THEN {w}" for k, w in weight.items())
        key_pairs = " OR ".join("(kind = ? AND term = ?)" for _ in keys)
        sql = (
            f"SELECT record_id, sum(CASE kind {cases} ELSE 0 END) AS s FROM terms "
            f"WHERE ({pairs}) AND record_id != ? AND record_id IN "
            f"(SELECT record_id FROM terms WHERE {key_pairs}) "
            "GROUP BY record_id ORDER BY s DESC LIMIT ?"
        )
        params: list[Any] = [x for pair in subject for x in pair] + [record.id]
        params += [x for pair in keys for x in pair] + [max(limit * 20, 200)]
        with self._lock:
            ids = [row[0] for row in self._db.execute(sql, params)]
            placeholders = ", ".join("?" for _ in ids)
            bodies = [
                row[0]
                for row in self._db.execute(f"SELECT body FROM records WHERE id IN ({placeholders})", ids)
            ]
        candidates = {c.id: c for c in (Record.model_validate_json(b) for b in bodies)}
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
                org=candidates[r.record_id].org,
                title=dict(candidates[r.record_id].title),
            )
            for r in rank_related(record, candidates.values(), exclude=record.id, limit=limit)
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

    def terms_in_use(self) -> dict[str, list[tuple[str, int]]]:
        """For each topic kind, the terms some record has and how many records have each."""
        self._fresh()
        with self._lock:
            rows = self._db.execute(
                "SELECT kind, term, count(*) FROM terms GROUP BY kind, term "
                "ORDER BY kind, count(*) DESC, term"
            ).fetchall()
        out: dict[str, list[tuple[str, int]]] = {kind: [] for kind in TOPIC_KINDS}
        for kind, term, count in rows:
            if kind in out:
                out[kind].append((term, count))
        return out


def dumps(value: BaseModel) -> str:
    """Compact JSON of a result model (for JSON Lines and the static site's index)."""
    return json.dumps(value.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))
