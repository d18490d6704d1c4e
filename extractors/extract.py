"""extract_document: bytes and headers in, Document out; picks the HTML, Markdown or plain-text path."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import metadata as importlib_metadata
from urllib.parse import urljoin, urlsplit

from extractors import html as html_path
from extractors.decode import decode_bytes
from extractors.language import detect_language
from extractors.layout import TextBuilder
from extractors.limits import check_bytes
from extractors.linklists import article_links, read_page_links, restore_link_lists
from extractors.markdown import parse_markdown
from extractors.metadata import Metadata, front_matter_metadata, page_date, page_title, read_metadata
from extractors.options import ExtractOptions
from extractors.plaintext import parse_plaintext
from extractors.sections import build_sections
from schema.document import Document, ExtractorInfo, Link
from schema.errors import ExtractionError

_MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd", ".mdx", ".md.erb")
_TEXT_SUFFIXES = (".txt", ".text", ".asc")
_HTML_SNIFF = re.compile(
    r"^\s*(?:<!doctype\s+html|<html|<head|<body|<meta|<title|<!--|<div|<article|<p[\s>])", re.I
)
_MD_STRONG = re.compile(r"\A(?:---\s*\n|\+\+\+\s*\n)|^#{1,6} \S|^```", re.M)
_MD_SNIFF = re.compile(r"\A(?:---\s*\n|\+\+\+\s*\n)|^#{1,6} \S|^```|^\s*[-*] \S.*\n\s*[-*] \S", re.M)
# Fewer letters than this in the whole article is no article: a page that is only navigation
# leaves a few link labels ("Home", "About") once trafilatura has dropped the menus
_MIN_ARTICLE_LETTERS = 40


@lru_cache(maxsize=8)
def _version(dist: str) -> str:
    try:
        return importlib_metadata.version(dist)
    except importlib_metadata.PackageNotFoundError:
        return "unknown"


def sniff_format(data: bytes, url: str | None, content_type: str | None) -> str:
    """ "html", "markdown" or "text": a Markdown suffix beats text/plain (raw git hosts serve .md so)."""
    mime = (content_type or "").split(";")[0].strip().lower()
    path = urlsplit(url).path.lower() if url and "://" in url else (url or "").lower()
    head = data[:2048].decode("latin-1").lstrip("\ufeff\xef\xbb\xbf")
    if path.endswith(_MARKDOWN_SUFFIXES) and mime in ("", "text/plain", "text/markdown", "text/x-markdown"):
        return "html" if not mime and _HTML_SNIFF.match(head) and "<body" in head.lower() else "markdown"
    if mime in ("text/markdown", "text/x-markdown"):
        return "markdown"
    if mime in ("text/html", "application/xhtml+xml", "application/xml", "text/xml"):
        return "html"
    if path.endswith((".html", ".htm", ".xhtml")) or (not mime and _HTML_SNIFF.match(head)):
        return "html"
    if path.endswith(_TEXT_SUFFIXES) or "-----BEGIN PGP SIGNED MESSAGE-----" in head:
        return "text"
    if mime == "text/plain":  # raw git hosts serve Markdown so: front matter, '#' headings, fences
        return "markdown" if _MD_STRONG.search(head) else "text"
    return "markdown" if _MD_SNIFF.search(head) else "text"


def extract_document(
    data: bytes,
    *,
    url: str | None = None,
    content_type: str | None = None,
    options: ExtractOptions | None = None,
) -> Document:
    """The article of one page as a Document; raises ExtractionError with the reason when there is none."""
    options = options or ExtractOptions()
    check_bytes(data, options.max_bytes)
    fmt = sniff_format(data, url, content_type)
    text, encoding, warnings = decode_bytes(data, content_type)
    if "\x00" in text:
        raise ExtractionError("binary content")
    if fmt == "html":
        builder, links, info, meta = _from_html(text, url, options, warnings)
    elif fmt == "markdown":
        front, builder, links = parse_markdown(text)
        meta = front_matter_metadata(front)
        info = ExtractorInfo(name="markdown", version=f"markdown-it-py {_version('markdown-it-py')}")
    else:
        builder, signed = parse_plaintext(text)
        links = []
        meta = Metadata()
        if signed:
            warnings.append("PGP clear-signed text: signature stripped, not verified")
        info = ExtractorInfo(name="plain", version=f"incident-ingest {_version('incident-ingest')}")
    builder = _strip_chrome(_strip_title_and_byline(builder, meta), meta)
    return _document(builder, links, info, meta, url, encoding, warnings)


def _from_html(
    text: str, url: str | None, options: ExtractOptions, warnings: list[str]
) -> tuple[TextBuilder, list[Link], ExtractorInfo, Metadata]:
    tree = html_path.parse_html(text)
    elements = int(tree.xpath("count(//*)"))  # counted in C, no Python objects made
    if elements > options.max_elements:
        raise ExtractionError(f"page too complex: {elements} elements, limit {options.max_elements}")
    meta = read_metadata(tree)
    if not meta.published:
        meta.published = page_date(tree, url)
    visible = html_path.visible_text_length(tree)  # before trafilatura prunes the tree in place
    page_links = read_page_links(tree, anchors=not options.include_links)
    body, _ = html_path.run_trafilatura(tree, url, options)
    builder = TextBuilder()
    links: list[Link] = []
    name, version = "trafilatura", _version("trafilatura")
    if body is not None:
        html_path.walk_trafilatura(body, builder, links)
        if html_path.is_flat(body):
            # a short article got trafilatura's flat baseline: read the same <article> ourselves
            fresh = html_path.parse_html(text)  # trafilatura has pruned `tree`
            if html_path.mostly_links(fresh, len(builder)):
                raise ExtractionError("no article text found: the page is navigation and links")
            article = html_path.article_element(fresh)
            if article is not None:
                rebuilt, rebuilt_links = TextBuilder(), list[Link]()
                html_path.walk_html(article, rebuilt, rebuilt_links)
                if len(rebuilt.blocks) > 1 and 0.5 * len(builder) <= len(rebuilt) <= 1.5 * len(builder):
                    builder, links, name = rebuilt, rebuilt_links, "trafilatura+article"
    if len(builder) < max(options.min_text_chars, options.fallback_ratio * visible):
        fallback = html_path.run_readability(text)
        if fallback is not None:
            other = TextBuilder()
            other_links: list[Link] = []
            html_path.walk_html(fallback, other, other_links)
            if len(other) >= options.readability_gain * max(len(builder), 1):
                warnings.append(f"main text {len(builder)} of {visible} visible characters; used readability")
                builder, links = other, other_links
                name, version = "readability", _version("readability-lxml")
    if not meta.title:
        first = next((b for b in builder.blocks if b.kind == "heading"), None)
        meta.title = page_title(meta, builder.text[first.start : first.end] if first else None)
    builder = _reread_preformatted(builder)
    builder, restored = restore_link_lists(builder, page_links)
    if restored:
        warnings.append(f"{restored} link-only lists dropped by the main extractor put back")
    links = _dedupe(links + article_links(page_links, builder.text))
    # libxml2 stops at depth 255 and drops what lies deeper: only a page that came out (almost)
    # empty is checked for it, on a fresh parse (trafilatura has pruned `tree`)
    if _letters(builder) < _MIN_ARTICLE_LETTERS and html_path.too_deep(html_path.parse_html(text)):
        raise ExtractionError(
            f"no article text found: markup nested deeper than {html_path.LIBXML2_MAX_DEPTH} levels"
        )
    return builder, links, ExtractorInfo(name=name, version=version), meta


def _reread_preformatted(builder: TextBuilder) -> TextBuilder:
    """A plain-text report served as one <pre> is prose, not code: re-read it as plain text."""
    text = builder.text
    code = [b for b in builder.blocks if b.kind == "code"]
    code_chars = sum(b.end - b.start for b in code)
    if not code or code_chars < 0.8 * len(text):
        return builder
    longest = max(code, key=lambda b: b.end - b.start)
    body = text[longest.start : longest.end]
    lines = [line for line in body.splitlines() if line.strip()]
    codey = sum(
        1
        for line in lines
        if re.search(r"[{};]\s*$|^\s*[$#>] |=>|\)\s*\{|^\s*(?:def|class|import|return) ", line)
    )
    if not lines or codey > 0.1 * len(lines):
        return builder
    out = TextBuilder()
    for block in builder.blocks:
        if block is longest:
            reread, _ = parse_plaintext(body)
            for b in reread.blocks:
                out.add(b.kind, reread.text[b.start : b.end], b.level)
        else:
            out.add(block.kind, text[block.start : block.end], block.level)
    return out


_BYLINE_DATE = re.compile(
    r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{4}\s*[년年]|\b\d{1,2}\s+[A-Z][a-z]{2,8}\.?\s+\d{4}\b"
    r"|\b[A-Z][a-z]{2,8}\.?\s+\d{1,2},?\s+\d{4}\b"
)
_BYLINE_WORDS = re.compile(r"(?i)\b(?:by|and|posted|published|on|updated|written|at|utc|am|pm)\b|[\d\W_]+")
# a byline is short: the longest in our fixtures and corpus ("1 August 2025 by Wojtek Mach and
# Eric Meadows Jönsson") has 54 characters; paragraphs of the article's own are longer
_BYLINE_CHARS = 100
# Korean and Japanese prose has no spaces to count words by: a line that ends a sentence the CJK
# way (。！？, or Korean's 다./요.), or runs on past a name's length, is the article's.
_CJK_SENTENCE = re.compile(r"(?:[。！？]|[다요]\.)\s*$")
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_BYLINE_CJK_CHARS = 12


def _byline_date(line: str) -> str | None:
    from extractors.draft.dates import _dates  # the date parser of every language the drafter reads

    full = [d for _a, _b, d in _dates(line, 1) if d.year > 1900]
    return full[0].isoformat() if full else None


def _strip_title_and_byline(builder: TextBuilder, meta: Metadata) -> TextBuilder:
    """The title lives in Document.title: drop the heading that repeats it at the top of the text,
    and a date-and-author line right under it (blog chrome, not article)."""
    blocks, text = builder.blocks, builder.text
    drop: set[int] = set()
    first = blocks[0] if blocks else None
    if first is not None and first.kind == "heading":
        heading = " ".join(text[first.start : first.end].split()).casefold()
        title = " ".join((meta.title or "").split()).casefold()
        if not title or heading == title or (len(heading) >= 8 and heading in title):
            meta.title = meta.title or text[first.start : first.end]
            drop.add(0)
    for i in range(len(drop), min(len(blocks), len(drop) + 2)):
        block = blocks[i]
        line = text[block.start : block.end]
        if block.kind != "paragraph" or len(line) > _BYLINE_CHARS or not _BYLINE_DATE.search(line):
            continue
        rest = _BYLINE_DATE.sub(" ", line)
        for name in re.split(r",| and ", meta.author or ""):
            if name.strip():
                rest = rest.replace(name.strip(), " ")
        cjk_prose = _CJK_SENTENCE.search(line) or len(_CJK_CHAR.findall(rest)) > _BYLINE_CJK_CHARS
        if len(_BYLINE_WORDS.sub(" ", rest).split()) <= 4 and not cjk_prose:
            drop.add(i)
            if not meta.published:
                # The byline's date is the publication date: keep it, the line itself goes.
                meta.published = _byline_date(line)
            break
    return builder.without(drop) if drop else builder


# Site chrome that trafilatura keeps on a short article: a tagline or a "Log in" link above it, the
# copyright line below it. Only the first and last two blocks are looked at.
_COPYRIGHT_LINE = re.compile(
    r"(?i)©|\(c\)\s*\d{4}|\bcopyright\b|all rights reserved|무단\s*전재|無断転載|著作権"
)
_ACCOUNT_LINK = re.compile(
    r"(?i)\b(?:log ?in|sign ?in|sign ?up|log ?out|register)\b|로그인|회원가입|ログイン|新規登録"
)
_SENTENCE_END = re.compile(r"[.!?。！？:;)]\s*$")
_TAGLINE_WORDS = (4, 12)
_COPYRIGHT_WORDS = 20
_ACCOUNT_WORDS = 6


def _account_links(line: str) -> bool:
    """A line of account links ("Log in", "Sign in · Sign up", "로그인 | 회원가입"), nothing else."""
    if not _ACCOUNT_LINK.search(line) or _SENTENCE_END.search(line):
        return False
    rest = _ACCOUNT_LINK.sub(" ", line)
    return len(re.findall(r"\w+", rest)) <= 1 and len(line.split()) <= _ACCOUNT_WORDS


def _site_words(meta: Metadata) -> set[str]:
    """Words of the site's name: og:site_name, or what follows the last separator of <title>."""
    names = [meta.site_name or ""]
    title = meta.html_title or ""
    for sep in (" | ", " - ", " – ", " — ", " :: ", " · "):
        if sep in title:
            names.append(title.rpartition(sep)[2])
    return {w.casefold() for name in names for w in re.findall(r"\w{3,}", name)}


