"""Page metadata: og:/article: meta tags, JSON-LD, <time>, canonical link, license, trafilatura's guesses."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from lxml import html

_DATE = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?)?")
_CJK_DATE = re.compile(r"(\d{4})\s*[년年]\s*(\d{1,2})\s*[월月]\s*(\d{1,2})\s*[일日]")
_TITLE_SEPARATORS = re.compile(r"\s+[|\-\u2013\u2014\u00b7:]{1,2}\s+")
_LICENSE_HINT = re.compile(
    r"creativecommons\.org/(?:licenses|publicdomain)/[^\s\"'<>]+|\bCC[- ]BY(?:-[A-Z]{2})*(?: \d\.\d)?\b"
)


@dataclass
class Metadata:
    title: str | None = None
    site_name: str | None = None
    author: str | None = None
    published: str | None = None
    updated: str | None = None
    canonical_url: str | None = None
    license: str | None = None
    lang: str | None = None  # <html lang>, primary subtag
    html_title: str | None = None  # <title>, often "Post | Site"


def iso_date(value: Any) -> str | None:
    """An ISO date (YYYY-MM-DD) from a date, datetime or a string carrying one; None otherwise."""
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if not isinstance(value, str):
        return None
    m = _DATE.search(value) or _CJK_DATE.search(value)
    if not m:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat()
    except ValueError:
        return None


def _meta(tree: html.HtmlElement) -> dict[str, str]:
    found: dict[str, str] = {}
    head = tree.find("head")  # meta tags live in <head>; searching it alone spares the body
    for el in (head if head is not None else tree).xpath(".//meta[@content]"):
        key = (el.get("property") or el.get("name") or el.get("itemprop") or "").strip().lower()
        value = (el.get("content") or "").strip()
        if key and value and key not in found:
            found[key] = value
    return found


def _json_ld(tree: html.HtmlElement) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    for script in tree.xpath("//script[@type]"):
        if script.get("type", "").lower() != "application/ld+json" or not script.text:
            continue
        try:
            data = json.loads(script.text)
        except ValueError:
            continue
        stack = [data]
        while stack and len(objects) < 50:  # bound: JSON-LD graphs on news sites run to dozens
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, dict):
                objects.append(item)
                if "@graph" in item:
                    stack.append(item["@graph"])
    return objects


def _name(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, dict):
        return _name(value.get("name"))
    if isinstance(value, list):
        names = [n for n in (_name(v) for v in value) if n]
        return ", ".join(names) or None
    return None


_ARTICLE_TYPES = {"article", "newsarticle", "blogposting", "techarticle", "report", "webpage", "posting"}


_HOST_LIKE = re.compile(r"^(?:https?://)?[\w-]+(?:\.[\w-]+)+/?$")
_COPYRIGHT = re.compile(
    r"(?:(?:©|\(c\)|copyright)\s*)+(?:(?:19|20)\d\d(?:\s*[-–]\s*(?:19|20)\d\d)?\s*)?,?\s*(?:by\s+)?"
    r"([^\W\d][^\n.|·,©]{1,59}?)\s*(?=$|[,|·\n]|\.(?!\w)|all rights|\d)",
    re.I,
)


def copyright_holder(tree: html.HtmlElement) -> str | None:
    """The name in the footer's copyright line ("© 2024 Lumenworks, Inc. All rights reserved.")."""
    footers = tree.xpath("//footer | //*[contains(@class, 'footer')]")
    for el in footers[::-1]:
        text = " ".join(el.text_content().split())
        if m := _COPYRIGHT.search(text):
            name = m.group(1).strip(" -–")
            if name and not _HOST_LIKE.match(name) and not name.lower().startswith("all rights"):
                return name
    return None


