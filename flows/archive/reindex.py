"""`archive reindex`: rebuild the archive index from the WARC files alone, with the same capture ids
(raw/index.sqlite, or the shared database's index tables when INCIDENTS_DATABASE_URL is set).

The WARC files hold everything a capture's index row says (capture ids are derived from the
WARC-Record-ID, see warc.capture_id): a fetch is its request, response (or revisit) and metadata
records, the metadata naming the canonical URL, the URL first asked for, the payload's sha256
and the capture it revisits; a saved page is a resource (or revisit) record of its own; an
imported file is indexed again as `archive import` indexed it. What lives only in the index is
carried over from the old one when it can still be read: link-rot checks and saved pages' local
paths. The new index is built beside the old one under raw/.lock and moved into place at the end
(the old one, if any, is kept as index.sqlite.replaced-STAMP); a rebuild that fails leaves
raw/ as it was.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from filelock import FileLock
from warcio.archiveiterator import ArchiveIterator

from flows.archive.capture import Capture, Kind
from flows.archive.index import INDEX_NAME, UPSERT_CHECK, Index, warc_files_in
from flows.archive.warc import IMPORTED_DIR, WARC_DIR, capture_id, parse_warc_fields, sha256_file, writer_of
from flows.fetch.content import media_type, sniff
from flows.fetch.urls import canonicalize_url
from flows.store.atomic import fsync_dir

_SERVER_NOT_MODIFIED = "server-not-modified"
_HEAD = 4096


@dataclass
class Rebuilt:
    """What a rebuild found: files, captures by kind, skipped imported records, what could not be
    read (file: why), what was carried over from the old index, and where that index went."""

    files: int = 0
    captures: dict[str, int] = field(default_factory=dict)
    skipped: int = 0
    problems: list[str] = field(default_factory=list)
    carried: dict[str, int] = field(default_factory=dict)
    old_index: str | None = None  # where the replaced index was kept, relative to raw/
    old_readable: bool = False

    @property
    def total(self) -> int:
        return sum(self.captures.values())

    def as_dict(self) -> dict[str, object]:
        return {
            "files": self.files,
            "captures": self.total,
            "by_kind": dict(sorted(self.captures.items())),
            "skipped": self.skipped,
            "problems": self.problems,
            "carried_over": self.carried,
            "old_index": self.old_index,
        }


@dataclass
class _Record:
    """One record of a file we wrote, as much as the rebuild needs of it."""

    rec_type: str
    record_id: str
    url: str
    date: str
    offset: int
    length: int
    headers: Any  # warcio StatusAndHeaders of the WARC head
    http: Any  # of the HTTP head, or None
    payload_sha256: str | None = None
    head: bytes = b""
    fields: dict[str, list[str]] = field(default_factory=dict)  # a metadata record's


def _read_written(path: Path, name: str, problems: list[str]) -> tuple[list[_Record], int, bool]:
    """The records of a file we wrote; the end of the last whole record; whether all read."""
    records: list[_Record] = []
    end = 0
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh)
        try:
            for record in it:
                rec_type = record.rec_type
                sha: str | None = None
                head = b""
                body = b""
                if rec_type in ("response", "resource", "metadata"):
                    digest = hashlib.sha256()
                    stream = record.content_stream()
                    while chunk := stream.read(1 << 20):
                        digest.update(chunk)
                        if rec_type == "metadata":
                            body += chunk
                        elif len(head) < _HEAD:
                            head += chunk[: _HEAD - len(head)]
                    sha = digest.hexdigest()
                it.read_to_end(record)
                headers = record.rec_headers
                item = _Record(
                    rec_type,
                    headers.get_header("WARC-Record-ID") or "",
                    headers.get_header("WARC-Target-URI") or "",
                    headers.get_header("WARC-Date") or "",
                    it.get_record_offset(),
                    it.get_record_length(),
                    headers,
                    record.http_headers,
                    sha,
                    head,
                    parse_warc_fields(body) if rec_type == "metadata" else {},
                )
                records.append(item)
                end = item.offset + item.length
        except Exception as exc:  # noqa: BLE001 - zlib, EOF, ArchiveLoadFailed: whatever the damage looks like
            why = type(exc).__name__
        else:
            why = "a record cut short"
    size = path.stat().st_size
    if end < size:
        problems.append(
            f"{name}: {size - end} bytes after offset {end} cannot be read ({why}) and are not indexed: "
            "an interrupted write (the next append cuts it) or damage (`incidents archive verify` tells)"
        )
        return records, end, False
    return records, end, True


def _one(fields: dict[str, list[str]], key: str) -> str | None:
    values = fields.get(key)
    return values[0] if values else None


def _http_header(lines: list[str], name: str) -> str | None:
    lowered = name.lower()
    for line in lines:
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() == lowered:
            return value.strip()
    return None


def _fetch_capture(record: _Record, meta: _Record, index: Index) -> Capture:
    """The capture of one fetch, as Archive.record_fetch indexed it."""
    fields = meta.fields
    outcome = _one(fields, "outcome") or ""
    revisit_of = _one(fields, "revisit_of")
    previous = index.get(revisit_of) if revisit_of else None
    canonical = _one(fields, "canonical_url") or canonicalize_url(record.url)
    final_url = _one(fields, "final_url") or record.url
    http = record.http
    kind: Kind
    if outcome == "unchanged" or _SERVER_NOT_MODIFIED in (record.headers.get_header("WARC-Profile") or ""):
        kind = "unchanged"
        lines = fields.get("http_header", [])
        status_line = _one(fields, "http_status") or ""
        status = int(status_line.split()[0]) if status_line[:3].isdigit() else None
        content_type = _http_header(lines, "content-type")
        etag = _http_header(lines, "etag") or (previous.etag if previous else None)
        modified = _http_header(lines, "last-modified") or (previous.last_modified if previous else None)
        sha = previous.payload_sha256 if previous else None
        digest = previous.payload_digest if previous else None
        mime = media_type(content_type)
    else:
        kind = "revisit" if record.rec_type == "revisit" else "response"
        status = None
        with contextlib.suppress(TypeError, ValueError, AttributeError):
            status = int(http.get_statuscode())
        content_type = http.get_header("Content-Type") if http is not None else None
        etag = http.get_header("ETag") if http is not None else None
        modified = http.get_header("Last-Modified") if http is not None else None
        sha = _one(fields, "payload_sha256")
        digest = record.headers.get_header("WARC-Payload-Digest")
        mime = media_type(content_type)
        if mime is None:
            mime = sniff(record.head) if kind == "response" else (previous.mime if previous else None)
    asked = _one(fields, "requested_url")
    return Capture(
        id=capture_id(record.record_id),
        url=final_url,
        canonical_url=canonical,
        captured_at=record.date,
        status=status,
        mime=mime,
        payload_sha256=sha,
        payload_digest=digest,
        warc_file="",
        offset=record.offset,
        length=record.length,
        revisit_of=revisit_of,
        kind=kind,
        record_id=record.record_id,
        content_type=content_type,
        etag=etag,
        last_modified=modified,
        requested_url=canonicalize_url(asked) if asked and asked != final_url else None,
    )


def _saved_capture(record: _Record, index: Index) -> Capture:
    """The capture of a saved page, as Archive.store_resource indexed it."""
    url = record.url
    canonical = canonicalize_url(url) if "://" in url else url
    if record.rec_type == "resource":
        content_type = record.headers.get_header("Content-Type")
        return Capture(
            id=capture_id(record.record_id),
            url=url,
            canonical_url=canonical,
            captured_at=record.date,
            status=None,
            mime=media_type(content_type),
            payload_sha256=record.payload_sha256,
            payload_digest=record.headers.get_header("WARC-Payload-Digest"),
            warc_file="",
            offset=record.offset,
            length=record.length,
            revisit_of=None,
            kind="resource",
            record_id=record.record_id,
            content_type=content_type,
        )
    refers = record.headers.get_header("WARC-Refers-To")
    earlier = index.by_record_id(refers) if refers else None
    return Capture(
        id=capture_id(record.record_id),
        url=url,
        canonical_url=canonical,
        captured_at=record.date,
        status=None,
        mime=earlier.mime if earlier else None,
        payload_sha256=earlier.payload_sha256 if earlier else None,
        payload_digest=record.headers.get_header("WARC-Payload-Digest"),
        warc_file="",
        offset=record.offset,
        length=record.length,
        revisit_of=earlier.id if earlier else None,
        kind="revisit",
        record_id=record.record_id,
        content_type=earlier.content_type if earlier else None,
    )


def _hop_capture(record: _Record) -> Capture:
    """A redirect hop's capture, as Archive.record_fetch indexed it (kind `redirect`)."""
    status = None
    with contextlib.suppress(TypeError, ValueError, AttributeError):
        status = int(record.http.get_statuscode())
    content_type = record.http.get_header("Content-Type") if record.http is not None else None
    return Capture(
        id=capture_id(record.record_id),
        url=record.url,
        canonical_url=canonicalize_url(record.url),
        captured_at=record.date,
        status=status,
        mime=media_type(content_type),
        payload_sha256=None,
        payload_digest=record.headers.get_header("WARC-Payload-Digest"),
        warc_file="",
        offset=record.offset,
        length=record.length,
        revisit_of=None,
        kind="redirect",
        record_id=record.record_id,
        content_type=content_type,
    )


