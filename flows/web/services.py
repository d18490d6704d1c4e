"""What the pages and the API read: queue summaries, records, archived documents (all cached by file)."""

from __future__ import annotations

import os
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from flows.review import Reviews
from flows.settings import Settings
from flows.store.damaged import load
from schema.document import Document
from schema.draft import DRAFT_ID_PATTERN, Draft
from schema.errors import ArchiveError, InputError
from schema.record import Record

DRAFT_ID = re.compile(DRAFT_ID_PATTERN)
RECORD_ID = re.compile(r"^IL-\d{4,}$")
CAPTURE_ID = re.compile(r"^c-[0-9a-zA-Z_-]{1,80}$")
LOW_CONFIDENCE = 0.4  # below it a field is marked and a draft counts as "low confidence"


def valid_draft_id(value: str) -> str:
    """A draft id in a path: `d-` and 16 hex digits, nothing else (no `../`, no prefixes)."""
    if not DRAFT_ID.fullmatch(value):
        raise InputError(f"{value[:40]!r} is not a draft id (d- and 16 hex digits)")
    return value


def valid_record_id(value: str) -> str:
    if not RECORD_ID.fullmatch(value):
        raise InputError(f"{value[:40]!r} is not a record id (IL-NNNN)")
    return value


def first_text(text: dict[str, str], lang: str | None = None) -> str:
    if lang and text.get(lang):
        return text[lang]
    return next((v for v in text.values() if v), "")


@dataclass(frozen=True)
class Summary:
    """One queue row."""

    draft_id: str
    status: str
    version: int
    org: str | None
    title: str
    language: str | None
    date: str | None
    host: str
    score: float
    lowest: float | None
    lowest_field: str | None
    with_evidence: int
    fields: int
    drafted_at: str
    drafter: str | None

    @property
    def low(self) -> bool:
        return self.lowest is not None and self.lowest < LOW_CONFIDENCE

    def age(self, now: datetime) -> str:
        try:
            then = datetime.fromisoformat(self.drafted_at.replace("Z", "+00:00"))
        except ValueError:
            return "?"
        seconds = max(0, int((now - then).total_seconds()))
        for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
            if seconds >= size:
                return f"{seconds // size}{unit}"
        return f"{seconds}s"

    def as_dict(self) -> dict[str, Any]:
        return {
            "draft_id": self.draft_id,
            "status": self.status,
            "version": self.version,
            "org": self.org,
            "title": self.title,
            "language": self.language,
            "date": self.date,
            "host": self.host,
            "postmortem_score": self.score,
            "lowest_confidence": self.lowest,
            "lowest_confidence_field": self.lowest_field,
            "fields_with_evidence": self.with_evidence,
            "fields": self.fields,
            "drafted_at": self.drafted_at,
        }


def summarize(draft: Draft) -> Summary:
    lowest = min(draft.confidence.items(), key=lambda kv: kv[1].value, default=None)
    lang = draft.source.language
    return Summary(
        draft_id=draft.draft_id,
        status=draft.status,
        version=draft.version,
        org=draft.record.org,
        title=first_text(draft.record.title, lang),
        language=lang,
        date=draft.record.date,
        host=urlsplit(draft.source.url).hostname or "",
        score=draft.postmortem.score,
        lowest=lowest[1].value if lowest else None,
        lowest_field=lowest[0] if lowest else None,
        with_evidence=len({k.split(".")[0] for k, v in draft.evidence.items() if v}),
        fields=len({k.split(".")[0] for k in (*draft.confidence, *draft.evidence)}),
        drafted_at=draft.history[0].at if draft.history else "",
        drafter=draft.source.drafter,
    )


