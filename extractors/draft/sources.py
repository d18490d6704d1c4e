"""The record's sources entry: URL, source kind (from the URL's shape), license and capture id."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from extractors.draft.evidence import Context, Found, confidence

# (kind, host pattern, path pattern): first match wins; specific shapes before general ones.
KIND_RULES: tuple[tuple[str, str, str], ...] = (
    ("pdf-report", r".*", r".*\.pdf$"),
    ("provider-pir", r"aws\.amazon\.com", r"^/message/"),
    ("provider-pir", r"status\.cloud\.google\.com", r"^/incident"),
    ("provider-pir", r"azure\.status\.microsoft|status\.azure\.com", r"history"),
    ("incident-tracker", r"gitlab\.com", r"/production/-/issues/"),
    ("github-issue", r"github\.com|gitlab\.com", r"/(-/)?(issues|pull|discussions|merge_requests)/\d+"),
    ("repo-doc", r"github\.com|gitlab\.com", r"/(blob|tree|-/blob)/"),
    ("status-page", r"^status\.|statuspage\.io$|\.status\.|status\.io$", r".*"),
    ("mailing-list", r"^lists\.|groups\.google\.com|lkml\.org|mail-archive\.com", r".*"),
    ("social-media", r"(^|\.)(x\.com|twitter\.com|linkedin\.com|mastodon\.social)$", r".*"),
    (
        "conference-talk",
        r"(^|\.)(youtube\.com|youtu\.be|slideshare\.net|usenix\.org|speakerdeck\.com)$",
        r".*",
    ),
    ("forum-post", r"^community\.|^forum\.|^discuss\.|reddit\.com|news\.ycombinator\.com", r".*"),
    ("wiki", r"wiki", r".*"),
)


def source_kind(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return "blog"
    host, path = (parts.hostname or "").lower(), parts.path or "/"
    for kind, host_re, path_re in KIND_RULES:
        if re.search(host_re, host) and re.search(path_re, path, re.I):
            return kind
    return "blog"


_LICENSE_TEXT = re.compile(r"creativecommons\.org/licenses/([a-z-]+)/(\d\.\d)", re.I)


def page_license(ctx: Context) -> str:
    """The license the page states (meta or rel=license link), normalised; else 'unknown'."""
    doc = ctx.doc
    candidates = [doc.license] if doc.license else []
    candidates += [link.url for link in doc.links if (link.rel or "").lower() == "license"]
    for c in candidates:
        if not c:
            continue
        m = _LICENSE_TEXT.search(c)
        if m:
            return f"CC-{m.group(1).upper()}-{m.group(2)}"
        return c.strip()
    return "unknown"


def draft_sources(ctx: Context, source_url: str, snapshot: str | None) -> Found:
    found = Found()
    url = ctx.doc.canonical_url or source_url
    kind = source_kind(url)
    lic = page_license(ctx)
    found.put(
        "sources",
        [{"url": url, "kind": kind, "license": lic, "archived": snapshot}],
        conf=confidence(0.9 if kind != "blog" else 0.7, "rule"),
    )
    return found
