"""Links and link-only lists read from the page before trafilatura prunes it.

trafilatura drops a list whose items are all links ("References", a timeline of links) and a
heading left with nothing under it; with include_links it also costs time and, on scrapinghub,
0.002 F1. So links are read from the parsed page first: a link is kept when the block around
it made it into the article, and a link-only list inside the article is put back after the
block that preceded it on the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import html

from extractors.layout import TextBuilder
from schema.document import Link
from schema.headings import heading_role

_BLOCKS = ("p", "li", "td", "th", "dd", "dt", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "figcaption")
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
# containers that are never article, whatever they hold
_CHROME = re.compile(
    r"nav|menu|sidebar|related|share|social|footer|breadcrumb|tags?\b|comment|popular|widget", re.I
)
# headings of teaser and widget lists that sit inside <article> on news sites
_CHROME_HEADING = re.compile(
    r"^(?:related (?:posts|articles|stories|content|reading|links)|more (?:from|stories|news)"
    r"|read (?:more|next)"
    r"|you may also like|popular|recommended|trending|newsletter|subscribe|comments?|share|tags?)\b",
    re.I,
)
# a list under an unknown heading is put back only when less than this share of its text is links;
# on scrapinghub the two dropped lists under unknown headings ("Most read stories", "Newswire")
# were all links; the postmortems' "Related CAPECs" list is 16% links
_TEASER_LINK_SHARE = 0.5
# A page can hold thousands of anchors; past these, the rest are ignored (bounds the work)
_MAX_ANCHORS = 5000
_MAX_LISTS = 50


@dataclass
class LinkList:
    heading: str | None  # the heading right before the list, if any
    heading_level: int
    anchor: str | None  # text of the block before the list (or before its heading)
    items: list[str] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    link_share: float = 0.0  # share of the items' text that is link text


@dataclass
class PageLinks:
    anchors: list[tuple[Link, str]] = field(default_factory=list)  # (link, text of its block)
    lists: list[LinkList] = field(default_factory=list)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _in_chrome(el: html.HtmlElement) -> bool:
    for anc in el.iterancestors():
        if anc.tag in ("nav", "header", "footer", "aside", "form"):
            return True
        if _CHROME.search((anc.get("class") or "") + " " + (anc.get("id") or "")):
            return True
    return False


def _container(tree: html.HtmlElement) -> html.HtmlElement | None:
    found = tree.xpath("//article[not(ancestor::article)]")
    if len(found) == 1:
        return found[0]
    found = tree.xpath("//main|//*[@role='main']")
    return found[0] if len(found) == 1 else None


def read_page_links(tree: html.HtmlElement, anchors: bool = True) -> PageLinks:
    """Every anchor with the text of its block (if `anchors`); the lists in the article container."""
    out = PageLinks()
    for n, a in enumerate(tree.iter("a") if anchors else ()):
        if n >= _MAX_ANCHORS:
            break
        href = (a.get("href") or "").strip()
        if not href or href.startswith(("#", "javascript:", "mailto:")):
            continue
        block = next((anc for anc in a.iterancestors() if anc.tag in _BLOCKS), None)
        text = _norm(a.text_content())
        out.anchors.append(
            (Link(url=href, text=text), _norm(block.text_content()) if block is not None else text)
        )
    root = _container(tree)
    if root is None:
        return out
    recorded: set[html.HtmlElement] = set()
    for lst in root.iter("ul", "ol"):
        if len(out.lists) >= _MAX_LISTS:
            break
        items = [li for li in lst if li.tag == "li"]
        parent = lst.getparent()
        if not items or parent is None or parent.tag == "li" or _in_chrome(lst):
            continue
        texts = [_norm(li.text_content()) for li in items]
        if not all(texts):
            continue
        prev = lst.getprevious()
        heading = prev if prev is not None and prev.tag in _HEADINGS else None
        before = heading.getprevious() if heading is not None else prev
        # the block before may be another list we record (two link lists in a row): skip past it
        while before is not None and (before in recorded or not _norm(before.text_content())):
            before = before.getprevious()
            if before is not None and before.tag in _HEADINGS and before.getnext() in recorded:
                before = before.getprevious()
        recorded.add(lst)
        entry = LinkList(
            heading=_norm(heading.text_content()) if heading is not None else None,
            heading_level=int(heading.tag[1]) if heading is not None else 0,
            anchor=_norm(before.text_content())[-200:] if before is not None else None,
            items=texts,
        )
        for li in items:
            entry.links += [Link(url=a.get("href", ""), text=_norm(a.text_content())) for a in li.iter("a")]
        entry.link_share = sum(len(link.text) for link in entry.links) / max(1, sum(len(t) for t in texts))
        out.lists.append(entry)
    return out


def article_links(page: PageLinks, text: str) -> list[Link]:
    """The links whose surrounding block is part of the article text."""
    flat = _norm(text)
    kept = []
    for link, block in page.anchors:
        if link.text and link.text in flat and block[:300] in flat:
            kept.append(link)
    return kept


def restore_link_lists(builder: TextBuilder, page: PageLinks) -> tuple[TextBuilder, int]:
    """The builder with the article's lists that trafilatura dropped whole put back (link-only
    lists, mostly: references, timelines of links); and how many were."""
    if not page.lists:
        return builder, 0
    text = builder.text
    blocks = builder.blocks
    normed = [_norm(text[b.start : b.end]) for b in blocks]
    inserts: dict[int, list[LinkList]] = {}
    flat = _norm(text)
    kept_headings = {t for t, b in zip(normed, blocks, strict=True) if b.kind == "heading"}
    for entry in page.lists:
        if any(item in flat for item in entry.items if len(item) >= 3):
            continue  # trafilatura kept it, or part of it
        # only lists under a heading that trafilatura kept, or one the lexicon knows ("References",
        # "Timeline"); "Related stories" and other teaser lists inside <article> stay out
        if not entry.heading or _CHROME_HEADING.search(entry.heading):
            continue
        known = entry.heading in kept_headings or heading_role(entry.heading) != "other"
        if not known and entry.link_share >= _TEASER_LINK_SHARE:
            continue  # a list of links under a heading we cannot vouch for: teasers, most likely
        at = None
        if entry.heading:  # trafilatura often keeps the heading and drops the list under it
            at = next(
                (i for i, b in enumerate(blocks) if b.kind == "heading" and normed[i] == entry.heading), None
            )
        if at is None and entry.anchor:
            anchor = entry.anchor
            at = next((i for i, t in enumerate(normed) if anchor in t or (len(t) > 20 and t in anchor)), None)
        if at is None:
            continue  # the block before it is not in the article: the list is not either
        inserts.setdefault(at, []).append(entry)
    if not inserts:
        return builder, 0
    out = TextBuilder()
    restored = 0
    for i, block in enumerate(blocks):
        out.add(block.kind, text[block.start : block.end], block.level, clean=False)
        for entry in inserts.get(i, []):
            if entry.heading and entry.heading not in kept_headings:
                out.add("heading", entry.heading, entry.heading_level)
            for item in entry.items:
                out.add("list_item", item, 1)
            restored += 1
    return out, restored
