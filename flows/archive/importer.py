"""Importing a WARC made elsewhere (wget, ArchiveBox, Browsertrix, Webrecorder) into raw/."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from filelock import FileLock
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from flows.archive.capture import Capture
from flows.archive.index import Index
from flows.archive.warc import IMPORTED_DIR, capture_id, sha256_file
from flows.fetch.content import media_type
from flows.fetch.urls import canonicalize_url
from flows.store.database import insert_ignore_sql
from schema.errors import InputError

if TYPE_CHECKING:
    from flows.archive.store import Archive

INDEXED_TYPES = ("response", "resource", "revisit")
# What an article can be served as; anything else a crawl holds (images, scripts, feeds) is skipped.
PAGE_MIMES = ("text/html", "application/xhtml+xml", "text/plain", "text/markdown", "text/x-markdown")
# The head of a server-generated directory listing: Apache and nginx autoindex ("Index of /"),
# Python's http.server ("Directory listing for /"), lighttpd ("Index of /" too).
_LISTING = re.compile(rb"<(?:title|h1)>\s*(?:Index of /|Directory listing for /)", re.IGNORECASE)
_HEAD_BYTES = 4096


@dataclass(frozen=True)
class Skipped:
    """A record of an imported file that is not a capture of a web page, and why."""

    url: str
    record_type: str
    offset: int
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"url": self.url, "type": self.record_type, "offset": self.offset, "reason": self.reason}


@dataclass
class Imported:
    """One file's import: where it lies in raw/, its captures, what was skipped, and whether it
    had been imported before (then nothing was copied or indexed again)."""

    source: Path
    warc_file: str
    captures: list[Capture] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    already: bool = False

    def line(self) -> str:
        word = "already imported" if self.already else "imported"
        tail = ""
        if self.skipped:
            counts: dict[str, int] = {}
            for item in self.skipped:
                counts[item.reason] = counts.get(item.reason, 0) + 1
            tail = (
                f", {len(self.skipped)} skipped ("
                + "; ".join(f"{n} {why}" for why, n in counts.items())
                + ")"
            )
        return f"{word} {self.source}: {len(self.captures)} captures{tail}"

    def as_dict(self) -> dict[str, object]:
        return {
            "path": str(self.source),
            "warc_file": self.warc_file,
            "result": "already imported" if self.already else "imported",
            "captures": [c.as_dict() for c in self.captures],
            "skipped": [s.as_dict() for s in self.skipped],
        }


def skip_reason(rec_type: str, url: str, mime: str | None, head: bytes) -> str | None:
    """Why a response, resource or revisit record is not a capture of a web page (None: it is).

    Crawlers put their own files and lookups in the WARC beside the pages: wget its log and
    arguments as `metadata://` resources, Heritrix its DNS answers as `dns:` responses; a crawl
    of a site also fetches robots.txt and the server's directory listings. None is an article."""
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "metadata":
        return "metadata:// record (the crawler's own log or settings)"
    if scheme == "dns":
        return "dns: record (a DNS lookup)"
    if scheme not in ("http", "https"):
        return f"not a web address ({scheme or 'no'} scheme)"
    if urlsplit(url).path == "/robots.txt":
        return "robots.txt"
    if rec_type == "revisit":
        return None  # no payload of its own: it stands or falls with its original
    if mime is not None and mime not in PAGE_MIMES:
        return f"not a web page ({mime})"
    if _LISTING.search(head):
        return "directory listing"
    return None


def _copy_in(source: Path, raw: Path, sha256: str) -> str:
    """Copy atomically to raw/imported/; raw/ must not depend on files outside it."""
    folder = raw / IMPORTED_DIR
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{IMPORTED_DIR}/{sha256[:12]}-{source.name}"
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".import-")
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
            shutil.copyfileobj(src, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o444)  # closed for good: imported files are never written again
        os.replace(tmp, raw / name)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return name


def _entry(record: Any, name: str, offset: int, length: int, sha256: str | None) -> dict[str, Any]:
    headers = record.rec_headers
    url = headers.get_header("WARC-Target-URI") or ""
    http = record.http_headers
    status = None
    content_type = None
    if http is not None and record.rec_type in ("response", "revisit"):
        try:
            status = int(http.get_statuscode())
        except (TypeError, ValueError):
            status = None
        content_type = http.get_header("Content-Type")
    elif record.rec_type == "resource":
        content_type = headers.get_header("Content-Type")
    return {
        "record_id": headers.get_header("WARC-Record-ID") or f"<urn:offset:{name}:{offset}>",
        "url": url,
        "canonical_url": canonicalize_url(url) if url.startswith(("http://", "https://")) else url,
        "captured_at": headers.get_header("WARC-Date") or "",
        "status": status,
        "content_type": content_type,
        "mime": media_type(content_type),
        "payload_sha256": sha256,
        "payload_digest": headers.get_header("WARC-Payload-Digest"),
        "offset": offset,
        "length": length,
        "etag": http.get_header("ETag") if http is not None else None,
        "last_modified": http.get_header("Last-Modified") if http is not None else None,
        "refers_to": headers.get_header("WARC-Refers-To"),
        "refers_to_uri": headers.get_header("WARC-Refers-To-Target-URI"),
        "type": record.rec_type,
    }