def _strip_chrome(builder: TextBuilder, meta: Metadata) -> TextBuilder:
    """Drop a tagline or account links before the article and a copyright line after it."""
    from schema.headings import heading_role

    blocks, text = builder.blocks, builder.text
    if len(blocks) < 3:
        return builder
    drop: set[int] = set()
    site = _site_words(meta)

    def tagline(i: int, line: str, words: int, beside: int) -> bool:
        # A short line that names the site, without a sentence's end, digits, an address or a
        # heading's name, next to a paragraph ("Notes from the people who keep Quillmark running").
        return bool(
            site
            and site & {w.casefold() for w in re.findall(r"\w{3,}", line)}
            and "@" not in line
            and ":" not in line
            and _TAGLINE_WORDS[0] <= words <= _TAGLINE_WORDS[1]
            and not any(c.isdigit() for c in line)
            and not _SENTENCE_END.search(line)
            and heading_role(line) == "other"
            and blocks[beside].kind == "paragraph"
        )

    for i in range(min(2, len(blocks) - 1)):
        line = text[blocks[i].start : blocks[i].end].strip()
        words = len(line.split())
        if blocks[i].kind != "paragraph":
            break
        account = _account_links(line)
        if not (account or tagline(i, line, words, i + 1)):
            break
        drop.add(i)
    for i in range(len(blocks) - 1, max(len(drop), len(blocks) - 3), -1):
        line = text[blocks[i].start : blocks[i].end].strip()
        words = len(line.split())
        copyright_line = _COPYRIGHT_LINE.search(line) and words <= _COPYRIGHT_WORDS
        account = _account_links(line)
        if blocks[i].kind not in ("paragraph", "list_item"):
            break
        if not (
            copyright_line or account or (blocks[i].kind == "paragraph" and tagline(i, line, words, i - 1))
        ):
            break
        drop.add(i)
    return builder.without(drop) if drop and len(drop) < len(blocks) else builder