def _hops_of(metadata: dict[str | None, _Record]) -> tuple[set[str], set[str]]:
    """The redirect hops' URLs and robots.txt exchanges' record ids the fetches' metadata names."""
    hops: set[str] = set()
    robots: set[str] = set()
    for meta in metadata.values():
        for line in meta.fields.get("redirects", []):
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                hops.add(str(json.loads(line)["url"]))
        robots.update(meta.fields.get("robots_record", []))
    return hops, robots


def _written_captures(records: list[_Record], index: Index) -> Iterator[Capture]:
    """Captures of a file we wrote, in file order. A fetch counts once its metadata record is
    there (the last of its three, written in the same commit), and so do the redirect hops it
    lists (a response and its request each, no metadata of their own; robots.txt exchanges are
    archived the same way but not indexed); a saved page is a lone resource or revisit record,
    one no request record points at."""
    requests = {r.headers.get_header("WARC-Concurrent-To"): r for r in records if r.rec_type == "request"}
    metadata = {r.headers.get_header("WARC-Concurrent-To"): r for r in records if r.rec_type == "metadata"}
    hops, robots = _hops_of(metadata)
    for record in records:
        if record.rec_type not in ("response", "resource", "revisit"):
            continue
        if record.record_id in requests:
            meta = metadata.get(record.record_id)
            if meta is not None:
                yield _fetch_capture(record, meta, index)
            elif record.rec_type == "response" and record.url in hops and record.record_id not in robots:
                yield _hop_capture(record)
        elif record.rec_type in ("resource", "revisit"):
            yield _saved_capture(record, index)