def _scan(path: Path, name: str) -> Iterator[dict[str, Any]]:
    """An entry per response, resource and revisit record; `skip` says why one is no capture."""
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh)
        try:
            for record in it:
                if record.rec_type not in INDEXED_TYPES:
                    it.read_to_end(record)
                    continue
                sha: str | None = None
                head = b""
                if record.rec_type != "revisit":
                    digest = hashlib.sha256()
                    stream = record.content_stream()
                    while chunk := stream.read(1 << 20):
                        digest.update(chunk)
                        if len(head) < _HEAD_BYTES:
                            head += chunk[: _HEAD_BYTES - len(head)]
                    sha = digest.hexdigest()
                it.read_to_end(record)
                entry = _entry(record, name, it.get_record_offset(), it.get_record_length(), sha)
                entry["skip"] = skip_reason(record.rec_type, entry["url"], entry["mime"], head)
                yield entry
        except ArchiveLoadFailed as exc:
            raise InputError(
                f"{path} is not a WARC we can index ({exc}); if it is gzipped as one stream, "
                "recompress it per record with `warcio recompress IN OUT`"
            ) from exc


def import_warc(archive: Archive, source: Path) -> Iterator[Capture]:
    """Yield a Capture for each web page's response, resource and revisit record of `source`."""
    yield from import_file(archive, source).captures


def import_file(archive: Archive, source: Path) -> Imported:
    """Copy `source` into raw/imported/ and index its web pages' captures; the other records
    are listed as skipped, with why (and remembered, so a second import says the same)."""
    if not source.is_file():
        raise InputError(f"{source} is not a file")
    if not source.name.endswith((".warc", ".warc.gz")):
        raise InputError(f"{source} is not a .warc or .warc.gz file")
    index = archive.index
    sha256 = sha256_file(source)
    known = index.file_with_sha256(sha256)
    if known is not None:  # the same bytes were imported before: same captures, same ids
        return Imported(source, known, index.in_file(known), _skipped_in(index, known), already=True)
    entries = list(_scan(source, "?"))  # fail on a bad file before anything is copied into raw/
    with FileLock(str(archive.raw / ".lock"), timeout=600):
        known = index.file_with_sha256(sha256)  # another process may have been first
        if known is not None:
            return Imported(source, known, index.in_file(known), _skipped_in(index, known), already=True)
        name = _copy_in(source, archive.raw, sha256)
        done = Imported(source, name)
        with index.transaction() as db:
            size = (archive.raw / name).stat().st_size
            done.captures, done.skipped = index_entries(db, index, name, size, sha256, entries)
    return done


_SKIP = insert_ignore_sql("import_skips", ("warc_file", "offset", "record_type", "url", "reason"))


def index_entries(
    db: Any, index: Index, name: str, size: int, sha256: str, entries: list[dict[str, Any]]
) -> tuple[list[Capture], list[Skipped]]:
    """Index an imported file's scanned records inside `db`'s transaction: its `warc_files` row,
    a capture for each web page, the other records as skipped with why. `archive import` and
    `archive reindex` both index an imported file through this, so they give the same ids."""
    db.execute(
        "INSERT INTO warc_files (name, origin, size, closed, sha256) VALUES (?, 'imported', ?, 1, ?)",
        (name, size, sha256),
    )
    captures: list[Capture] = []
    skipped: list[Skipped] = []
    by_record: dict[str, Capture] = {}
    skipped_ids: set[str] = set()
    for entry in entries:
        why = entry["skip"]
        if why is None and entry["type"] == "revisit" and entry["refers_to"] in skipped_ids:
            why = "repeats a skipped record"
        if why is not None:
            skipped_ids.add(entry["record_id"])
            item = Skipped(entry["url"], entry["type"], entry["offset"], why)
            db.execute(
                _SKIP,
                (name, item.offset, item.record_type, item.url, item.reason),
            )
            skipped.append(item)
            continue
        capture = _capture(entry, name, by_record, index, db)
        Index.insert(db, capture)
        by_record[entry["record_id"]] = capture
        captures.append(capture)
    return captures, skipped


def _skipped_in(index: Index, name: str) -> list[Skipped]:
    rows = index.query(
        'SELECT url, record_type, "offset", reason FROM import_skips WHERE warc_file = ? ORDER BY "offset"',
        (name,),
    )
    return [Skipped(row["url"], row["record_type"], row["offset"], row["reason"]) for row in rows]


def _capture(
    entry: dict[str, Any], name: str, by_record: dict[str, Capture], index: Index, db: Any
) -> Capture:
    record_id = entry["record_id"]
    cid = capture_id(record_id)
    if db.execute("SELECT 1 FROM captures WHERE id = ?", (cid,)).fetchone():
        cid = capture_id(f"{record_id} {name}")  # the same record id in two files
    revisit_of: str | None = None
    sha = entry["payload_sha256"]
    if entry["type"] == "revisit":
        original = by_record.get(entry["refers_to"] or "") or (
            index.by_record_id(entry["refers_to"]) if entry["refers_to"] else None
        )
        if original is None and entry["payload_digest"] and entry["refers_to_uri"]:
            original = index.with_digest(canonicalize_url(entry["refers_to_uri"]), entry["payload_digest"])
        if original is None and entry["payload_digest"]:
            original = next(
                (c for c in by_record.values() if c.payload_digest == entry["payload_digest"]), None
            )
        if original is not None:
            revisit_of, sha = original.id, original.payload_sha256
    return Capture(
        id=cid,
        url=entry["url"],
        canonical_url=entry["canonical_url"],
        captured_at=entry["captured_at"],
        status=entry["status"],
        mime=entry["mime"],
        payload_sha256=sha,
        payload_digest=entry["payload_digest"],
        warc_file=name,
        offset=entry["offset"],
        length=entry["length"],
        revisit_of=revisit_of,
        kind="imported",
        record_id=record_id,
        content_type=entry["content_type"],
        etag=entry["etag"],
        last_modified=entry["last_modified"],
    )
