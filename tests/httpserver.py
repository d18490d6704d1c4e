"""A real, threaded loopback HTTP server for tests: several 127.0.0.x hosts, scripted replies."""

from __future__ import annotations

import contextlib
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Request:
    """What a handler sees of a request."""

    host: str  # the 127.0.0.x address it arrived on
    path: str  # path and query
    headers: Mapping[str, str]
    peer: int = 0  # the client's port: one per connection


@dataclass
class Reply:
    """A scripted response.

    delay: seconds before the status line (a slow server); drip: (bytes, seconds) to send the
    body in pieces with a pause between them (a slow drip); chunked: Transfer-Encoding: chunked;
    length: the Content-Length to announce (default: the body's; None with chunked)."""

    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] | Iterable[tuple[str, str]] = field(default_factory=dict)
    delay: float = 0.0
    drip: tuple[int, float] | None = None
    chunked: bool = False
    length: int | None = -1

    def header_list(self) -> list[tuple[str, str]]:
        items = self.headers.items() if isinstance(self.headers, Mapping) else self.headers
        return [(str(k), str(v)) for k, v in items]


Script = Reply | list[Reply] | Callable[[Request], Reply]


@dataclass(frozen=True)
class Hit:
    host: str
    path: str
    headers: Mapping[str, str]
    at: float  # time.monotonic() when the request line was read
    peer: int = 0  # the client's port: one per connection


class _Route:
    def __init__(self, script: Script) -> None:
        self._script = script
        self._served = 0
        self._lock = threading.Lock()

    def reply(self, request: Request) -> Reply:
        if callable(self._script):
            return self._script(request)
        if isinstance(self._script, Reply):
            return self._script
        with self._lock:
            index = min(self._served, len(self._script) - 1)
            self._served += 1
        return self._script[index]


class LoopbackServer:
    """One server answering on several loopback addresses, all on the same port.

    Usage::

        with LoopbackServer(("127.0.0.1", "127.0.0.2")) as server:
            server.route("/page", Reply(body=b"<html>...</html>", headers={"Content-Type": "text/html"}))
            server.route("/flaky", [Reply(503), Reply(503), Reply(body=b"ok")])   # in order, last repeats
            server.route("/slow", Reply(body=b"x" * 100, drip=(10, 0.5)))         # 10 bytes every 0.5 s
            server.route("/who", lambda req: Reply(body=req.path.encode()))       # computed per request
            url = server.url("/page", host="127.0.0.2")
            ...
            assert server.count("/flaky") == 3

    Routes are per path and optionally per host (the address the request came in on); a route
    registered without `host` answers on every host, so give host= when hosts must differ (the
    last host-less registration of a path wins everywhere). Unrouted
    paths answer 404, so a host has no robots.txt unless a test gives it one. Every request is
    recorded as a Hit (host, path, headers, monotonic time) for assertions on politeness.
    The fixture `loopback` in tests/flows/fetch/conftest.py starts one for a test.
    """

    def __init__(
        self, addresses: Iterable[str] = ("127.0.0.1",), *, tls: ssl.SSLContext | None = None
    ) -> None:
        """`tls`: a server-side SSLContext (certificate loaded) to serve HTTPS instead of HTTP."""
        self.addresses = tuple(addresses)
        self.tls = tls
        for address in self.addresses:
            if not address.startswith("127."):
                raise ValueError(f"{address}: tests only ever listen on 127.0.0.0/8")
        self.port = 0
        self._routes: dict[tuple[str | None, str], _Route] = {}
        self._hits: list[Hit] = []
        self._lock = threading.Lock()
        self._servers: list[ThreadingHTTPServer] = []
        self._threads: list[threading.Thread] = []

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> LoopbackServer:
        handler = _make_handler(self)
        for _attempt in range(50):
            servers: list[ThreadingHTTPServer] = []
            try:
                first = _Server((self.addresses[0], 0), handler)
                servers.append(first)
                port = first.server_address[1]
                for address in self.addresses[1:]:
                    servers.append(_Server((address, port), handler))
            except OSError:
                for server in servers:
                    server.server_close()
                continue
            self._servers, self.port = servers, port
            if self.tls is not None:
                for server in servers:
                    server.socket = self.tls.wrap_socket(server.socket, server_side=True)
            break
        else:
            raise RuntimeError("could not bind one port on every loopback address")
        for server in self._servers:
            thread = threading.Thread(
                target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=5)
        self._servers, self._threads = [], []

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the script --------------------------------------------------------------------------

    def route(self, path: str, script: Script, *, host: str | None = None) -> None:
        """Answer `path` with `script`; on one host only if `host` is given.

        A route with a query matches exactly; one without matches any query on that path."""
        self._routes[(host, path)] = _Route(script)

    def url(self, path: str = "/", host: str | None = None) -> str:
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{host or self.addresses[0]}:{self.port}{path}"

    def hits(self, path: str | None = None, host: str | None = None) -> list[Hit]:
        with self._lock:
            return [
                h for h in self._hits if (path is None or h.path == path) and (host is None or h.host == host)
            ]

    def count(self, path: str | None = None, host: str | None = None) -> int:
        return len(self.hits(path, host))

    def _lookup(self, request: Request) -> Reply:
        with self._lock:
            self._hits.append(
                Hit(request.host, request.path, request.headers, time.monotonic(), request.peer)
            )
        bare = request.path.split("?", 1)[0]
        route = next(
            (
                self._routes[key]
                for key in (
                    (request.host, request.path),
                    (None, request.path),
                    (request.host, bare),
                    (None, bare),
                )
                if key in self._routes
            ),
            None,
        )
        if route is None:
            return Reply(404, b"not found", {"Content-Type": "text/plain"})
        return route.reply(request)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that hang up mid-reply (timeouts, size caps) are what the tests are about.
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


def _make_handler(owner: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in separate writes; without this, Nagle's algorithm and
            # the client's delayed ACK add 40 ms to every request on a kept-alive connection.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_GET(self) -> None:  # the name http.server calls
            host = str(self.server.server_address[0])
            headers = {k: v for k, v in self.headers.items()}
            request = Request(host, self.path, headers, int(self.client_address[1]))
            reply = owner._lookup(request)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError, socket.timeout):
                self._send(reply)

        def _send(self, reply: Reply) -> None:
            if reply.delay:
                time.sleep(reply.delay)
            self.send_response(reply.status)
            names = set()
            for name, value in reply.header_list():
                self.send_header(name, value)
                names.add(name.lower())
            if reply.chunked:
                self.send_header("Transfer-Encoding", "chunked")
            elif "content-length" not in names and reply.length is not None:
                length = len(reply.body) if reply.length == -1 else reply.length
                self.send_header("Content-Length", str(length))
            self.end_headers()
            body = reply.body
            step, pause = reply.drip or (len(body) or 1, 0.0)
            for start in range(0, len(body), step):
                piece = body[start : start + step]
                if reply.chunked:
                    piece = b"%x\r\n%s\r\n" % (len(piece), piece)
                self.wfile.write(piece)
                self.wfile.flush()
                if pause and start + step < len(body):
                    time.sleep(pause)
            if reply.chunked:
                self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler
