"""The archived page made safe to show: nh3 (ammonia) keeps text and structure, drops everything active."""

from __future__ import annotations

import html

import nh3

from extractors.decode import decode_bytes

# Structure and text only: no img (a request), no a[href] (a way out), no forms, frames or media.
TAGS = (set(nh3.ALLOWED_TAGS) - {"img", "a", "area", "map"}) | {"span", "div", "section", "article"}
ATTRIBUTES: dict[str, set[str]] = {"*": {"lang", "dir", "title"}, "td": {"colspan", "rowspan"}}
_CLEAN_CONTENT = {
    "script",
    "style",
    "title",
    "template",
    "noscript",
    "iframe",
    "object",
    "embed",
    "svg",
    "math",
}


def sanitize(data: bytes, content_type: str | None) -> str:
    """A complete, inert HTML page for the sandboxed frame."""
    text, _codec, _warnings = decode_bytes(data, content_type)
    if content_type and not any(kind in content_type for kind in ("html", "xml")):
        body = f"<pre>{html.escape(text)}</pre>"
    else:
        body = nh3.clean(
            text,
            tags=TAGS,
            clean_content_tags=_CLEAN_CONTENT,
            attributes=ATTRIBUTES,
            url_schemes=set(),
            link_rel=None,
            strip_comments=True,
        )
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        "<style>body{font:15px/1.5 system-ui,sans-serif;margin:1rem;color:#222}"
        "pre{white-space:pre-wrap}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 4px}"
        "</style></head><body>" + body + "</body></html>"
    )
