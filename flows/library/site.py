"""`incidents export --site OUT/`: the records as a static site (plain HTML and CSS, client-side search).

Works from a file:// path and on GitHub Pages: every link is relative and names its .html file,
and the search index is loaded by a <script> (browsers refuse fetch() from file://). The site is
built in a folder beside OUT and swapped in, so OUT is never half-written; an OUT that this command
did not write is never replaced.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from flows.library.index import LibraryIndex, Query
from flows.library.models import TOPIC_KINDS, UI_LANGUAGES, Brief, SearchResult, Topic
from flows.library.pages import STATIC, Links, incident_page, search_page, topic_page
from schema.errors import InputError
from schema.vocab import vocabulary

MARKER = ".incidents-site"


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


def search_entry(item: Brief) -> dict[str, object]:
    """One record in the prebuilt search index: what the page shows, and `text` to match words in."""
    parts = [item.id, item.org, *item.title.values(), *item.summary.values()]
    for kind, term in _terms(item):
        found = vocabulary(TOPIC_KINDS[kind][0]).terms.get(term)
        parts += [term, *(found.labels.values() if found else ())]
    data = item.model_dump(mode="json", exclude={"score"})
    data["text"] = " ".join(parts).lower()
    return data


def _page(out: Path, relative: str, html: str) -> None:
    path = out / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")


def build_site(index: LibraryIndex, out: Path) -> int:
    """Write the whole site into the empty folder `out`; the number of HTML pages written."""
    briefs = index.briefs()
    everything = index.search(Query(page_size=1, sort="newest"))
    listing = SearchResult(
        query="",
        filters={},
        total=len(briefs),
        page=1,
        page_size=max(1, len(briefs)),
        items=briefs,
        facets=everything.facets,
    )
    entries = [search_entry(item) for item in briefs]
    static = out / "static"
    static.mkdir(parents=True)
    for name in ("library.css", "search.js"):
        shutil.copyfile(STATIC / name, static / name)
    payload = json.dumps(entries, ensure_ascii=False, separators=(",", ":"))
    # "</" would end the <script> element early if a record's text held "</script>".
    (static / "search-index.js").write_text(
        "window.LIBRARY_INDEX = " + payload.replace("</", "<\\/") + ";\n", encoding="utf-8"
    )
    (out / "search-index.json").write_text(payload + "\n", encoding="utf-8")
    with (out / "records.jsonl").open("w", encoding="utf-8") as dump:
        for line in index.record_lines():
            dump.write(line + "\n")
    (out / ".nojekyll").write_text("", encoding="utf-8")  # GitHub Pages: serve files as they are
    (out / MARKER).write_text("written by incidents export --site\n", encoding="utf-8")
    _page(
        out,
        "index.html",
        '<!doctype html><meta charset="utf-8"><title>Incident library</title>'
        '<meta http-equiv="refresh" content="0; url=en/index.html">'
        '<p><a href="en/index.html">English</a> · <a href="ko/index.html" lang="ko">한국어</a></p>\n',
    )

    by_term: dict[tuple[str, str], list[Brief]] = {}
    for item in briefs:
        for pair in dict.fromkeys(_terms(item)):
            by_term.setdefault(pair, []).append(item)

    top = Links(base="../", static_site=True)
    deep = Links(base="../../", static_site=True)
    deeper = Links(base="../../../", static_site=True)
    pages = 1
    for ui in UI_LANGUAGES:
        home = search_page(ui, top, listing, switch="../{ui}/index.html", client_side=True)
        _page(out, f"{ui}/index.html", home)
        pages += 1
    for item in briefs:
        incident = index.incident(item.id)  # once for both languages: related incidents cost a query
        if incident is None:  # removed while exporting
            continue
        switch = "../../{ui}/incidents/" + f"{item.id}.html"
        for ui in UI_LANGUAGES:
            _page(out, f"{ui}/incidents/{item.id}.html", incident_page(ui, deep, incident, switch=switch))
            pages += 1
    for (kind, term), items in sorted(by_term.items()):
        found = vocabulary(TOPIC_KINDS[kind][0]).terms[term]
        topic = Topic(
            kind=kind,
            term=term,
            labels=dict(found.labels),
            definition=found.definition,
            total=len(items),
            page=1,
            page_size=max(1, len(items)),
            items=items,
        )
        switch = "../../../{ui}/topics/" + f"{kind}/{term}.html"
        for ui in UI_LANGUAGES:
            _page(out, f"{ui}/topics/{kind}/{term}.html", topic_page(ui, deeper, topic, switch=switch))
            pages += 1
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
