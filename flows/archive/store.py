"""The Archive: writes fetches and saved pages to WARC, indexes them, reads them back."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Collection, Iterator
from datetime import datetime
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING

from flows.archive.capture import Capture, Kind
from flows.archive.index import Index
from flows.archive.reader import read_content
from flows.archive.warc import (
    Batch,
    WarcAppender,
    Written,
    capture_id,
    http_request_headers,
    http_response_headers,
    metadata_record,
    new_record_id,
    sha1_base32,
    warc_date,
)
from flows.fetch.content import media_type
from flows.fetch.urls import canonicalize_url
from flows.settings import Settings
from schema.errors import ArchiveError, InputError

if TYPE_CHECKING:
    from flows.archive.importer import Imported
    from flows.fetch.result import Exchange, FetchResult

# Captures that stand for a payload of their own or by reference (revisit), for `latest`.
PAYLOAD_KINDS: tuple[Kind, ...] = ("response", "revisit", "resource", "imported")


class Archive:
    """raw/: immutable WARC files plus raw/index.sqlite. Safe across threads and processes."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.raw = settings.raw_dir
        self.raw.mkdir(parents=True, exist_ok=True)
        self.index = Index(self.raw / "index.sqlite", database_url=settings.database)
        self._appender = WarcAppender(self.raw, self.index, settings.warc_max_bytes, run_info(settings))

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.index.close()

    # -- writing -----------------------------------------------------------------------------

    def record_fetch(self, result: FetchResult) -> Capture:
        """request + response (or revisit) + metadata records for one fetch; the new capture.

        An `unchanged` (304) result writes the 304 response; its capture points at the capture
        the conditional request was made against (`revisit_of`)."""
        if result.outcome == "fetched" and (result.body_path is None or not result.body_path.exists()):
            raise ArchiveError(
                f"the body of {result.final_url} is gone from {result.body_path}; fetch it again"
            )
        date = _warc_date_of(result.started_at)
        response_id = new_record_id()
        common = {"WARC-Date": date}
        if result.peer_address:
            common["WARC-IP-Address"] = result.peer_address
        http_head = http_response_headers(result.status, result.reason, result.http_version, result.headers)
        has_body = result.body_path is not None and result.outcome == "fetched"

        def build(batch: Batch) -> Capture:
            with open(result.body_path, "rb") if has_body and result.body_path else BytesIO() as body:
                b = batch.builder
                digest = sha1_base32(body)
                size = body.seek(0, 2)
                body.seek(0)
                earlier = None
                if result.outcome == "fetched":
                    earlier = self.index.with_digest(result.canonical_url, digest)
                headers = {**common, "WARC-Record-ID": response_id}
                revisit_of: str | None = None
                kind: Kind
                if result.outcome == "unchanged":
                    kind = "unchanged"
                    confirmed = result.previous
                    revisit_of = confirmed.id if confirmed is not None else None
                    # No HTTP head in the block: replay tools (pywb) then serve the confirmed
                    # capture's head and payload, where the 304's head made them serve an empty
                    # 304. The 304's status and headers are kept in the metadata record.
                    record = b.create_warc_record(
                        result.final_url,
                        "revisit",
                        warc_headers_dict={**headers, **not_modified_headers(confirmed)},
                    )
                elif earlier is not None:
                    kind, revisit_of = "revisit", earlier.id
                    record = b.create_revisit_record(
                        result.final_url,
                        digest,
                        earlier.url,
                        earlier.captured_at,
                        http_headers=http_head,
                        warc_headers_dict={**headers, "WARC-Refers-To": earlier.record_id},
                    )
                else:
                    kind = "response"
                    record = b.create_warc_record(
                        result.final_url,
                        "response",
                        payload=body,
                        length=size,
                        http_headers=http_head,
                        warc_headers_dict={**headers, "WARC-Payload-Digest": digest},
                    )
                robots_ids = [_write_exchange(batch, ex)[1] for ex in result.robots_exchanges]
                for hop in result.redirects:
                    if hop.exchange is not None:
                        Index.insert(batch.db, _hop_capture(batch, hop.exchange))
                request = b.create_warc_record(
                    result.final_url,
                    "request",
                    http_headers=http_request_headers(result.request_line, result.request_headers),
                    warc_headers_dict={**common, "WARC-Concurrent-To": response_id},
                )
                batch.write(request)
                where = batch.write(record)
                cid = capture_id(response_id)
                fields: dict[str, object] = {
                    "capture": cid,
                    "outcome": result.outcome
                    if kind != "revisit"
                    else "fetched (payload identical to an earlier capture)",
                    "requested_url": result.url,
                    "final_url": result.final_url,
                    "canonical_url": result.canonical_url,
                    "rel_canonical": result.rel_canonical,
                    "redirects": [hop.as_dict() for hop in result.redirects],
                    "robots": result.robots.as_dict() if result.robots else None,
                    "robots_record": robots_ids or None,
                    "timings": result.timings,
                    "attempts": result.attempts,
                    "payload_sha256": result.payload_sha256,
                    "decoded_size": result.decoded_size,
                    "wire_size": result.body_size,
                    "revisit_of": revisit_of,
                }
                if kind == "unchanged":
                    fields["http_status"] = f"{result.status} {result.reason}".strip()
                    fields["http_header"] = [f"{k}: {v}" for k, v in result.headers]
                batch.write(
                    metadata_record(
                        b, result.final_url, fields, {**common, "WARC-Concurrent-To": response_id}
                    )
                )
                previous = result.previous
                capture = Capture(
                    id=cid,
                    url=result.final_url,
                    canonical_url=result.canonical_url,
                    captured_at=date,
                    status=result.status,
                    mime=result.mime or media_type(result.content_type),
                    payload_sha256=result.payload_sha256
                    if kind != "unchanged"
                    else (previous.payload_sha256 if previous else None),
                    payload_digest=digest
                    if kind != "unchanged"
                    else (previous.payload_digest if previous else None),
                    warc_file=where.warc_file,
                    offset=where.offset,
                    length=where.length,
                    revisit_of=revisit_of,
                    kind=kind,
                    record_id=response_id,
                    content_type=result.content_type,
                    etag=result.header("etag")
                    or (previous.etag if previous and kind == "unchanged" else None),
                    last_modified=result.header("last-modified")
                    or (previous.last_modified if previous and kind == "unchanged" else None),
                    requested_url=canonicalize_url(result.url) if result.url != result.final_url else None,
                )
                Index.insert(batch.db, capture)
                return capture

        earliest = min([date, *(_warc_date_of(ex.started_at) for ex in result.robots_exchanges)])
        earliest = min(
            [earliest, *(_warc_date_of(h.exchange.started_at) for h in result.redirects if h.exchange)]
        )
        return self._appender.submit(build, date=earliest)

    def store_resource(
        self, data: bytes, *, url: str, content_type: str, source_path: str | None = None
    ) -> Capture:
        """A saved page as a WARC resource record (a revisit if the same URL has these bytes).

        Archived under `url` when it is the page's web address (the curator's `--url`); a local
        file's URL would put a path of this machine into the WARC, the WACZ and its page list,
        so such a page is archived under `urn:sha256:<hex>` of its bytes instead (stable: the
        same bytes, the same name). The local path stays in the index only (`source_path`)."""
        if not url.lower().startswith(("http://", "https://", "urn:")):
            url = saved_page_urn(data)
        canonical = canonicalize_url(url) if "://" in url else url
        payload = BytesIO(data)
        digest = sha1_base32(payload)
        record_id = new_record_id()
        date = warc_date()

        def build(batch: Batch) -> Capture:
            b = batch.builder
            earlier = self.index.with_digest(canonical, digest)
            headers = {"WARC-Date": date, "WARC-Record-ID": record_id}
            if earlier is not None:
                kind: Kind = "revisit"
                record = b.create_revisit_record(
                    url,
                    digest,
                    earlier.url,
                    earlier.captured_at,
                    warc_headers_dict={**headers, "WARC-Refers-To": earlier.record_id},
                )
            else:
                kind = "resource"
                record = b.create_warc_record(
                    url,
                    "resource",
                    payload=payload,
                    length=len(data),
                    warc_content_type=content_type,
                    warc_headers_dict={**headers, "WARC-Payload-Digest": digest},
                )
            where = batch.write(record)
            capture = Capture(
                id=capture_id(record_id),
                url=url,
                canonical_url=canonical,
                captured_at=date,
                status=None,
                mime=media_type(content_type),
                payload_sha256=hashlib.sha256(data).hexdigest(),
                payload_digest=digest,
                warc_file=where.warc_file,
                offset=where.offset,
                length=where.length,
                revisit_of=earlier.id if earlier else None,
                kind=kind,
                record_id=record_id,
                content_type=content_type,
                source_path=source_path,
            )
            Index.insert(batch.db, capture)
            return capture

        return self._appender.submit(build, date=date)

    def import_warc(self, path: Path | str) -> list[Capture]:
        """Index the captures of a WARC made elsewhere (copied into raw/imported/ first)."""
        from flows.archive.importer import import_warc

        return list(import_warc(self, Path(path)))

    def import_file(self, path: Path | str) -> Imported:
        """Import one WARC file: its captures, the records skipped and why, or `already`."""
        from flows.archive.importer import import_file

        return import_file(self, Path(path))

    def iter_import(self, path: Path | str) -> Iterator[Capture]:
        """Like import_warc, yielding each capture as it is indexed."""
        from flows.archive.importer import import_warc

        yield from import_warc(self, Path(path))

    # -- reading -----------------------------------------------------------------------------

    def get(self, capture_id: str) -> Capture:
        capture = self.index.get(capture_id)
        if capture is None:
            raise ArchiveError(f"no capture {capture_id} in {self.raw}; `incidents archive list` shows them")
        return capture

    def latest(self, url_or_canonical: str) -> Capture | None:
        """The newest payload-bearing capture of a URL (as given, or its canonical form)."""
        found = self.index.latest(url_or_canonical, kinds=PAYLOAD_KINDS)
        if found is None and "://" in url_or_canonical:
            found = self.index.latest(canonicalize_url(url_or_canonical), kinds=PAYLOAD_KINDS)
        return found

    def latest_many(self, urls: Collection[str]) -> dict[str, Capture | None]:
        """`latest` of each URL, in two queries a few hundred URLs rather than one or two each."""
        canonical = {url: canonicalize_url(url) if "://" in url else url for url in urls}
        found = self.index.latest_many({*canonical, *canonical.values()}, kinds=PAYLOAD_KINDS)
        return {url: found.get(url) or found.get(canonical[url]) for url in canonical}

    def captures(self, *, url_prefix: str | None = None) -> list[Capture]:
        return self.index.captures(url_prefix=url_prefix)

    def resolve(self, id_or_url: str) -> Capture:
        """A capture id, or a URL meaning its latest capture."""
        if id_or_url.startswith("c-"):
            return self.get(id_or_url)
        found = self.latest(id_or_url)
        if found is None:
            raise InputError(
                f"nothing archived for {id_or_url}; `incidents archive list --url` shows what is"
            )
        return found

    def payload_capture(self, capture_id: str) -> Capture:
        """The capture that holds the bytes: itself, or what a revisit/unchanged points at."""
        capture = self.get(capture_id)
        seen = {capture.id}
        # An imported revisit has no payload sha256 of its own until its original is found.
        while capture.kind in ("revisit", "unchanged") or (
            capture.kind == "imported" and (capture.revisit_of is not None or capture.payload_sha256 is None)
        ):
            if capture.revisit_of is None:
                raise ArchiveError(
                    f"capture {capture.id} is a revisit of a record that is not in raw/; "
                    "import the WARC that holds the original"
                )
            capture = self.get(capture.revisit_of)
            if capture.id in seen:
                raise ArchiveError(f"revisit loop at capture {capture.id}")
            seen.add(capture.id)
        return capture

    def read_payload(self, capture_id: str) -> bytes:
        """The HTTP payload, de-chunked and content-decoded (a resource record: its bytes)."""
        holder = self.payload_capture(capture_id)
        return read_content(self.raw / holder.warc_file, holder.offset)


