"""The library's HTML pages (search, incident, topic) in English and Korean, for the app and the static site.

One set of templates serves both: a `Links` value says where pages live (app routes under
/library/, or relative .html files that work from file:// and GitHub Pages).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from flows.library.models import FACET_KINDS, TOPIC_KINDS, UI_LANGUAGES, Incident, SearchResult, Topic
from flows.library.terms import labels

TEMPLATES = Path(__file__).parent / "templates"
# Records on one page of a topic, in the app and on the static site.
TOPIC_PAGE_SIZE = 50
STATIC = Path(__file__).parent / "static"
# Static site: incident and topic pages are one page for both interface languages, in the English
# tree (en/incidents/, en/topics/); a link from another language adds #LANG (#ko).
SHARED_FOLDERS = ("incidents/", "topics/")


@cache
def strings() -> dict[str, dict[str, str]]:
    """Interface strings per interface language (templates/strings.json)."""
    data: dict[str, dict[str, str]] = json.loads((TEMPLATES / "strings.json").read_text(encoding="utf-8"))
    return data


@dataclass(frozen=True)
class Links:
    """Where the pages live. `base` leads to the library's root; `static_site` adds .html and index.html."""

    base: str
    static_site: bool = False
    # Static site: the page's own interface language and the way from its folder to that language's
    # folder ("../" from en/incidents/): links within one language are that much shorter.
    ui: str | None = None
    here: str = ""
    # Static site: the page's own folder within its language ("incidents/" on an incident page):
    # links to a page beside it are just its file name.
    folder: str = ""

    def _page(self, ui: str, path: str) -> str:
        if self.static_site and path.startswith(SHARED_FOLDERS):
            return self._file("en", path) + ("" if ui == "en" else f"#{ui}")
        return self._file(ui, path)

    def _file(self, ui: str, path: str) -> str:
        suffix = ".html" if self.static_site and path else ""
        if self.static_site and not path:
            path = "index.html"
        if self.static_site and ui == self.ui:
            if self.folder and path.startswith(self.folder) and "/" not in path[len(self.folder) :]:
                return f"{path[len(self.folder) :]}{suffix}"
            return f"{self.here}{path}{suffix}"
        return f"{self.base}{ui}/{path}{suffix}"

    def home(self, ui: str) -> str:
        return self._page(ui, "")

    def incident(self, ui: str, record_id: str) -> str:
        return self._page(ui, f"incidents/{quote(record_id)}")

    def topic(self, ui: str, kind: str, term: str, page: int = 1) -> str:
        """A topic's page: ?page=N in the app, TERM-pN.html on the static site."""
        if self.static_site:
            return self._page(ui, f"topics/{quote(kind)}/{quote(self.topic_file(term, page))}")
        return self._page(ui, f"topics/{quote(kind)}/{quote(term)}") + (f"?page={page}" if page > 1 else "")

    @staticmethod
    def topic_file(term: str, page: int) -> str:
        """A static topic page's file name, without .html."""
        return term if page == 1 else f"{term}-p{page}"

    def asset(self, name: str) -> str:
        return f"{self.base}static/{name}"

    def search(self, ui: str, **params: Any) -> str:
        """A search page URL (app only: the static site searches in the browser)."""
        pairs = [
            (k, v)
            for k, values in params.items()
            for v in (values if isinstance(values, list) else [values])
            if v
        ]
        return self.home(ui) + ("?" + urlencode(pairs) if pairs else "")


def ordered(text: dict[str, str], ui: str) -> list[tuple[str, str]]:
    """(lang, text) pairs of localized text, the interface language first, then the others as stored."""
    return sorted(text.items(), key=lambda pair: pair[0] != ui)


def first(text: dict[str, str], ui: str) -> str:
    pairs = ordered(text, ui)
    return pairs[0][1] if pairs else ""


def first_lang(text: dict[str, str], ui: str) -> str:
    pairs = ordered(text, ui)
    return pairs[0][0] if pairs else ui


def duration(value: str | None) -> str:
    """PT54H10M -> 54h 10m; P2DT3H -> 2d 3h (M before T is months: mo)."""
    if not value:
        return ""
    date_part, _, time_part = value.removeprefix("P").partition("T")
    units = [(n, {"M": "mo"}.get(u, u.lower())) for n, u in re.findall(r"(\d+)([YMWD])", date_part)]
    units += [(n, u.lower()) for n, u in re.findall(r"(\d+(?:\.\d+)?)([HMS])", time_part)]
    return " ".join(f"{n}{u}" for n, u in units)


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        ordered=ordered,
        first=first,
        first_lang=first_lang,
        duration=duration,
        labels=labels,
        TOPIC_KINDS=list(TOPIC_KINDS),
        FACET_KINDS=list(FACET_KINDS),
        UI_LANGUAGES=UI_LANGUAGES,
    )
    return env


_ENV = _environment()


def _label_in(lang: str, kind: str, term: str) -> str:
    found = labels(kind, term) if kind in TOPIC_KINDS else {}
    return found.get(lang) or found.get("en") or term


def _number_in(lang: str, key: str, n: int) -> str:
    """An interface string with a number: its `_one` form for 1 where the language has one."""
    s = strings()[lang]
    return (s.get(f"{key}_one", s[key]) if n == 1 else s[key]).replace("{n}", str(n))