def read_metadata(tree: html.HtmlElement) -> Metadata:
    """Metadata the page states about itself, strongest source first (JSON-LD, og:, meta, <time>)."""
    meta = _meta(tree)
    md = Metadata()
    lang = tree.get("lang") or tree.get("xml:lang") or meta.get("og:locale") or meta.get("content-language")
    if lang:
        md.lang = re.split(r"[-_]", lang.strip().lower())[0] or None
    publisher: str | None = None
    for obj in _json_ld(tree):
        types = obj.get("@type")
        names = {str(t).lower() for t in (types if isinstance(types, list) else [types])}
        if not names & _ARTICLE_TYPES:
            continue
        md.title = md.title or _name(obj.get("headline")) or _name(obj.get("name"))
        md.author = md.author or _name(obj.get("author"))
        md.published = md.published or iso_date(obj.get("datePublished"))
        md.updated = md.updated or iso_date(obj.get("dateModified"))
        publisher = publisher or _name(obj.get("publisher"))
        md.license = md.license or _name(obj.get("license"))
    md.title = md.title or meta.get("og:title") or meta.get("twitter:title")
    # Who publishes: a site name that is only a host name ("github.com") names the host, not the
    # publisher, so a named publisher (JSON-LD, the footer's copyright line) goes first then.
    named = [meta.get("og:site_name"), publisher, meta.get("application-name")]
    md.site_name = next((n for n in named if n and not _HOST_LIKE.match(n.strip())), None)
    md.site_name = md.site_name or copyright_holder(tree) or next((n for n in named if n), None)
    md.author = md.author or meta.get("author") or meta.get("article:author") or meta.get("dc.creator")
    md.published = (
        md.published
        or iso_date(meta.get("article:published_time"))
        or iso_date(meta.get("datepublished"))
        or iso_date(meta.get("date"))
        or iso_date(meta.get("dc.date"))
        or iso_date(meta.get("citation_publication_date"))
    )
    md.updated = (
        md.updated or iso_date(meta.get("article:modified_time")) or iso_date(meta.get("og:updated_time"))
    )
    if not md.published:
        for el in tree.iter("time"):
            found = iso_date(el.get("datetime") or el.text_content())
            if found:
                md.published = found
                break
    head = tree.find("head")
    for el in (head if head is not None else tree).xpath(".//link[@rel and @href]"):
        rel = (el.get("rel") or "").lower().split()
        if "canonical" in rel and el.get("href") and not md.canonical_url:
            md.canonical_url = el.get("href", "").strip()
        if "license" in rel and el.get("href") and not md.license:
            md.license = el.get("href", "").strip()
    md.canonical_url = md.canonical_url or meta.get("og:url")
    title_el = tree.find(".//title")
    if title_el is not None and title_el.text_content().strip():
        md.html_title = " ".join(title_el.text_content().split())
    if not md.license:
        for el in tree.xpath("//a[@rel and @href]"):
            if "license" in (el.get("rel") or "").lower().split():
                md.license = el.get("href", "").strip()
                break
    return md


def front_matter_metadata(front: dict[str, Any]) -> Metadata:
    """Title, author and dates from a Markdown document's front matter."""
    md = Metadata()
    low = {str(k).lower(): v for k, v in front.items()}
    title = low.get("title")
    md.title = str(title).strip() if title else None
    author = low.get("author") or low.get("authors")
    if isinstance(author, list):
        md.author = ", ".join(_name(a) or str(a) for a in author) or None
    elif author:
        md.author = _name(author) or str(author)
    md.published = iso_date(
        low.get("date") or low.get("published") or low.get("pubdate") or low.get("created")
    )
    md.updated = iso_date(
        low.get("updated") or low.get("lastmod") or low.get("modified") or low.get("last_modified_at")
    )
    lic = low.get("license")
    md.license = str(lic) if lic else None
    lang = low.get("lang") or low.get("language")
    md.lang = str(lang).split("-")[0].lower() if lang else None
    return md


def page_title(md: Metadata, first_heading: str | None) -> str | None:
    """Title when no og:/JSON-LD title: the part of <title> that is the article's first heading,
    else <title> without its " | Site" tail, else the first heading."""
    if md.html_title:
        parts = [p.strip() for p in _TITLE_SEPARATORS.split(md.html_title) if p.strip()]
        if first_heading and first_heading.strip() in parts:
            return first_heading.strip()
        if len(parts) > 1 and md.site_name and parts[-1] == md.site_name:
            return " - ".join(parts[:-1])
        if len(parts) > 1:
            return max(parts, key=len)
        return md.html_title
    return first_heading


def page_date(tree: html.HtmlElement, url: str | None) -> str | None:
    """htmldate's reading of the page's own date markers and URL, without searching the prose."""
    from htmldate import find_date

    try:
        found = find_date(tree, url=url, extensive_search=False, original_date=True)
    except Exception:  # noqa: BLE001 - htmldate raises on odd trees; a missing date is no failure
        return None
    return iso_date(found)
