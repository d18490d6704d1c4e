"""The polite fetcher: robots.txt, per-host pacing, retries, bounds, the address guard."""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import os
import random
import ssl
import tempfile
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urldefrag, urljoin, urlsplit

import httpcore
import httpx

from flows.clock import utc_now
from flows.fetch.body import BodySink, BodyTooLarge
from flows.fetch.content import ACCEPTED_TYPES, media_type, sniff
from flows.fetch.errors import HTTPStatusFailure, SourceGone
from flows.fetch.guard import AddressGuard, GuardedBackend, QuietTLSSocket, Resolver
from flows.fetch.politeness import HostGate
from flows.fetch.pools import OriginPools
from flows.fetch.result import Exchange, FetchResult, Hop
from flows.fetch.retry import RETRY_STATUSES, backoff_delay, parse_retry_after
from flows.fetch.robots import ROBOTS_MAX_BYTES, RobotsCache
from flows.fetch.urls import canonicalize_url, find_rel_canonical, host_key
from flows.settings import Settings
from schema.errors import FetchError, SkipSource

if TYPE_CHECKING:
    from flows.archive.capture import Capture

log = logging.getLogger(__name__)

ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,text/markdown;q=0.9,*/*;q=0.1"
GONE_STATUSES = frozenset({404, 410})
ROBOTS_MAX_REDIRECTS = 5  # RFC 9309 2.3.1.2
# Keep-alive: one idle connection per host, for this many hosts (see flows/fetch/pools.py)
IDLE_HOSTS = 64
KEEPALIVE_SECONDS = 5.0


class _GuardedTransport(httpx.HTTPTransport):
    """httpx's transport over connection pools (one per origin) whose sockets come from the
    GuardedBackend.

    httpx does not expose httpcore's `network_backend`, so we replace the pool it made; the
    test tests/flows/fetch/test_guard.py fails if a future httpx stops using `_pool`."""

    def __init__(self, guard: AddressGuard, concurrency: int, extra_ca: str = "") -> None:
        # HTTPTransport.__init__ would only build a pool we replace (and load the CA bundle again).
        backend = GuardedBackend(guard)
        context = _ssl_context(extra_ca)

        def origin_pool() -> httpcore.ConnectionPool:
            # One request in flight per host (HostGate); robots.txt and a page may overlap.
            return httpcore.ConnectionPool(
                ssl_context=context,
                max_connections=max(2, concurrency),
                max_keepalive_connections=1,
                keepalive_expiry=KEEPALIVE_SECONDS,
                network_backend=backend,
            )

        self._pool = OriginPools(origin_pool, IDLE_HOSTS)  # type: ignore[assignment]


@functools.cache
def _ssl_context(extra_ca: str = "") -> ssl.SSLContext:
    """Loading the CA bundle takes ~0.1 s; one context serves every Fetcher and thread."""
    context = httpx.create_ssl_context(trust_env=False)
    context.sslsocket_class = QuietTLSSocket
    if extra_ca:
        try:
            context.load_verify_locations(cafile=extra_ca)
        except (OSError, ssl.SSLError) as exc:
            raise FetchError(
                f"INCIDENTS_CA_BUNDLE={extra_ca} cannot be loaded ({exc}); give a PEM file"
            ) from exc
    return context


class _NoCookies(httpx.Cookies):
    """A cookie jar that is handed every response and keeps nothing of it."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


class _Transient(Exception):
    """A failure worth retrying (connect error, timeout, dropped connection)."""


@dataclass
class _Deadline:
    """Per-URL call state: when its time is up, and which media types it takes."""

    at: float
    total: float
    accept: frozenset[str] = ACCEPTED_TYPES

    def remaining(self) -> float:
        return self.at - time.monotonic()


@dataclass
class _Exchange:
    url: str
    status: int
    reason: str
    http_version: str
    headers: list[tuple[str, str]]
    request_line: str
    request_headers: list[tuple[str, str]]
    peer: str | None
    started_at: str = ""
    wire: bytes = b""  # a redirect's or robots.txt's body as sent, for the archive
    truncated: bool = False
    sink: BodySink | None = None
    body_path: Path | None = None
    memory: bytes = b""
    waited: float = 0.0
    elapsed: float = 0.0
    mime: str | None = None
    attempts: int = 1
    extra: dict[str, float] = field(default_factory=dict)

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((v for k, v in self.headers if k.lower() == lowered), None)

    def for_archive(self) -> Exchange:
        return Exchange(
            url=self.url,
            status=self.status,
            reason=self.reason,
            http_version=self.http_version,
            headers=self.headers,
            request_line=self.request_line,
            request_headers=self.request_headers,
            peer=self.peer,
            started_at=self.started_at,
            body=self.wire,
            truncated=self.truncated,
        )


BodyMode = Literal["file", "memory", "none"]


class Fetcher:
    """Fetches one URL at a time per host, from as many threads as you like.

    Use as a context manager; `fetch()` returns a FetchResult or raises SkipSource (robots.txt,
    content type) or FetchError (with the URL and the cause in the message)."""

    def __init__(self, settings: Settings, *, resolver: Resolver | None = None) -> None:
        self._s = settings
        self._guard = AddressGuard(settings.allow_hosts, resolver)
        self._client = httpx.Client(
            transport=_GuardedTransport(self._guard, settings.concurrency, settings.ca_bundle),
            follow_redirects=False,
            trust_env=False,  # an environment proxy would connect for us, past the guard
            # No cookies kept: each fetch stands alone (reproducible, and no tracking across sites).
            cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
            headers={"User-Agent": settings.user_agent, "Accept": ACCEPT, "Accept-Encoding": "gzip, deflate"},
        )
        # The policy above refuses every cookie, but httpx still hands each response to the jar,
        # which rebuilds it as urllib's request and response first: 0.05 ms a request, a tenth of
        # a 304. A jar that takes nothing skips that (private, like _pool; should httpx rename it,
        # the policy still keeps nothing, and tests/flows/fetch/test_politeness.py says so).
        self._client._cookies = _NoCookies()
        self._gate = HostGate(settings.concurrency)
        self._robots = RobotsCache(self._load_robots, settings.user_agent)
        # robots.txt exchanges not yet handed to a fetch's result (for the archive), by host
        self._robots_made: dict[str, list[Exchange]] = {}
        self._robots_lock = threading.Lock()
        self._tmp = settings.raw_dir / ".tmp"
        self._rng = random.Random()
        _sweep_stale_bodies(self._tmp)

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    # -- the public call -------------------------------------------------------------------

    def fetch(
        self, url: str, *, conditional: Capture | None = None, accept: Collection[str] | None = None
    ) -> FetchResult:
        """`accept`: media types to take instead of pages (HTML, XHTML, text, Markdown), e.g.
        feeds and sitemaps for discovery."""
        started = time.monotonic()
        started_at = utc_now()
        deadline = _Deadline(
            started + self._s.total_timeout,
            self._s.total_timeout,
            frozenset(accept) if accept is not None else ACCEPTED_TYPES,
        )
        headers: dict[str, str] = {}
        if conditional is not None:
            if getattr(conditional, "etag", None):
                headers["If-None-Match"] = str(conditional.etag)
            if getattr(conditional, "last_modified", None):
                headers["If-Modified-Since"] = str(conditional.last_modified)
        hops: list[Hop] = []
        # Exact URLs, not canonical ones: a redirect that only strips utm_* is not a loop.
        seen = {urldefrag(url).url}
        current = urldefrag(url).url  # a fragment is never sent, nor archived in WARC-Target-URI
        robots_time = 0.0
        robots_exchanges: list[Exchange] = []
        while True:
            _check_scheme(current)
            t = time.monotonic()
            decision = self._robots.decide(current)
            robots_time += time.monotonic() - t
            if not decision.allowed:
                raise SkipSource(
                    decision.reason if "disallows" in decision.reason else f"{decision.reason}: {current}"
                )
            with self._robots_lock:
                robots_exchanges += self._robots_made.pop(host_key(current), [])
            interval = max(self._s.min_interval, decision.crawl_delay or 0.0)
            ex = self._with_retries(current, headers, interval, deadline, "file")
            location = ex.header("location")
            if 300 <= ex.status < 400 and ex.status != 304 and location:
                target = urldefrag(urljoin(current, location.strip())).url
                hops.append(Hop(current, ex.status, target, ex.for_archive()))
                chain = " -> ".join([h.url for h in hops] + [target])
                if urldefrag(target).url in seen:
                    raise FetchError(f"redirect loop: {chain}")
                if len(hops) > self._s.max_redirects:
                    raise FetchError(f"more than {self._s.max_redirects} redirects: {chain}")
                seen.add(urldefrag(target).url)
                current = target
                continue
            break

        if ex.status == 304 and conditional is not None:
            outcome: Literal["fetched", "unchanged"] = "unchanged"
        elif ex.status in GONE_STATUSES:
            raise SourceGone(
                f"HTTP {ex.status} {ex.reason} from {current}: the page is gone",
                url=current,
                status=ex.status,
            )
        elif not 200 <= ex.status < 300:
            raise HTTPStatusFailure(
                f"HTTP {ex.status} {ex.reason} from {current}; not retried (only 429, 502, 503, 504 are)",
                url=current,
                status=ex.status,
            )
        else:
            outcome = "fetched"
        sink = ex.sink
        rel = find_rel_canonical(bytes(sink.head), current) if sink is not None else None
        return FetchResult(
            url=url,
            final_url=current,
            canonical_url=canonicalize_url(current),
            rel_canonical=rel,
            status=ex.status,
            reason=ex.reason,
            http_version=ex.http_version,
            headers=ex.headers,
            content_type=ex.header("content-type"),
            mime=ex.mime,
            body_path=ex.body_path,
            body_size=sink.wire_size if sink else 0,
            decoded_size=sink.decoded_size if sink else 0,
            payload_sha256=sink.decoded_sha256.hexdigest() if sink else None,
            request_line=ex.request_line,
            request_headers=ex.request_headers,
            redirects=hops,
            timings={
                "total_s": round(time.monotonic() - started, 6),
                "robots_s": round(robots_time, 6),
                "politeness_wait_s": round(ex.waited, 6),
                "last_exchange_s": round(ex.elapsed, 6),
            },
            robots=decision,
            outcome=outcome,
            started_at=started_at,
            peer_address=ex.peer,
            attempts=ex.attempts,
            previous=conditional,
            robots_exchanges=robots_exchanges,
        )

    # -- robots.txt ------------------------------------------------------------------------

    def _load_robots(self, robots_url: str) -> tuple[int, bytes]:
        deadline = _Deadline(time.monotonic() + self._s.total_timeout, self._s.total_timeout)
        current = robots_url
        for _ in range(ROBOTS_MAX_REDIRECTS + 1):
            ex = self._with_retries(current, {}, self._s.min_interval, deadline, "memory")
            with self._robots_lock:  # archived with the first fetch it allows (see fetch)
                self._robots_made.setdefault(host_key(robots_url), []).append(ex.for_archive())
            location = ex.header("location")
            if 300 <= ex.status < 400 and location:
                current = urljoin(current, location.strip())
                continue
            return ex.status, ex.memory
        return 404, b""  # RFC 9309: too many redirects counts as unavailable

    # -- one request, with retries ---------------------------------------------------------

    def _with_retries(
        self, url: str, headers: dict[str, str], interval: float, deadline: _Deadline, mode: BodyMode
    ) -> _Exchange:
        key = host_key(url)
        attempt = 0
        while True:
            retry_after: float | None = None
            status: int | None = None
            try:
                ex = self._exchange(url, headers, interval, deadline, mode)
            except _Transient as exc:
                failure = str(exc)
            else:
                if ex.status not in RETRY_STATUSES:
                    ex.attempts = attempt + 1
                    return ex
                status = ex.status
                failure = f"HTTP {ex.status} {ex.reason} from {url}"
                retry_after = parse_retry_after(ex.header("retry-after"))
            if attempt >= self._s.max_retries:
                message = f"{failure}, still failing after {attempt + 1} attempts"
                if status is not None:
                    raise HTTPStatusFailure(message, url=url, status=status)
                raise FetchError(message)
            if retry_after is not None:
                if retry_after > self._s.max_retry_after:
                    raise FetchError(
                        f"{failure}: the server asks us to come back in {retry_after:.0f}s, more than "
                        f"INCIDENTS_MAX_RETRY_AFTER ({self._s.max_retry_after:g}s); try again later"
                    )
                delay = retry_after
            else:
                delay = backoff_delay(attempt, self._s.retry_backoff, self._s.max_retry_after, self._rng)
            if delay > deadline.remaining():
                raise FetchError(
                    f"{failure}; the next retry in {delay:.1f}s would pass the {deadline.total:g}s "
                    "deadline for this URL (INCIDENTS_TOTAL_TIMEOUT)"
                )
            log.info("retrying %s in %.2fs: %s", url, delay, failure)
            self._gate.defer(key, delay)
            attempt += 1

    def _exchange(
        self, url: str, headers: dict[str, str], interval: float, deadline: _Deadline, mode: BodyMode
    ) -> _Exchange:
        s = self._s
        with self._gate.slot(host_key(url), interval) as waited:
            deadline.at += waited  # politeness waits are our choice, not the server's slowness
            left = deadline.remaining()
            if left <= 0:
                raise FetchError(f"deadline of {deadline.total:g}s passed before requesting {url}")
            timeout = httpx.Timeout(
                connect=min(s.connect_timeout, left),
                read=min(s.read_timeout, left),
                write=min(s.read_timeout, left),
                pool=left,
            )
            request = self._client.build_request("GET", url, headers=headers, timeout=timeout)
            started_at = utc_now()
            t0 = time.monotonic()
            try:
                response = self._client.send(request, stream=True)
            except httpx.HTTPError as exc:
                raise _translate(exc, url, s) from exc
            try:
                ex = _Exchange(
                    url=url,
                    status=response.status_code,
                    reason=response.reason_phrase,
                    http_version=response.http_version,
                    headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw],
                    request_line=_request_line(request),
                    request_headers=[
                        (k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw
                    ],
                    peer=_peer(response),
                    started_at=started_at,
                    waited=waited,
                )
                if 200 <= ex.status < 300 and mode != "none":
                    self._read_body(response, ex, mode, deadline)
                elif 300 <= ex.status < 400 and ex.status != 304 and mode != "none":
                    _keep_redirect_body(response, ex)  # archived with the hop
                else:
                    _drain(response)
            finally:
                response.close()
            ex.elapsed = time.monotonic() - t0
            return ex

    def _read_body(
        self, response: httpx.Response, ex: _Exchange, mode: BodyMode, deadline: _Deadline
    ) -> None:
        encoding = response.headers.get("content-encoding", "")
        if mode == "memory":
            raw = io.BytesIO()
            sink = BodySink(
                raw, encoding=encoding, cap=ROBOTS_MAX_BYTES, url=ex.url, head_limit=ROBOTS_MAX_BYTES
            )
            try:
                self._pump(response, sink, deadline, ex.url)
            except BodyTooLarge:  # RFC 9309 2.5: rules past the limit may go
                ex.truncated = True
            ex.memory = bytes(sink.head)
            ex.wire = raw.getvalue()
            return
        kind = media_type(response.headers.get("content-type"))
        if kind is not None and kind not in deadline.accept:
            raise SkipSource(f"unsupported content type {kind} at {ex.url}")
        self._tmp.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix="body-", dir=self._tmp)
        path = Path(name)
        try:
            with os.fdopen(fd, "wb") as out:
                sink = BodySink(out, encoding=encoding, cap=self._s.max_body_bytes, url=ex.url)
                self._pump(response, sink, deadline, ex.url)
            if kind is None:
                kind = sniff(bytes(sink.head))
                if kind not in deadline.accept:
                    raise SkipSource(
                        f"unsupported content type {kind} at {ex.url} (no Content-Type; sniffed)"
                    )
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        ex.sink, ex.body_path, ex.mime = sink, path, kind

    def _pump(self, response: httpx.Response, sink: BodySink, deadline: _Deadline, url: str) -> None:
        try:
            for chunk in response.iter_raw():  # as the network delivers: a chunk size would buffer
                sink.write(chunk)
                if deadline.remaining() <= 0:
                    raise FetchError(
                        f"deadline of {deadline.total:g}s passed while reading {url} "
                        f"({sink.wire_size} bytes so far); raise INCIDENTS_TOTAL_TIMEOUT for slow hosts"
                    )
        except httpx.HTTPError as exc:
            raise _translate(exc, url, self._s) from exc


STALE_BODY_SECONDS = 24 * 3600  # older than any fetch can take; left by a killed process


def _sweep_stale_bodies(folder: Path) -> None:
    """Remove temp bodies that a killed run left behind (a live run's are minutes old at most)."""
    if not folder.is_dir():
        return
    cutoff = time.time() - STALE_BODY_SECONDS
    for path in folder.glob("body-*"):
        with contextlib.suppress(OSError):
            if path.stat().st_mtime < cutoff:
                path.unlink()


def _check_scheme(url: str) -> None:
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        raise FetchError(
            f"cannot fetch {url}: only http and https URLs are fetched, not {scheme or 'no scheme'}"
        )


def _translate(exc: httpx.HTTPError, url: str, s: Settings) -> Exception:
    """httpx's exception, as a message a person can act on; _Transient when worth a retry."""
    host = urlsplit(url).netloc
    if isinstance(exc, httpx.ConnectTimeout):
        return _Transient(
            f"connect timeout after {s.connect_timeout:g}s connecting to {host} for {url}: "
            "timed out waiting for the server to answer"
        )
    if isinstance(exc, httpx.ReadTimeout | httpx.WriteTimeout):
        return _Transient(
            f"timeout after {s.read_timeout:g}s reading {url}: timed out waiting for the server to send data"
        )
    if isinstance(exc, httpx.PoolTimeout):
        return _Transient(f"no free connection for {url} in time")
    if isinstance(exc, httpx.ConnectError):
        if "CERTIFICATE_VERIFY_FAILED" in str(exc):  # a retry would fail the same way
            return FetchError(
                f"TLS certificate of {host} is not valid for it ({exc}); for an intranet CA, "
                "point INCIDENTS_CA_BUNDLE at its PEM file"
            )
        return _Transient(f"could not connect to {host} for {url} ({exc})")
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        return _Transient(f"connection to {host} broke while fetching {url} ({exc})")
    return FetchError(f"could not fetch {url}: {exc}")


def _request_line(request: httpx.Request) -> str:
    target = request.url.raw_path.decode("ascii", "replace") or "/"
    return f"GET {target} HTTP/1.1"


def _peer(response: httpx.Response) -> str | None:
    stream = response.extensions.get("network_stream")
    if stream is None:
        return None
    try:
        address = stream.get_extra_info("server_addr")
    except Exception:  # noqa: BLE001 - diagnostics only
        return None
    return str(address[0]) if address else None


# A body up to this size is read to its end when we do not want it (a 304, a redirect, an error
# page), so the connection goes back to the pool: closing a response part-read closes its socket,
# and a re-run of a thousand 304s would open a thousand connections.
DRAIN_BYTES = 64 * 1024


def _keep_redirect_body(response: httpx.Response, ex: _Exchange) -> None:
    """A redirect's body as sent (usually a line of HTML), up to DRAIN_BYTES, for its record."""
    kept = bytearray()
    with contextlib.suppress(httpx.HTTPError):  # a broken redirect body: the hop still counts
        for chunk in response.iter_raw():
            kept += chunk
            if len(kept) > DRAIN_BYTES:
                ex.truncated = True
                del kept[DRAIN_BYTES:]
                break
    ex.wire = bytes(kept)


def _drain(response: httpx.Response) -> None:
    length = response.headers.get("content-length")
    bodiless = response.status_code in (204, 304) or 100 <= response.status_code < 200
    if not bodiless and not (length and length.isdigit() and int(length) <= DRAIN_BYTES):
        return
    with contextlib.suppress(httpx.HTTPError):  # then the connection is dropped, as before
        # The raw stream, not read(): nothing is kept, so its decoders and chunkers are waste
        # (a fifth of a 304's cost here). Its end puts the connection back in the pool. (A sync
        # client's stream is a SyncByteStream.)
        for _ in response.stream:  # type: ignore[union-attr]
            pass
