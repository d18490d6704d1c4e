"""URL canonicalisation for de-duplication, and the page's own rel=canonical."""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

DEFAULT_PORTS = {"http": 80, "https": 443}

# Parameters that only say where a click came from; they never change the page.
TRACKING_PARAMS = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "igshid",
        "mc_cid",
        "mc_eid",
        "_ga",
        "_gl",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        "ref_src",
        "spm",
    }
)
TRACKING_PREFIXES = ("utm_", "pk_", "hsa_")


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered in TRACKING_PARAMS or lowered.startswith(TRACKING_PREFIXES)


# Both are asked the same URLs several times a source (fetch order, politeness, retries, the
# archive, discovery): pure, so remembered.
@lru_cache(maxsize=16384)
def canonicalize_url(url: str) -> str:
    """The form two URLs of the same page share: lower-case scheme and host, no default port,
    no fragment, no tracking parameters, "/" for an empty path. Other parameters keep their order,
    because some sites give the order meaning."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower().rstrip(".")
    try:
        port = parts.port
    except ValueError:
        port = None
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host
    if port is not None and port != DEFAULT_PORTS.get(scheme):
        netloc = f"{host}:{port}"
    if parts.username is not None:
        userinfo = parts.username + (f":{parts.password}" if parts.password is not None else "")
        netloc = f"{userinfo}@{netloc}"
    path = parts.path or "/"
    pairs = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _is_tracking(k)]
    query = urlencode(pairs, doseq=True) if pairs else ""
    return urlunsplit((scheme, netloc, path, query, ""))


@lru_cache(maxsize=16384)
def host_key(url: str) -> str:
    """scheme://host:port, the unit that robots.txt and politeness apply to."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port or DEFAULT_PORTS.get(scheme, 0)
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def path_of(url: str) -> str:
    """Path and query, as robots.txt rules and error messages see them."""
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


_LINK_TAG = re.compile(rb"<link\b[^>]*>", re.IGNORECASE)
_REL_CANONICAL = re.compile(rb"""\brel\s*=\s*["']?\s*canonical\b""", re.IGNORECASE)
_HREF = re.compile(rb"""\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)


def find_rel_canonical(head: bytes, base_url: str) -> str | None:
    """The absolute rel=canonical href in the first bytes of a page, if it names one.

    A regex over bytes is enough: the tag sits in <head>, and hrefs are ASCII in every charset
    the project meets (UTF-8, EUC-KR, Shift_JIS, GB18030 all keep ASCII bytes as ASCII)."""
    for tag in _LINK_TAG.finditer(head):
        if not _REL_CANONICAL.search(tag.group(0)):
            continue
        href = _HREF.search(tag.group(0))
        if not href:
            continue
        raw = next(g for g in href.groups() if g is not None).strip()
        if not raw:
            continue
        value = raw.decode("ascii", "replace").replace("&amp;", "&")
        return urljoin(base_url, value)
    return None