def _order(raw: Path, names: list[str]) -> list[str]:
    """Files in the order they were first written to: ours by the stamp in their name, imported
    ones by when they were copied in (ids of records found in two files depend on it)."""

    def key(name: str) -> str:
        if name.startswith(f"{WARC_DIR}/incidents-"):
            return name.split("incidents-", 1)[1][:20]
        with contextlib.suppress(OSError):
            when = datetime.fromtimestamp((raw / name).stat().st_mtime, UTC)
            return when.strftime("%Y%m%d%H%M%S%f")
        return "~"

    return sorted(names, key=lambda name: (key(name), name))


def _index_imported(index: Index, raw: Path, name: str, done: Rebuilt) -> None:
    from flows.archive.importer import _scan, index_entries

    path = raw / name
    try:
        entries = list(_scan(path, name))
    except Exception as exc:  # noqa: BLE001 - an unreadable imported file is a problem to report
        done.problems.append(f"{name}: cannot be read ({str(exc)[:160]}); its captures are not indexed")
        return
    whole = sha256_file(path)
    prefix = Path(name).name.split("-", 1)[0]
    if len(prefix) == 12 and not whole.startswith(prefix):
        done.problems.append(f"{name}: changed since it was imported (its sha256 no longer starts {prefix})")
    with index.transaction() as db:
        captures, skipped = index_entries(db, index, name, path.stat().st_size, whole, entries)
    done.skipped += len(skipped)
    done.captures["imported"] = done.captures.get("imported", 0) + len(captures)


def _index_written(index: Index, raw: Path, name: str, newest: bool, max_bytes: int, done: Rebuilt) -> None:
    path = raw / name
    records, end, whole = _read_written(path, name, done.problems)
    frozen = not (path.stat().st_mode & 0o222)
    # Only a writer's newest file may be appended to again (its writer, or the next one on its
    # host once it is gone, cuts what lies past `end` first); the others are closed for good.
    open_for_append = newest and not frozen and end < max_bytes
    digest = sha256_file(path) if whole and not open_for_append else None
    with index.transaction() as db:
        db.execute(
            "INSERT INTO warc_files (name, origin, size, closed, sha256) VALUES (?, 'written', ?, ?, ?)",
            (name, end, int(not open_for_append), digest),
        )
        with open(path, "rb") as fh:  # each record's stored bytes, as the writer keeps them for verify
            for record in records:
                fh.seek(record.offset)
                digest = hashlib.sha256(fh.read(record.length)).hexdigest()
                Index.insert_record(
                    db, name, record.offset, record.length, record.rec_type, record.record_id, digest
                )
        for capture in _written_captures(records, index):
            placed = Capture(**{**capture.as_dict(), "warc_file": name})  # type: ignore[arg-type]
            Index.insert(db, placed)
            done.captures[placed.kind] = done.captures.get(placed.kind, 0) + 1


