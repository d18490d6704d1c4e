"""The library's HTML pages (search, incident, topic) in English and Korean, for the app and the static site.

One set of templates serves both: a `Links` value says where pages live (app routes under
/library/, or relative .html files that work from file:// and GitHub Pages).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape

from flows.library.models import FACET_KINDS, TOPIC_KINDS, UI_LANGUAGES, Incident, SearchResult, Topic
from flows.library.terms import labels

TEMPLATES = Path(__file__).parent / "templates"
# Records on one page of a topic, in the app and on the static site.
TOPIC_PAGE_SIZE = 50
STATIC = Path(__file__).parent / "static"


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


def _context(ui: str, links: Links, switch_path: str, **extra: Any) -> dict[str, Any]:
    t = strings()[ui]

    def term_label(kind: str, term: str) -> str:
        found = labels(kind, term) if kind in TOPIC_KINDS else {}
        return found.get(ui) or found.get("en") or term

    def count(key: str, n: int) -> str:
        """An interface string with a number: its `_one` form for 1 where the language has one."""
        return (t.get(f"{key}_one", t[key]) if n == 1 else t[key]).replace("{n}", str(n))

    other = next(lang for lang in UI_LANGUAGES if lang != ui)
    return {
        "count": count,
        "ui": ui,
        "t": t,
        "links": links,
        "term_label": term_label,
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


def incident_page(ui: str, links: Links, incident: Incident, *, switch: str) -> str:
    return _ENV.get_template("incident.html").render(
        _context(ui, links, switch, incident=incident, record=incident.record)
    )


def topic_page(ui: str, links: Links, topic: Topic, *, switch: str) -> str:
    return _ENV.get_template("topic.html").render(_context(ui, links, switch, topic=topic))


def not_found_page(ui: str, links: Links, record_id: str, *, switch: str) -> str:
    return _ENV.get_template("not_found.html").render(_context(ui, links, switch, record_id=record_id))


def error_page(ui: str, links: Links, message: str, *, switch: str) -> str:
    """A bad filter or page number on an HTML page: said in words, with the way back."""
    return _ENV.get_template("error.html").render(_context(ui, links, switch, message=message))