def _write_exchange(batch: Batch, ex: Exchange) -> tuple[Written, str]:
    """request + response records for one exchange made on the way (a redirect hop, robots.txt)."""
    b = batch.builder
    response_id = new_record_id()
    common = {"WARC-Date": _warc_date_of(ex.started_at)}
    if ex.peer:
        common["WARC-IP-Address"] = ex.peer
    body = BytesIO(ex.body)
    headers = {**common, "WARC-Record-ID": response_id, "WARC-Payload-Digest": sha1_base32(body)}
    if ex.truncated:
        headers["WARC-Truncated"] = "length"
    response = b.create_warc_record(
        ex.url,
        "response",
        payload=body,
        length=len(ex.body),
        http_headers=http_response_headers(ex.status, ex.reason, ex.http_version, ex.headers),
        warc_headers_dict=headers,
    )
    request = b.create_warc_record(
        ex.url,
        "request",
        http_headers=http_request_headers(ex.request_line, ex.request_headers),
        warc_headers_dict={**common, "WARC-Concurrent-To": response_id},
    )
    batch.write(request)
    return batch.write(response), response_id


def _hop_capture(batch: Batch, ex: Exchange) -> Capture:
    """A redirect hop, archived and indexed (kind `redirect`): replay tools serve the redirect."""
    where, record_id = _write_exchange(batch, ex)
    content_type = next((v for k, v in ex.headers if k.lower() == "content-type"), None)
    return Capture(
        id=capture_id(record_id),
        url=ex.url,
        canonical_url=canonicalize_url(ex.url),
        captured_at=_warc_date_of(ex.started_at),
        status=ex.status,
        mime=media_type(content_type),
        payload_sha256=None,  # a redirect's body is not a page; its record's digest covers it
        payload_digest=sha1_base32(BytesIO(ex.body)),
        warc_file=where.warc_file,
        offset=where.offset,
        length=where.length,
        revisit_of=None,
        kind="redirect",
        record_id=record_id,
        content_type=content_type,
    )