class _FileCache:
    """Parsed files of one folder, re-read only when a file's mtime or size changed."""

    # Every writer of ours replaces a file by rename (flows/store/atomic.py) or links a new one in,
    # which changes the folder's mtime: an unchanged, settled folder mtime means nothing changed,
    # and the 2,000 stat() calls of a full look are skipped. "Settled": older than the clock's
    # granularity when it was read. A file changed in place (not by us) is seen at the next full look.
    SETTLED_NS = 2_000_000_000
    FULL_LOOK_EVERY_NS = 30_000_000_000

    def __init__(self, folder: Path, pattern: re.Pattern[str]) -> None:
        self.folder = folder
        self.pattern = pattern
        self._items: dict[str, tuple[tuple[int, int], Any]] = {}
        self._lock = threading.Lock()
        self._seen: dict[str, Any] = {}
        self.unreadable: list[Path] = []  # files of the last full look that could not be read
        self._folder_key: tuple[int, int] | None = None
        self._looked_at = 0

    def load(self, path: Path) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def all(self) -> dict[str, Any]:
        now = time.time_ns()
        try:
            st = os.stat(self.folder)
            key: tuple[int, int] | None = (st.st_mtime_ns, st.st_ino)
        except FileNotFoundError:
            key = None
        with self._lock:
            if (
                key is not None
                and key == self._folder_key
                and now - key[0] > self.SETTLED_NS
                and now - self._looked_at < self.FULL_LOOK_EVERY_NS
            ):
                return dict(self._seen)
        seen = self._look()
        with self._lock:
            self._seen, self._folder_key, self._looked_at = seen, key, now
        return dict(seen)

    def _look(self) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        unreadable: list[Path] = []
        try:
            entries = list(os.scandir(self.folder))
        except FileNotFoundError:
            entries = []
        with self._lock:
            for entry in entries:
                name = entry.name
                if not name.endswith(".json") or not self.pattern.fullmatch(name[:-5]):
                    continue
                stat = entry.stat()
                key = (stat.st_mtime_ns, stat.st_size)
                cached = self._items.get(name)
                if cached is None or cached[0] != key:
                    try:
                        cached = (key, self.load(Path(entry.path)))
                    except (OSError, ValueError):
                        unreadable.append(Path(entry.path))  # named on the queue page
                        continue
                    self._items[name] = cached
                seen[name[:-5]] = cached[1]
            for gone in set(self._items) - {f"{k}.json" for k in seen}:
                del self._items[gone]
            self.unreadable = sorted(unreadable)
        return seen


class _Summaries(_FileCache):
    def load(self, path: Path) -> Summary:
        return summarize(Draft.model_validate_json(path.read_bytes()))


class _Records(_FileCache):
    def load(self, path: Path) -> Record:
        return Record.model_validate_json(path.read_bytes())


@dataclass
class Services:
    """One per app: the review decisions and cached views of the stores."""

    settings: Settings
    reviews: Reviews = field(init=False)
    _summaries: _Summaries = field(init=False)
    _records: _Records = field(init=False)
    _docs: OrderedDict[str, Document] = field(init=False, default_factory=OrderedDict)
    _docs_lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.reviews = Reviews(self.settings)
        self._summaries = _Summaries(self.settings.queue_dir, DRAFT_ID)
        self._records = _Records(self.settings.records_dir, RECORD_ID)

    def summaries(self) -> list[Summary]:
        return list(self._summaries.all().values())

    def unreadable_drafts(self) -> list[Path]:
        """Draft files that cannot be read (truncated, garbage), as of the last look, named inside
        the data directory (records/queue/d-....json)."""
        self._summaries.all()
        base = self.settings.data_dir
        return [p.relative_to(base) if p.is_relative_to(base) else p for p in self._summaries.unreadable]

    def draft(self, draft_id: str) -> Draft:
        return self.reviews.queue.get(valid_draft_id(draft_id))

    def records(self) -> list[Record]:
        found = self._records.all()
        return [found[k] for k in sorted(found)]

    def record(self, record_id: str) -> Record:
        valid_record_id(record_id)
        path = self.settings.records_dir / f"{record_id}.json"
        if not path.is_file():
            raise InputError(f"no record {record_id}")
        return load(path, Record, "record")  # a damaged file is a one-line error, not a 500

    def orgs(self) -> list[str]:
        return sorted({r.org for r in self.records() if r.org}, key=str.casefold)

    def snapshot(self, capture_id: str) -> tuple[bytes, str, str]:
        """The archived bytes of a capture, its content type and URL (never the live site)."""
        if not CAPTURE_ID.fullmatch(capture_id):
            raise InputError(f"{capture_id[:40]!r} is not a capture id")
        from flows.archive import Archive

        with Archive(self.settings) as archive:
            capture = archive.get(capture_id)
            data = archive.read_payload(capture_id)
        return data, capture.content_type or capture.mime or "text/html", capture.url

    def document(self, draft: Draft) -> Document | None:
        """The document the draft's evidence offsets point into, extracted again from the archived
        snapshot (the extractor is deterministic); None when the draft has no snapshot."""
        capture_id = draft.source.snapshot
        if not capture_id:
            return None
        with self._docs_lock:
            if capture_id in self._docs:
                self._docs.move_to_end(capture_id)
                return self._docs[capture_id]
        from extractors import extract_document

        try:
            data, content_type, url = self.snapshot(capture_id)
        except (ArchiveError, InputError):
            return None
        doc = extract_document(data, url=url, content_type=content_type)
        with self._docs_lock:
            self._docs[capture_id] = doc
            while len(self._docs) > 64:
                self._docs.popitem(last=False)
        return doc


def now_utc() -> datetime:
    return datetime.now(UTC)