def _letter_weight(char: str) -> int:
    # A Hangul syllable or a kanji says what two or three Latin letters say: a two-sentence Korean
    # notice has as few letters as one English sentence.
    return (2 if char >= "\u1100" else 1) if char.isalpha() else 0


def _letters(builder: TextBuilder) -> int:
    """Letters in the text (CJK ones count double), counted until the article minimum is reached
    (only compared to it)."""
    text = builder.text
    head = sum(map(_letter_weight, text[: 8 * _MIN_ARTICLE_LETTERS]))  # enough for nearly every page
    return head if head >= _MIN_ARTICLE_LETTERS else sum(map(_letter_weight, text))


def _document(
    builder: TextBuilder,
    links: list[Link],
    info: ExtractorInfo,
    meta: Metadata,
    url: str | None,
    encoding: str,
    warnings: list[str],
) -> Document:
    if _letters(builder) < _MIN_ARTICLE_LETTERS:
        raise ExtractionError("no article text found")
    text = builder.text
    prose = "\n".join(text[b.start : b.end] for b in builder.blocks if b.kind != "code")
    lang, confidence = detect_language(prose, meta.lang)
    title = meta.title
    if not title:
        first = next((b for b in builder.blocks if b.kind == "heading"), None)
        title = text[first.start : first.end] if first is not None else None
    base = meta.canonical_url or url
    if base and "://" in base:  # relative links made absolute; most are absolute already
        links = [
            link
            if "://" in link.url
            else Link.model_construct(url=urljoin(base, link.url), text=link.text, rel=None)
            for link in links
        ]
    return Document(
        url=url,
        canonical_url=meta.canonical_url,
        title=title,
        site_name=meta.site_name,
        author=meta.author,
        published=meta.published,
        updated=meta.updated,
        license=meta.license,
        language=lang,
        language_confidence=confidence,
        text=text,
        blocks=builder.blocks,
        sections=build_sections(text, builder.blocks, lang, title=title),
        links=_dedupe(links),
        extractor=info,
        encoding=encoding,
        warnings=warnings,
    )


def _dedupe(links: list[Link]) -> list[Link]:
    seen: set[tuple[str, str]] = set()
    out = []
    for link in links:
        if link.url and (link.url, link.text) not in seen and not link.url.startswith(("javascript:", "#")):
            seen.add((link.url, link.text))
            out.append(link)
    return out
