"""A stand-in HTML -> Document for the benchmark, used only while extractors.extract_document is missing."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup

from schema.document import Block, Document, ExtractorInfo, Section

DROP = (
    "nav, header, footer, aside, form, script, style, .share, .related, .comments, .tags, .breadcrumbs,"
    " .byline, .post-meta, .page-footer, .toc, #cookie-banner, .banner, .topbar, .sidebar, h1"
)


def _role(heading: str, lang: str | None) -> str:
    try:
        from schema.headings import heading_role  # type: ignore[import-not-found]

        return heading_role(heading, lang or "en") or "other"
    except Exception:  # noqa: BLE001
        return "other"


def extract_document(data: bytes, *, url: str | None = None, content_type: str | None = None) -> Document:
    soup = BeautifulSoup(data, "lxml")
    meta = {m.get("property") or m.get("name"): m.get("content") for m in soup.find_all("meta")}
    lang = (soup.html.get("lang") if soup.html else None) or None
    title = meta.get("og:title") or (soup.title.get_text() if soup.title else None)
    canonical = soup.find("link", rel="canonical")
    for el in soup.select(DROP):
        el.decompose()
    text, blocks = "", []
    for el in soup.body.find_all(["h2", "h3", "h4", "h5", "h6", "p", "li", "tr", "pre", "blockquote"]):
        if el.name == "p" and el.find_parent(["li", "blockquote", "pre"]):
            continue
        if el.name == "tr":
            s = " | ".join(c.get_text(" ", strip=True) for c in el.find_all(["td", "th"]))
        else:
            s = el.get_text(" ", strip=True)
        s = re.sub(r"\s+", " ", s).strip()
        if not s:
            continue
        kind = {
            "p": "paragraph",
            "li": "list_item",
            "tr": "table_row",
            "pre": "code",
            "blockquote": "quote",
        }.get(el.name, "heading")
        if text:
            text += "\n\n"
        blocks.append(
            Block(
                kind=kind,
                start=len(text),
                end=len(text) + len(s),
                level=int(el.name[1]) if kind == "heading" else 0,
            )
        )
        text += s
    sections = []
    heads = [b for b in blocks if b.kind == "heading"]
    for i, h in enumerate(heads):
        end = len(text)
        for later in heads[i + 1 :]:
            if later.level <= h.level:
                end = later.start
                break
        heading = text[h.start : h.end]
        sections.append(
            Section(
                heading=heading,
                path=[heading],
                level=h.level,
                role=_role(heading, lang),
                start=h.start,
                end=end,
            )
        )
    return Document(
        url=url,
        canonical_url=canonical.get("href") if canonical else None,
        title=title,
        site_name=meta.get("og:site_name"),
        published=(meta.get("article:published_time") or "")[:10] or None,
        language=(lang or "").split("-")[0] or None,
        language_confidence=0.9,
        text=text,
        blocks=blocks,
        sections=sections,
        extractor=ExtractorInfo(name="bench-stand-in", version="0"),
    )