def _carry_over(index: Index, old: Path, done: Rebuilt) -> None:
    """What only the index knew (link checks, saved pages' local paths), from the old index."""
    try:
        source = sqlite3.connect(f"{old.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            paths = source.execute(
                "SELECT id, source_path FROM captures WHERE source_path IS NOT NULL"
            ).fetchall()
            checks = source.execute("SELECT * FROM link_checks").fetchall()
        finally:
            source.close()
    except sqlite3.Error:
        return
    done.old_readable = True
    with index.transaction() as db:
        moved = 0
        for cid, source_path in paths:
            moved += db.execute(
                "UPDATE captures SET source_path = ? WHERE id = ?", (source_path, cid)
            ).rowcount
        for row in checks:
            db.execute(UPSERT_CHECK, tuple(row))
    done.carried = {"saved page paths": moved, "link checks": len(checks)}


def _set_aside(path: Path, stamp: str) -> str | None:
    """Move the index and its WAL files out of the way (a stale -wal beside a new index would be
    replayed into it); the name the main file was kept under, relative to raw/."""
    kept = None
    for suffix in ("", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            target = path.with_name(f"{path.name}.replaced-{stamp}{suffix}")
            os.replace(part, target)
            if not suffix:
                kept = target.name
    return kept


def _replace_shared(built: Path, database_url: str, done: Rebuilt) -> None:
    """The shared database's index tables replaced by the rebuilt SQLite index's, in one
    transaction; what only the index knew (link checks, saved pages' local paths) stays."""
    from flows.store.admin import copy_table
    from flows.store.database import Database, open_component

    source = Database.open(built)
    target = open_component(database_url, "index")
    try:
        with target.transaction():
            paths = target.all("SELECT id, source_path FROM captures WHERE source_path IS NOT NULL")
            checks = target.one("SELECT count(*) FROM link_checks")
            for table in ("records", "import_skips", "captures", "warc_files"):
                target.execute(f"DELETE FROM {table}")
            for table in ("warc_files", "captures", "import_skips", "records"):
                copy_table(source, target, table)
            moved = sum(
                target.execute("UPDATE captures SET source_path = ? WHERE id = ?", (row[1], row[0])).rowcount
                for row in paths
            )
    finally:
        source.close()
        target.close()
    done.old_readable = True
    done.carried = {"saved page paths": moved, "link checks": int(checks[0]) if checks else 0}


def reindex(raw: Path, max_bytes: int, database_url: str = "") -> Rebuilt:
    """Rebuild raw/index.sqlite from raw/'s WARC files; the old index is kept beside it. With
    `database_url`, the shared database's index is rebuilt (in one transaction) instead."""
    done = Rebuilt()
    target = raw / INDEX_NAME
    tmp = raw / f".{INDEX_NAME}.rebuild"
    with FileLock(str(raw / ".lock"), timeout=600):
        for suffix in ("", "-wal", "-shm", "-journal"):
            tmp.with_name(tmp.name + suffix).unlink(missing_ok=True)
        names = warc_files_in(raw)
        for name in [n for n in names if not n.startswith((f"{WARC_DIR}/", f"{IMPORTED_DIR}/"))]:
            done.problems.append(
                f"{name}: not under {WARC_DIR}/ or {IMPORTED_DIR}/, left out; "
                "`incidents archive import` it if it belongs to the archive"
            )
            names.remove(name)
        # Each writer (host and process) appends only to its newest file: one per writer.
        newest_of = {writer_of(n): n for n in sorted(n for n in names if n.startswith(f"{WARC_DIR}/"))}
        newest = set(newest_of.values())
        index = Index(tmp, fresh=True)
        try:
            for name in _order(raw, names):
                done.files += 1
                if name.startswith(f"{IMPORTED_DIR}/"):
                    _index_imported(index, raw, name, done)
                else:
                    _index_written(index, raw, name, name in newest, max_bytes, done)
            if target.exists() and not database_url:
                _carry_over(index, target, done)
            index.checkpoint()
        finally:
            index.close()
        if database_url:
            _replace_shared(tmp, database_url, done)
            for suffix in ("", "-wal", "-shm"):
                tmp.with_name(tmp.name + suffix).unlink(missing_ok=True)
            return done
        stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
        done.old_index = _set_aside(target, stamp)
        for suffix in ("-wal", "-shm"):
            tmp.with_name(tmp.name + suffix).unlink(missing_ok=True)
        os.replace(tmp, target)
        fsync_dir(raw)
    return done


__all__ = ["Rebuilt", "reindex"]