def _fmt_in(lang: str, key: str, values: dict[str, str]) -> str:
    text = strings()[lang][key]
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def _why_in(lang: str, rel: Any) -> str:
    """Why a related incident is related, in words."""
    s, reasons = strings()[lang], []
    if rel.root_cause:
        reasons.append(f"{s['same_cause']}: {_label_in(lang, 'root_cause', rel.root_cause)}")
    if rel.components:
        names = ", ".join(_label_in(lang, "component", c) for c in rel.components)
        reasons.append(s["shared_components"].replace("{terms}", names))
    if rel.same_org:
        reasons.append(s["same_org"])
    if rel.may_recur:
        reasons.append(s["may_recur"])
    return " · ".join(reasons)


def _why_data(rel: Any) -> Markup:
    """The reasons' terms as attributes, for static/lang.js to say them in another language."""
    parts = [("c", rel.root_cause or ""), ("k", " ".join(rel.components)), ("o", "1" if rel.same_org else "")]
    parts.append(("r", "1" if rel.may_recur else ""))
    return Markup(" ").join(Markup('data-{}="{}"').format(k, v) for k, v in parts if v)


def _texts(text: dict[str, str], tag: str, ui: str, shared: bool) -> Markup:
    """A field's text in each of the record's languages: the interface language's first, the others
    muted (class other-language). On a shared page in the stored order, each marked with the modes it
    leads in (fe: English, fk: Korean), a group (class v) that library.css reorders and mutes."""
    element = Markup('<{0} lang="{1}"{2}>{3}</{0}>')
    if not shared or len(text) < 2:
        pairs = ordered(text, ui)
        other = Markup(' class="other-language"')
        return Markup("").join(
            element.format(Markup(tag), lang, other if i else "", v) for i, (lang, v) in enumerate(pairs)
        )
    out = []
    for lang, value in text.items():
        marks = " ".join(f"f{mode[0]}" for mode in UI_LANGUAGES if first_lang(text, mode) == lang)
        cls = Markup(' class="{}"').format(marks) if marks else ""
        out.append(element.format(Markup(tag), lang, cls, value))
    return Markup("").join(out)


def _title(text: dict[str, str], ui: str, shared: bool) -> Markup:
    """A record's title in a list: in the interface language if it has one (on a shared page, the one
    of each mode, the other hidden)."""
    if shared and first_lang(text, "en") != first_lang(text, "ko"):
        return Markup('<span class="en" lang="{}">{}</span><span class="ko" lang="{}">{}</span>').format(
            first_lang(text, "en"), first(text, "en"), first_lang(text, "ko"), first(text, "ko")
        )
    return Markup('<span lang="{}">{}</span>').format(first_lang(text, ui), first(text, ui))


def _context(
    ui: str, links: Links, switch_path: str, *, shared: bool = False, **extra: Any
) -> dict[str, Any]:
    """What the templates use: interface words from L/TL/count/fmt/why, record text from texts/title.
    `shared`: one page for every interface language (static site): English words, which
    static/lang.js turns into Korean when the address ends in #ko (see site.py), and the record's
    languages marked for library.css to order and show per language without a script."""
    t = strings()[ui]

    def each(make: Callable[[str], str]) -> str:
        return make(ui)

    other = next(lang for lang in UI_LANGUAGES if lang != ui)
    return {
        "ui": ui,
        "t": t,
        "links": links,
        "term_label": lambda kind, term: _label_in(ui, kind, term),
        "count": lambda key, n: each(lambda lang: _number_in(lang, key, n)),
        "shared": shared,
        "strings_of": lambda lang: strings()[lang],
        "L": lambda key: each(lambda lang: strings()[lang][key]),
        "TL": lambda kind, term: each(lambda lang: _label_in(lang, kind, term)),
        "fmt": lambda key, **values: each(lambda lang: _fmt_in(lang, key, values)),
        "texts": lambda text, tag="p": _texts(text, tag, ui, shared),
        "title": lambda text: _title(text, ui, shared),
        "why": lambda rel: each(lambda lang: _why_in(lang, rel)),
        "why_data": _why_data,
        "other_ui": other,
        "other_url": switch_path.replace("{ui}", other),
        **extra,
    }


def search_page(
    ui: str, links: Links, result: SearchResult, *, switch: str, client_side: bool = False
) -> str:
    """The search page: a form, facet filters and the results (all records, filtered in the browser,
    when `client_side`)."""
    pages = max(1, -(-result.total // result.page_size))
    return _ENV.get_template("search.html").render(
        _context(ui, links, switch, result=result, pages=pages, client_side=client_side)
    )


def incident_page(ui: str, links: Links, incident: Incident, *, switch: str, shared: bool = False) -> str:
    """An incident's page; `shared`: for every interface language (see _context)."""
    return _ENV.get_template("incident.html").render(
        _context(ui, links, switch, shared=shared, incident=incident, record=incident.record)
    )


def topic_page(ui: str, links: Links, topic: Topic, *, switch: str, shared: bool = False) -> str:
    return _ENV.get_template("topic.html").render(_context(ui, links, switch, shared=shared, topic=topic))


def not_found_page(ui: str, links: Links, record_id: str, *, switch: str) -> str:
    return _ENV.get_template("not_found.html").render(_context(ui, links, switch, record_id=record_id))


def error_page(ui: str, links: Links, message: str, *, switch: str) -> str:
    """A bad filter or page number on an HTML page: said in words, with the way back."""
    return _ENV.get_template("error.html").render(_context(ui, links, switch, message=message))