def saved_page_urn(data: bytes) -> str:
    """The stable name of a saved page given without its web address."""
    return "urn:sha256:" + hashlib.sha256(data).hexdigest()


SERVER_NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"


def not_modified_headers(confirmed: Capture | None) -> dict[str, str]:
    """WARC headers of a 304's revisit record (WARC 1.1, 6.7.3): the profile, and the capture
    the conditional request was made against, which the server confirmed unchanged."""
    headers = {"WARC-Profile": SERVER_NOT_MODIFIED}
    if confirmed is not None:
        headers["WARC-Refers-To"] = confirmed.record_id
        headers["WARC-Refers-To-Target-URI"] = confirmed.url
        headers["WARC-Refers-To-Date"] = confirmed.captured_at
        if confirmed.payload_digest:
            headers["WARC-Payload-Digest"] = confirmed.payload_digest
    return headers


def run_info(settings: Settings) -> dict[str, str]:
    """What this run's warcinfo records say beyond the software: operator, contact, crawl rules."""
    return {
        "operator": settings.archive_operator,
        "contact": settings.archive_contact or settings.user_agent_contact,
        "http-header-user-agent": settings.user_agent,
        "robots": "obey",  # robots.txt is read per host and obeyed on every hop (flows/fetch)
        "description": "Incident postmortems fetched for review by incident-ingest",
    }


def _warc_date_of(started_at: str) -> str:
    """The fetch's start time as WARC-Date: the capture is dated when it was asked for."""
    with contextlib.suppress(ValueError):
        return warc_date(datetime.fromisoformat(started_at.replace("Z", "+00:00")))
    return warc_date()
