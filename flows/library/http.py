"""HTTP niceties of the library's routes, as one ASGI middleware: HEAD, ETag and Cache-Control.

- HEAD is answered on every GET route: the GET runs and its headers are sent without the body
  (FastAPI's routes answer only the methods they declare).
- A 200 answer to GET or HEAD carries a strong ETag (a digest of its body) and Cache-Control; a
  request whose If-None-Match holds that ETag gets 304 Not Modified without a body. The records
  change when a reviewer approves one, so the API and the pages are `no-cache` (a client keeps
  them and asks again, a 304 costs no body); the stylesheet may be kept a day.
- Streamed answers without a length (the JSON Lines dump) pass through untouched.

CORS is Starlette's CORSMiddleware, added by `cors` only when `INCIDENTS_LIBRARY_CORS_ORIGINS` is set.
"""

from __future__ import annotations

import hashlib
from typing import Any

from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from flows.settings import Settings

API_CACHE = "public, no-cache"
STATIC_CACHE = "public, max-age=86400"
# Bodies larger than this are sent as they come, without an ETag (nothing of ours is this big but
# the dump, which is streamed).
MAX_BUFFERED = 32 * 1024 * 1024


def _cache_control(path: str) -> str:
    return STATIC_CACHE if "/static/" in path else API_CACHE


class HttpCaching:
    """HEAD for every GET route; ETag, If-None-Match (304) and Cache-Control on 200 answers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        head = scope["method"] == "HEAD"
        if head:
            scope = dict(scope, method="GET")
        wanted = _header(scope, b"if-none-match")
        start: dict[str, Any] | None = None
        chunks: list[bytes] = []
        size = 0
        passing = False  # streaming through: not buffered

        async def wrapped(message: Message) -> None:
            nonlocal start, size, passing
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                if message["status"] != 200 or b"content-length" not in names:
                    passing = True
                    await send(message)
                    return
                start = dict(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            if passing:
                await send({**message, "body": b""} if head else message)
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if message.get("more_body", False) and size <= MAX_BUFFERED:
                return
            assert start is not None
            body = b"".join(chunks)
            etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            headers = [
                (k, v) for k, v in start.get("headers", []) if k.lower() not in (b"etag", b"cache-control")
            ]
            headers += [(b"etag", etag.encode()), (b"cache-control", _cache_control(scope["path"]).encode())]
            if wanted is not None and _matches(wanted, etag):
                kept = [(k, v) for k, v in headers if k.lower() not in (b"content-length", b"content-type")]
                await send({"type": "http.response.start", "status": 304, "headers": kept})
                await send({"type": "http.response.body", "body": b""})
                return
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": b"" if head else body})

        await self.app(scope, receive, wrapped)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _matches(if_none_match: str, etag: str) -> bool:
    """If-None-Match holds the ETag (or *); weak comparison, as RFC 9110 asks for GET."""
    tags = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
    return "*" in tags or etag in tags


def cors_origins(settings: Settings) -> list[str]:
    return [o.strip().rstrip("/") for o in settings.library_cors_origins.split(",") if o.strip()]


def install(app: Starlette, settings: Settings) -> None:
    """Add HEAD, ETag and Cache-Control to the app, and CORS for the origins the settings allow."""
    app.add_middleware(HttpCaching)
    origins = cors_origins(settings)
    if origins:  # added last: the outermost, so a preflight is answered before anything else
        app.add_middleware(
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["GET", "HEAD"],
            allow_headers=["If-None-Match"],
            expose_headers=["ETag"],
            max_age=600,
        )
