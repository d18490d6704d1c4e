"""HTML pages: trafilatura's main-content tree to blocks, with a readability-lxml fallback.

The cascade, in order:
1. trafilatura `bare_extraction` with our options (fast, no comments); its XML-like body keeps
   headings, lists, tables and code, which we walk into blocks.
2. readability-lxml, when step 1 found nothing or far less than the page's visible text; its
   HTML is walked the same way. The longer of the two wins, and `extractor.name` says which.
3. A page that is one <pre> (a plain-text report served as HTML) is re-read as plain text, so
   its headings and paragraphs survive.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from configparser import ConfigParser
from functools import lru_cache

from lxml import etree, html

from extractors.layout import TextBuilder, clean_inline
from extractors.options import ExtractOptions
from schema.document import BlockKind, Link
from schema.errors import ExtractionError

log = logging.getLogger(__name__)

# libxml2 stops building the tree at this depth and drops what lies deeper; a page that hits it
# is reported rather than silently half-read
LIBXML2_MAX_DEPTH = 255
_HEADING_TAGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_INVISIBLE = {"script", "style", "noscript", "template", "head", "svg", "iframe"}


class Extracted:
    """Blocks, links and the extractor path taken for one HTML page."""

    def __init__(self, builder: TextBuilder, links: list[Link], name: str, version: str) -> None:
        self.builder = builder
        self.links = links
        self.name = name
        self.version = version


def _link(url: str, text: str) -> Link:
    # plain strings from the tree: no validation needed, and there can be hundreds a page
    return Link.model_construct(url=url.strip(), text=clean_inline(text), rel=None)


def parse_html(text: str) -> html.HtmlElement:
    """lxml tree of a page; raises ExtractionError when nothing parseable is there."""
    from trafilatura.utils import load_html

    tree = load_html(text)
    if tree is None:
        # trafilatura refuses what does not look like a whole page ("<p>...</p>" alone);
        # lxml wraps a fragment in <html><body> itself
        try:
            tree = html.document_fromstring(text)
        except (etree.ParserError, ValueError) as exc:
            raise ExtractionError("no article text found: unparseable HTML") from exc
    unwrap_layout_tables(tree)
    return tree


# A table used for layout, not data: a cell holds a heading, or a one-cell row holds several
# paragraphs or lists (forum and issue-tracker threads put each post's body in one <td>, e.g.
# GitHub's "comment-body" cell). Read as a table, its headings and paragraphs ran together
# ("SummaryOn July 1 ..."); read as divisions, they stay blocks. A data table (a timeline's
# time | event rows, even with <p> in its cells) has several cells a row and no headings.
_LAYOUT_CELLS = etree.XPath(
    "//td[.//h1 or .//h2 or .//h3 or .//h4 or .//h5 or .//h6"
    " or (count(p|ul|ol|pre|blockquote) > 1 and count(../td|../th) = 1)]"
)
_TABLE_PARTS = ("thead", "tbody", "tfoot", "tr", "td", "th")


def unwrap_layout_tables(tree: html.HtmlElement) -> None:
    """Turn layout tables (see _LAYOUT_CELLS) into <div>s, in place; data tables stay tables."""
    tables: list[etree._Element] = []
    for cell in _LAYOUT_CELLS(tree):
        table = next(cell.iterancestors("table"), None)
        if table is not None and all(t is not table for t in tables):
            tables.append(table)
    for table in tables:
        own = [p for p in table.iter(*_TABLE_PARTS) if next(p.iterancestors("table"), None) is table]
        for part in [*own, table]:  # a nested table's own rows and cells are left to it
            part.tag = "div"


def visible_text_length(tree: html.HtmlElement) -> int:
    """Characters of text in <body> less those of scripts, styles and templates (two C-level passes)."""
    body = tree.find(".//body")
    root = body if body is not None else tree
    hidden = sum(len(el.text_content()) for el in root.iter(*_INVISIBLE))
    return max(0, len(root.text_content()) - hidden)


def too_deep(tree: html.HtmlElement) -> bool:
    """Whether the tree reaches libxml2's depth limit (one XPath pass in C, about 1 ms a page)."""
    return bool(tree.xpath(f"boolean(//*[count(ancestor::*) >= {LIBXML2_MAX_DEPTH - 1}])"))


@lru_cache(maxsize=4)
def _config(min_extracted_size: int) -> ConfigParser:
    from trafilatura.settings import use_config

    config = use_config()
    config.set("DEFAULT", "MIN_EXTRACTED_SIZE", str(min_extracted_size))
    return config


