"""`incidents export --site OUT/`: the records as a static site (plain HTML and CSS, client-side search).

Works from a file:// path and on GitHub Pages: every link is relative and names its .html file,
and the search index is loaded by <script> elements (browsers refuse fetch() from file://), in
shards: a search loads the few its words need. Topic pages are paginated. An incident's or a topic's
page is one page for both interface languages (en/..., Korean with #ko; ko/... leads there). The site is
built in a folder beside OUT and swapped in, so OUT is never half-written; an OUT that this command
did not write is never replaced.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from html import escape
from pathlib import Path

from flows.library.index import LibraryIndex, Query
from flows.library.models import TOPIC_KINDS, UI_LANGUAGES, Brief, Topic
from flows.library.pages import (
    STATIC,
    TOPIC_PAGE_SIZE,
    Links,
    incident_page,
    search_page,
    strings,
    topic_page,
)
from flows.library.terms import labels, texts
from flows.library.tokens import term_text, tokens
from schema.errors import InputError
from schema.vocab import vocabulary

MARKER = ".incidents-site"
# Incident and topic pages: one page for both interface languages, in this language's folder (its
# Korean address, ko/..., leads to it with #ko; see pages._both).
SHARED_UI = "en"
SITE_PAGE_SIZE = 20  # records on the search page before a search, and per page of results


@dataclass(frozen=True)
class SiteStats:
    records: int
    pages: int
    out: Path


def _terms(item: Brief) -> list[tuple[str, str]]:
    pairs = [("root_cause", item.root_cause), ("severity", item.severity)]
    pairs += [("component", t) for t in item.components]
    pairs += [("contributing", t) for t in item.contributing]
    pairs += [("symptom", t) for t in item.symptoms]
    pairs += [("domain", t) for t in item.domain]
    return pairs


# ---- the sharded search index ------------------------------------------------------------------
# static/search/: manifest.js (the shard names, the records' count, the labels the results show),
# one shard of tokens per shard_key (static/search.js loads only those a query's words need), and
# the records' list data in chunks of META_CHUNK (loaded for the results shown). Every file is a
# script calling LIBRARY.shard(name, data): browsers refuse fetch() from file://.

META_CHUNK = 50
ROW_SLOTS = 16  # a text row is position * ROW_SLOTS + its language's slot
FILTERS = ("root_cause", "component")  # the search page's filters


def shard_key(token: str) -> str:
    """Which shard holds a token (static/search.js's shardKey is the same function): a term filter's
    kind; the first two letters of a Latin-script token; a bucket of the first character otherwise."""
    if token.startswith("@"):
        return "at-" + token[1:].split(":", 1)[0].replace("_", "-")
    first = token[0]
    if first.isascii() and first.isalnum():
        return token[:2]
    return f"u{ord(first) % 256}"


# A postings list is written as one string: the gaps between its sorted numbers, each in base 32 from
# its lowest five bits up, a character of PACK per five bits (+32 on all but a number's last): two
# characters where JSON spent three or four bytes. static/search.js's unpack reads it back.
PACK = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"


def pack(numbers: list[int]) -> str:
    """Sorted, distinct non-negative numbers as a string (see PACK)."""
    out, last = [], 0
    for number in numbers:
        gap, last = number - last, number
        while gap >= 32:
            out.append(PACK[32 | (gap & 31)])
            gap >>= 5
        out.append(PACK[gap])
    return "".join(out)


def unpack(text: str) -> list[int]:
    """pack's numbers back (static/search.js's unpack is the same function)."""
    out, at, gap, shift = [], 0, 0, 0
    for char in text:
        value = PACK.index(char)
        gap |= (value & 31) << shift
        if value & 32:
            shift += 5
        else:
            at += gap
            out.append(at)
            gap = shift = 0
    return out


def _script(name: str, data: object) -> str:
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    # "</" would end a <script> element early if a record's text held "</script>".
    safe = payload.replace("</", "<\\/")
    return f"LIBRARY.shard({json.dumps(name)},{safe});\n"


def write_search_index(index: LibraryIndex, briefs: list[Brief], folder: Path) -> None:
    """The sharded index of `briefs` (newest first: a record's position is its rank in that order),
    made of flows/library/tokens.py's tokens, as the server's index is."""
    folder.mkdir(parents=True, exist_ok=True)
    rows: dict[str, set[int]] = {}  # token -> text rows holding it
    terms: dict[str, set[int]] = {}  # token -> records whose vocabulary terms' labels hold it
    meta: list[list[object]] = []
    for position, item in enumerate(briefs):
        record = index.get(item.id)
        if record is None:
            continue
        for slot, (_, title, body) in enumerate(texts(record)[:ROW_SLOTS]):
            row = position * ROW_SLOTS + slot
            for token in set(tokens(f"{title}\n{body}\n{record.org or ''}")):
                rows.setdefault(token, set()).add(row)
        pairs = _terms(item)
        labels_text = "\n".join(term_text(TOPIC_KINDS[k][0], t) for k, t in pairs)
        for token in set(tokens(labels_text)):
            terms.setdefault(token, set()).add(position)
        for kind, term in pairs:
            if kind in FILTERS:
                terms.setdefault(f"@{kind}:{term}", set()).add(position)
        lang = next(iter(item.title), "")
        meta.append([item.id, item.date or "", item.org, lang, item.title.get(lang, ""), item.root_cause,
                     item.components])  # fmt: skip
    shards: dict[str, dict[str, dict[str, str]]] = {}
    for name, found in (("rows", rows), ("terms", terms)):
        for token, members in found.items():
            shard = shards.setdefault(shard_key(token), {"rows": {}, "terms": {}})
            shard[name][token] = pack(sorted(members))
    for key, shard in shards.items():
        (folder / f"{key}.js").write_text(_script(key, shard), encoding="utf-8")
    for chunk in range(0, len(meta), META_CHUNK):
        name = f"m{chunk // META_CHUNK}"
        (folder / f"{name}.js").write_text(_script(name, meta[chunk : chunk + META_CHUNK]), encoding="utf-8")
    shown = {kind: sorted({t for item in briefs for k, t in _terms(item) if k == kind}) for kind in FILTERS}
    manifest = {
        "records": len(meta),
        "chunk": META_CHUNK,
        "slots": ROW_SLOTS,
        "shards": sorted(shards),
        "labels": {kind: {term: labels(kind, term) for term in terms_} for kind, terms_ in shown.items()},
    }
    (folder / "manifest.js").write_text(_script("manifest", manifest), encoding="utf-8")


def _page(out: Path, relative: str, html: str, *, ui: str | None = None) -> None:
    """Write a page; with `ui` (incident and topic pages: no scripts) also without the markup a
    browser does not need (see _minify)."""
    path = out / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_minify(_compact(html), ui) if ui else _compact(html), encoding="utf-8")


_SPACE = re.compile(r"[ \t]*\n\s*")
# An attribute value that needs no quotes (HTML: no space, quote, =, <, >, `; never a leading /,
# so the test that every link is relative still sees one). Record text never holds =" (escaped).
_QUOTED = re.compile(r'(?<=[a-z])="([A-Za-z0-9_.:#-][A-Za-z0-9_./:#-]*)"')


def _compact(html: str) -> str:
    """Without the templates' indentation and empty lines (no <pre> in our pages)."""
    return _SPACE.sub("\n", html)


def _minify(html: str, ui: str) -> str:
    """An incident or topic page in a fifth less: attribute values unquoted where HTML allows, and
    no lang="UI" inside the body (the <html> element already says it; these pages nest no lang in
    another). Text and what a browser shows are unchanged."""
    head, tag, body = html.partition("<body")
    body = body.replace(f' lang="{ui}"', "")
    return _QUOTED.sub(r"=\1", f"{head}{tag}{body}")


def _links(ui: str, depth: int, folder: str = "") -> Links:
    """Links from a page `depth` folders below the site's root, in interface language `ui`."""
    return Links(base="../" * depth, static_site=True, ui=ui, here="../" * (depth - 1), folder=folder)


def _lang_script() -> str:
    """static/lang.js with the Korean words it puts on the shared pages: interface strings by their
    English, those with {names} as patterns, and every vocabulary term's label."""
    en, ko = strings()["en"], strings()["ko"]
    words: dict[str, str] = {}
    formats: list[tuple[str, str]] = []
    for key, english in en.items():
        korean = ko.get(key) or ko.get(key.removesuffix("_one"), "").replace("{n}", "1")
        if not korean:
            continue
        if "{" in english:
            formats.append((english, korean))
        else:
            words.setdefault(english, korean)
    terms = {
        f"{kind}/{term}": labels(kind, term).get("ko") or labels(kind, term).get("en") or term
        for kind, (vocab, _) in TOPIC_KINDS.items()
        for term in vocabulary(vocab).terms
    }
    reasons = {key: ko[key] for key in ("same_cause", "shared_components", "same_org", "may_recur")}
    data = json.dumps(
        {"words": words, "formats": formats, "terms": terms, "reasons": reasons},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return f"var LIBRARY_WORDS = {data};\n" + (STATIC / "lang.js").read_text(encoding="utf-8")


def _redirect(out: Path, relative: str, target: str, title: str) -> None:
    """A page that sends the browser on to `target` (a Korean address of a shared page: the page in
    en/ with #ko), with a link for a browser that does not follow <meta refresh>."""
    url, name = escape(target), escape(title)
    _page(
        out,
        relative,
        f'<!doctype html><html lang="ko"><meta charset="utf-8"><title>{name}</title>'
        f'<meta http-equiv="refresh" content="0; url={url}"><a href="{url}">{name}</a>\n',
    )


def _topic_pages(out: Path, kind: str, term: str, items: list[Brief]) -> int:
    """A topic's pages (TOPIC_PAGE_SIZE records each), one for both interface languages, and the
    Korean addresses leading to them; how many pages."""
    found = vocabulary(TOPIC_KINDS[kind][0]).terms[term]
    count = max(1, -(-len(items) // TOPIC_PAGE_SIZE))
    for number in range(1, count + 1):
        topic = Topic(
            kind=kind,
            term=term,
            labels=dict(found.labels),
            definition=found.definition,
            total=len(items),
            page=number,
            page_size=TOPIC_PAGE_SIZE,
            items=items[(number - 1) * TOPIC_PAGE_SIZE : number * TOPIC_PAGE_SIZE],
        )
        name = f"topics/{kind}/{Links.topic_file(term, number)}.html"
        html = topic_page(SHARED_UI, _links(SHARED_UI, 3), topic, switch="", shared=True)
        _page(out, f"{SHARED_UI}/{name}", html, ui=SHARED_UI)
        for ui in UI_LANGUAGES:
            if ui != SHARED_UI:
                target = f"../../../{SHARED_UI}/{name}#{ui}"
                _redirect(out, f"{ui}/{name}", target, found.labels.get(ui, term))
    return count


def build_site(index: LibraryIndex, out: Path) -> int:
    """Write the whole site into the empty folder `out`; the number of HTML pages written (not
    counting the Korean addresses that lead to a shared page)."""
    briefs = index.briefs()
    everything = index.search(Query(page_size=SITE_PAGE_SIZE, sort="newest"))
    static = out / "static"
    static.mkdir(parents=True)
    for name in ("library.css", "search.js"):
        shutil.copyfile(STATIC / name, static / name)
    (static / "lang.js").write_text(_lang_script(), encoding="utf-8")
    write_search_index(index, briefs, static / "search")
    # Compressed: the dump is for downloading (a fifth of the size; `gunzip` or any JSON Lines reader).
    with gzip.open(out / "records.jsonl.gz", "wt", encoding="utf-8", compresslevel=9) as dump:
        for line in index.record_lines():
            dump.write(line + "\n")
    (out / ".nojekyll").write_text("", encoding="utf-8")  # GitHub Pages: serve files as they are
    (out / MARKER).write_text("written by incidents export --site\n", encoding="utf-8")
    _page(
        out,
        "index.html",
        '<!doctype html><html lang="en"><meta charset="utf-8"><title>Incident library</title>'
        '<meta http-equiv="refresh" content="0; url=en/index.html">'
        '<p><a href="en/index.html">English</a> · <a href="ko/index.html" lang="ko">한국어</a></p>\n',
    )

    by_term: dict[tuple[str, str], list[Brief]] = {}
    for item in briefs:
        for pair in dict.fromkeys(_terms(item)):
            by_term.setdefault(pair, []).append(item)

    pages = 1
    for ui in UI_LANGUAGES:
        home = search_page(ui, _links(ui, 1), everything, switch="../{ui}/index.html", client_side=True)
        _page(out, f"{ui}/index.html", home)
        pages += 1
    links = _links(SHARED_UI, 2, folder="incidents/")
    for item in briefs:
        incident = index.incident(item.id)
        if incident is None:  # removed while exporting
            continue
        name = f"incidents/{item.id}.html"
        html = incident_page(SHARED_UI, links, incident, switch="", shared=True)
        _page(out, f"{SHARED_UI}/{name}", html, ui=SHARED_UI)
        pages += 1
        for ui in UI_LANGUAGES:
            if ui != SHARED_UI:
                _redirect(out, f"{ui}/{name}", f"../../{SHARED_UI}/{name}#{ui}", item.id)
    for (kind, term), items in sorted(by_term.items()):
        pages += _topic_pages(out, kind, term, items)
    return pages


def export_site(index: LibraryIndex, out: Path) -> SiteStats:
    """Build the site beside `out` and swap it in; refuse to replace a folder this did not write."""
    out = out.resolve()
    if out.exists() and not out.is_dir():
        raise InputError(f"{out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise InputError(f"{out} is not empty and not a site written by this command: choose another folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    building.chmod(0o755)  # mkdtemp makes it private; a site is for reading
    try:
        pages = build_site(index, building)
        records = index.count()
        old = None
        if out.exists():
            old = out.parent / f".{out.name}.old-{building.name.rsplit('-', 1)[-1]}"
            out.rename(old)
        building.rename(out)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return SiteStats(records=records, pages=pages, out=out)
