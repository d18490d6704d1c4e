"""Who may use the app and how forms are protected: bind address, token, session cookie, CSRF, CSP."""

from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
from urllib.parse import quote

from itsdangerous import BadSignature, SignatureExpired, TimestampSigner, URLSafeSerializer
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from schema.errors import InputError, ReviewError

SESSION_COOKIE = "incidents_session"
CSRF_COOKIE = "incidents_csrf"
REVIEWER_COOKIE = "incidents_reviewer"
SESSION_MAX_AGE = 12 * 3600

# Pages: our own script and style only, nothing leaves the server, no framing by other sites.
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "frame-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
# The archived snapshot: no script at all, no request anywhere, inline styles only; and sandboxed.
SNAPSHOT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; "
    "base-uri 'none'; frame-ancestors 'self'; sandbox"
)


# A reviewer's name, as the person gave it: in a form, the sign-in page or X-Reviewer.
REVIEWER_NAME = re.compile(r"^[\w .@'-]{1,60}$")
NAME_RULE = "a reviewer name is 1-60 letters, digits, spaces or . @ ' -"


class CsrfFailed(ReviewError):
    """A form without this browser's CSRF token (answered 403)."""


class NoReviewer(InputError):
    """A decision without a name the person gave (answered 400)."""


def check_reviewer(name: str) -> str:
    """`name` stripped, if it is a reviewer name; else NoReviewer saying what one is."""
    name = name.strip()
    if not REVIEWER_NAME.fullmatch(name):
        raise NoReviewer(NAME_RULE + (f", not {name[:60]!r}" if name else ": say who you are"))
    return name


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str) -> None:
    """Refuse to serve on a non-loopback address without INCIDENTS_REVIEW_TOKEN."""
    if not is_loopback(host) and not token:
        raise InputError(
            f"refusing to serve on {host} without a token: set INCIDENTS_REVIEW_TOKEN "
            "(every request must then carry it), or serve on 127.0.0.1"
        )


class Guard:
    """Signing keys for one app: the session (from the token) and CSRF tokens (per process)."""

    def __init__(self, token: str) -> None:
        self.token = token
        self._session = TimestampSigner(token or secrets.token_hex(32), salt="incidents-session")
        self._csrf = URLSafeSerializer(secrets.token_hex(32), salt="incidents-csrf")

    # -- token and session -------------------------------------------------------------------

    def token_ok(self, given: str) -> bool:
        return bool(self.token) and hmac.compare_digest(given.encode(), self.token.encode())

    def session_value(self) -> str:
        return self._session.sign(secrets.token_hex(8)).decode()

    def session_ok(self, value: str | None) -> bool:
        if not value:
            return False
        try:
            self._session.unsign(value, max_age=SESSION_MAX_AGE)
        except (BadSignature, SignatureExpired):
            return False
        return True

    def authenticated(self, request: Request) -> bool:
        if not self.token:
            return True
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer ") and self.token_ok(auth[7:].strip()):
            return True
        return self.session_ok(request.cookies.get(SESSION_COOKIE))

    # -- CSRF: a signed random value in an HttpOnly SameSite=Strict cookie, repeated in each form --

    def csrf_for(self, request: Request) -> tuple[str, bool]:
        """The CSRF token for this browser, and whether it is new (then set the cookie)."""
        current = request.cookies.get(CSRF_COOKIE)
        if current and self._csrf_valid(current):
            return current, False
        return self._csrf.dumps(secrets.token_hex(16)), True

    def _csrf_valid(self, value: str) -> bool:
        try:
            self._csrf.loads(value)
        except BadSignature:
            return False
        return True

    def csrf_ok(self, request: Request, posted: str | None) -> bool:
        cookie = request.cookies.get(CSRF_COOKIE)
        return bool(
            cookie
            and posted
            and self._csrf_valid(cookie)
            and hmac.compare_digest(cookie.encode(), str(posted).encode())
        )


def set_cookie(response: Response, name: str, value: str, *, max_age: int | None = None) -> None:
    response.set_cookie(name, value, max_age=max_age, httponly=True, samesite="strict", path="/")


_OPEN_PATHS = ("/login", "/static/")


def _host_name(host: str) -> str:
    """The name in a Host header, without its port ("[::1]:8765" -> "::1")."""
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


# Set on every response unless the route set its own (the snapshot frame has its own CSP).
_SAFE_HEADERS = (
    ("Content-Security-Policy", PAGE_CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
)


class AuthMiddleware:
    """With a token set, every request but the login form and static files must carry it; every
    response gets the safety headers. Plain ASGI rather than BaseHTTPMiddleware: it reads only the
    request's head and adds headers as the response starts, with no extra task or body copy per
    request (the largest CPU cost of an approval in bench/review.py before)."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refusal = self._refusal(request)
        if refusal is not None:
            await refusal(scope, receive, self._with_headers(send, request.url.path))
            return
        await self.app(scope, receive, self._with_headers(send, request.url.path))

    def _refusal(self, request: Request) -> Response | None:
        path = request.url.path
        if not self.guard.token and not is_loopback(_host_name(request.headers.get("host", ""))):
            # Without a token the server is for this machine only: a page on another site that
            # re-points its own name at 127.0.0.1 (DNS rebinding) still sends its own Host.
            return JSONResponse(
                {"error": "this server answers only to 127.0.0.1 / localhost"}, status_code=403
            )
        if not self.guard.authenticated(request) and not path.startswith(_OPEN_PATHS):
            wants_html = request.method == "GET" and "text/html" in request.headers.get("accept", "")
            if wants_html:
                return RedirectResponse(f"/login?next={quote(path)}", status_code=303)
            return JSONResponse(
                {"error": "this server needs its token: Authorization: Bearer <INCIDENTS_REVIEW_TOKEN>"},
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
        return None

    @staticmethod
    def _with_headers(send: Send, path: str) -> Send:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in _SAFE_HEADERS:
                    headers.setdefault(name, value)
                # Pages hold drafts and tokens: never cached. Our own script and style may be (revalidated).
                headers.setdefault("Cache-Control", "no-cache" if path.startswith("/static/") else "no-store")
            await send(message)

        return send_with_headers