def run_trafilatura(
    page: str | html.HtmlElement, url: str | None, options: ExtractOptions
) -> tuple[etree._Element | None, object]:
    """trafilatura's body element (or None) and its document; a tree passed in is consumed."""
    import trafilatura

    doc = trafilatura.bare_extraction(
        page,
        config=_config(options.min_extracted_size),
        url=url,
        fast=options.fast,
        favor_precision=options.favor_precision,
        favor_recall=options.favor_recall,
        include_comments=False,
        include_tables=options.include_tables,
        include_links=options.include_links,
        include_formatting=False,
        # metadata comes from extractors/metadata.py (meta tags, JSON-LD, <time>, htmldate without
        # prose search): trafilatura's own pass cost 18 ms a page, a third of the extraction
        with_metadata=False,
        deduplicate=False,
        # any format but "python" leaves the body unserialized: we walk the tree ourselves, and
        # trafilatura's text of it cost 0.29 ms a corpus page
        output_format="xml",
    )
    if doc is None:
        return None, None
    return getattr(doc, "body", None), doc


def walk_trafilatura(body: etree._Element, builder: TextBuilder, links: list[Link]) -> None:
    """trafilatura's body (head/p/list/item/table/row/cell/code/quote) to blocks."""
    for el in body:
        _walk_tei(el, builder, links, 0)


def _inline(el: etree._Element, links: list[Link], skip: frozenset[str] = frozenset()) -> str:
    """Text of an element without the children whose tag is in `skip`; collects <ref> links."""
    parts: list[str] = []
    if el.text:
        parts.append(el.text)
    for child in el:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in skip or tag == "lb":
            parts.append(" ")
        else:
            if tag == "ref" and child.get("target"):
                links.append(_link(child.get("target", ""), "".join(child.itertext())))
            parts.append(_inline(child, links))
        if child.tail:
            parts.append(child.tail)
    return "".join(parts)


def _walk_item(item: etree._Element, builder: TextBuilder, links: list[Link], level: int) -> None:
    """A list item: its inline text is one item; paragraphs in it are items of the same level,
    nested lists go one level deeper, in document order."""
    run: list[str] = [item.text or ""]

    def flush() -> None:
        builder.add("list_item", "".join(run), level)
        run.clear()

    for child in item:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag == "list":
            flush()
            _walk_tei(child, builder, links, level)
        elif tag in ("p", "head"):
            flush()
            builder.add("list_item", _inline(child, links), level)
        elif tag in ("code", "quote", "table"):
            flush()
            _walk_tei(child, builder, links, level)
        elif tag == "lb":
            run.append(" ")
        else:
            if tag == "ref" and child.get("target"):
                links.append(_link(child.get("target", ""), "".join(child.itertext())))
            run.append(_inline(child, links))
        if child.tail:
            run.append(child.tail)
    flush()


def _walk_tei(el: etree._Element, builder: TextBuilder, links: list[Link], depth: int) -> None:
    tag = el.tag if isinstance(el.tag, str) else ""
    if tag == "head":
        rend = el.get("rend") or "h2"
        level = int(rend[1]) if len(rend) == 2 and rend[0] == "h" and rend[1].isdigit() else 2
        builder.add("heading", _inline(el, links), level)
    elif tag == "list":
        for item in el:
            if item.tag == "item":
                _walk_item(item, builder, links, depth + 1)
            elif item.tag == "list":
                _walk_tei(item, builder, links, depth + 1)
            else:
                _walk_tei(item, builder, links, depth)
    elif tag == "table":
        for row in el.iter("row"):
            cells = [clean_inline(_inline(cell, links)) for cell in row if cell.tag == "cell"]
            builder.add("table_row", " | ".join(c for c in cells if c))
    elif tag == "code":
        builder.add("code", "".join(el.itertext()))
    elif tag == "quote":
        raw = "".join(el.itertext())
        if raw.count("\n") >= 3 and not len(el):
            # trafilatura turns <pre> without <code> into <quote>: keep its lines, as preformatted
            builder.add("code", raw)
        elif any(child.tag in ("p", "list", "head", "code") for child in el):
            before = len(builder.blocks)
            for child in el:
                _walk_tei(child, builder, links, depth)
            if len(builder.blocks) == before and el.text:
                builder.add("quote", el.text)
        else:
            builder.add("quote", _inline(el, links))
    elif tag in ("p", "div", "item", "cell", "row", "hi", "ref"):
        # <code> inside a paragraph is inline; only a top-level <code> is a code block
        if any(isinstance(c.tag, str) and c.tag in ("list", "table", "head", "quote", "p") for c in el):
            if el.text and el.text.strip():
                builder.add("paragraph", el.text)
            for child in el:
                _walk_tei(child, builder, links, depth)
                if child.tail and child.tail.strip():
                    builder.add("paragraph", child.tail)
        else:
            builder.add("paragraph", _inline(el, links))
    elif tag == "graphic":
        return
    else:
        builder.add("paragraph", _inline(el, links))


# --- HTML (readability's output, or a plain page) to blocks -------------------------------------

_BLOCK_TAGS = {
    "p", "div", "section", "article", "main", "header", "footer", "aside", "blockquote", "pre",
    "ul", "ol", "li", "dl", "dt", "dd", "table", "tr", "td", "th", "thead", "tbody", "tfoot",
    "h1", "h2", "h3", "h4", "h5", "h6", "figure", "figcaption", "form", "nav", "hr", "br", "body", "html",
}  # fmt: skip


def walk_html(root: etree._Element, builder: TextBuilder, links: list[Link]) -> None:
    """Generic HTML to blocks: headings, paragraphs, list items (nesting depth), rows, pre, quotes."""
    _walk_html(root, builder, links, 0)


def _text_of(el: etree._Element, links: list[Link]) -> str:
    parts: list[str] = []
    for node in _iter_inline(el, links):
        parts.append(node)
    return "".join(parts)


def _iter_inline(el: etree._Element, links: list[Link]) -> Iterator[str]:
    if el.text:
        yield el.text
    for child in el:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in _INVISIBLE:
            pass
        elif tag == "br":
            yield " "
        else:
            if tag == "a" and child.get("href"):
                links.append(_link(child.get("href", ""), "".join(child.itertext())))
            yield from _iter_inline(child, links)
        if child.tail:
            yield child.tail


def _has_block_child(el: etree._Element) -> bool:
    return any(isinstance(c.tag, str) and c.tag in _BLOCK_TAGS and c.tag != "br" for c in el)


def _walk_html(el: etree._Element, builder: TextBuilder, links: list[Link], depth: int) -> None:
    tag = el.tag if isinstance(el.tag, str) else ""
    if tag in _INVISIBLE or not tag:
        return
    if tag in _HEADING_TAGS:
        builder.add("heading", _text_of(el, links), int(tag[1]))
        return
    if tag == "pre":
        builder.add("code", "".join(el.itertext()))
        return
    if tag in ("ul", "ol", "dl"):
        for child in el:
            if child.tag in ("li", "dt", "dd"):
                kind: BlockKind = "list_item"
                text = "".join(_inline_skip_lists(child, links))
                builder.add(kind, text, depth + 1)
                for sub in child:
                    if sub.tag in ("ul", "ol", "dl"):
                        _walk_html(sub, builder, links, depth + 1)
            else:
                _walk_html(child, builder, links, depth)
        return
    if tag == "tr":
        cells = [clean_inline(_text_of(c, links)) for c in el if c.tag in ("td", "th")]
        builder.add("table_row", " | ".join(c for c in cells if c))
        return
    if tag == "blockquote" and not _has_block_child(el):
        builder.add("quote", _text_of(el, links))
        return
    if _has_block_child(el):
        if el.text and el.text.strip():
            builder.add("paragraph", el.text)
        run: list[str] = []
        for child in el:
            ctag = child.tag if isinstance(child.tag, str) else ""
            if ctag in _BLOCK_TAGS and ctag != "br":
                if run:
                    builder.add("paragraph", "".join(run))
                    run = []
                _walk_html(child, builder, links, depth)
            elif ctag not in _INVISIBLE and ctag:
                run.append("".join(_iter_inline(child, links)))
            if child.tail:
                run.append(child.tail)
        if run:
            builder.add("paragraph", "".join(run))
        return
    builder.add("quote" if tag == "blockquote" else "paragraph", _text_of(el, links))


def _inline_skip_lists(el: etree._Element, links: list[Link]) -> Iterator[str]:
    if el.text:
        yield el.text
    for child in el:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in ("ul", "ol"):
            yield " "
        elif tag in _INVISIBLE:
            pass
        elif tag in ("br", "p", "div"):
            yield " "
            yield from _inline_skip_lists(child, links)
        else:
            if tag == "a" and child.get("href"):
                links.append(_link(child.get("href", ""), "".join(child.itertext())))
            yield from _iter_inline(child, links)
        if child.tail:
            yield child.tail


def is_flat(body: etree._Element) -> bool:
    """trafilatura's baseline answer: one paragraph holding all the text, its structure lost."""
    return len(body) == 1 and body[0].tag == "p" and not len(body[0])


def mostly_links(tree: html.HtmlElement, extracted: int) -> bool:
    """Whether link text makes up most of what was extracted: a page of menus, not an article.

    0.6: on a navigation-only page link labels are ~100% of the baseline text; the short articles
    that get the baseline (ruby-lang.org notices, our fixtures) are below 0.2.
    """
    body = tree.find(".//body")
    links = sum(len(a.text_content().strip()) for a in (body if body is not None else tree).iter("a"))
    return extracted > 0 and links >= 0.6 * extracted


def article_element(tree: html.HtmlElement) -> etree._Element | None:
    """The page's one outermost <article>, if it has exactly one."""
    articles = tree.xpath("//article[not(ancestor::article)]")
    return articles[0] if len(articles) == 1 else None


def run_readability(text: str) -> etree._Element | None:
    """readability-lxml's main-content element, or None when it finds nothing."""
    from readability import Document as Readability

    try:
        summary = Readability(text).summary(html_partial=True)
    except Exception as exc:  # noqa: BLE001 - readability raises bare Exceptions on odd markup
        log.debug("readability failed: %s", exc)
        return None
    if not summary or not summary.strip():
        return None
    try:
        return html.fragment_fromstring(summary, create_parent="div")
    except (etree.ParserError, ValueError, AssertionError):
        # lxml.html asserts when a summary parses to no <body>: readability gives '<html></html>'
        # for the bytes b"<head"
        return None
