"""`incidents export --site`: the static site, opened from a file:// path in headless Chromium."""

from __future__ import annotations

import gzip
import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from flows.library.index import LibraryIndex, Query
from flows.library.site import pack, shard_key, unpack
from flows.library.tokens import query_words, stem, tokens
from flows.settings import Settings
from tests.cli import run

CHROMIUM = Path("/usr/bin/chromium")
AXE = Path("/tmp/axe-core/node_modules/axe-core/axe.min.js")  # npm install --prefix /tmp/axe-core axe-core
needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"
)


def _shard(path: Path) -> Any:
    """The data of one search-index script: LIBRARY.shard(name, DATA);"""
    text = path.read_text(encoding="utf-8")
    return json.loads(text[text.index(",") + 1 : text.rindex(")")].replace("<\\/", "</"))


@pytest.fixture
def site(library_settings: Settings, capsys: pytest.CaptureFixture[str]) -> Path:
    out = library_settings.data_dir.parent / "site"
    result = run(capsys, "export", "--site", str(out), "--data-dir", str(library_settings.data_dir))
    assert result.code == 0, result.err
    assert "exported 5 record(s)" in result.out
    return out


def test_the_site_files(site: Path) -> None:
    assert (site / "index.html").is_file() and (site / ".nojekyll").is_file()
    for ui in ("en", "ko"):
        assert (site / ui / "index.html").is_file()
    # One incident page and one topic page for both languages; the Korean addresses lead there.
    for name in ("incidents/IL-0101.html", "topics/component/node-image.html"):
        assert 'id="ko"' in (site / "en" / name).read_text(encoding="utf-8").replace("id=ko", 'id="ko"')
        assert f"{name}#ko" in (site / "ko" / name).read_text(encoding="utf-8")
    search = site / "static" / "search"
    manifest = _shard(search / "manifest.js")
    assert manifest["records"] == 5 and "at-component" in manifest["shards"]
    # The list data, newest first; the tokens of flows/library/tokens.py, sharded.
    assert [row[0] for row in _shard(search / "m0.js")] == [
        "IL-0042",
        "IL-0102",
        "IL-0101",
        "IL-0103",
        "IL-0104",
    ]
    rows = _shard(search / f"{shard_key('커널')}.js")["rows"]
    assert "커널" in rows and [n // 16 for n in unpack(rows["커널"])] == [2]  # IL-0101, third newest
    assert "인증" in _shard(search / f"{shard_key('인증')}.js")["terms"]  # IL-0042's term's Korean label
    lines = gzip.decompress((site / "records.jsonl.gz").read_bytes()).decode("utf-8").splitlines()
    assert len(lines) == 5
    # Every link is relative: the site works from any folder and on GitHub Pages.
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert 'href="/' not in html and 'src="/' not in html, page


def test_postings_pack_into_short_strings() -> None:
    numbers = [0, 1, 31, 32, 33, 1023, 1024, 5000, 160_000, 2**31 + 7]
    packed = pack(numbers)
    assert unpack(packed) == numbers and len(pack([5, 40, 900])) == 5  # 1 + 2 + 2 characters
    assert unpack(pack([])) == [] and set(packed) <= set(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"
    )


def test_export_never_replaces_a_folder_it_did_not_write(
    library_settings: Settings, site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("--data-dir", str(library_settings.data_dir))
    # Its own site: rebuilt in place, a removed record's page gone.
    (library_settings.records_dir / "IL-0104.json").unlink()
    assert run(capsys, "export", "--site", str(site), *args).code == 0
    assert not (site / "en" / "incidents" / "IL-0104.html").exists()
    # Someone else's folder: refused, untouched.
    other = library_settings.data_dir.parent / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("keep me", encoding="utf-8")
    result = run(capsys, "export", "--site", str(other), *args)
    assert result.code == 1
    assert "not a site written by this command" in result.err
    assert "Traceback" not in result.err
    assert [p.name for p in other.iterdir()] == ["todo.txt"]
    assert not [p for p in other.parent.iterdir() if ".building-" in p.name]


@needs_chromium
def test_the_site_works_from_a_file_path_in_chromium(site: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto((site / "index.html").as_uri())
            page.wait_for_url("**/en/index.html")

            def shown() -> list[str]:
                page.wait_for_function("!document.querySelector('#incidents[aria-busy=true]')")
                # The search page's rows say their record (data-id); a topic page's rows link to it.
                return page.eval_on_selector_all(
                    "ol.incidents > li:not([hidden])",
                    "els => els.map(e => e.dataset.id || e.querySelector('a').href.match(/IL-\\d+/)[0])",
                )

            assert shown() == ["IL-0042", "IL-0102", "IL-0101", "IL-0103", "IL-0104"]
            # The stylesheet applies (a relative link from file://).
            assert page.eval_on_selector("main", "e => getComputedStyle(e).maxWidth") == "1024px"

            page.fill("#q", "커널")  # Korean, inside a sentence
            assert shown() == ["IL-0101"]
            assert page.inner_text("#total") == "1 incident"
            page.fill("#q", "ami")  # IL-0102 through its node-image term's alias AMI
            assert shown() == ["IL-0102", "IL-0101"]
            assert page.inner_text('li[data-id="IL-0101"] mark') == "AMI"  # the match marked in the title
            page.fill("#q", "障害")  # Japanese, inside a sentence
            assert shown() == ["IL-0102"]
            page.fill("#q", "")
            page.select_option("#f-component", "node-image")  # the same records as the API and MCP
            assert shown() == ["IL-0102", "IL-0101"]
            page.fill("#q", "nothing-like-this")
            assert shown() == [] and page.is_visible(".results .empty")
            page.fill("#q", "")
            page.select_option("#f-component", "")

            page.click('li[data-id="IL-0101"] a.title')
            page.wait_for_url("**/en/incidents/IL-0101.html")
            assert page.inner_text("h1").startswith("회수된 노드 AMI")
            assert "https://tech.nimbus.example/ko/2024/ami-rollover" in page.inner_text(".sources")
            assert "IL-0102" in page.inner_text(".related")

            page.click('a.tag[href$="topics/component/node-image.html"]')
            page.wait_for_url("**/en/topics/component/node-image.html")
            assert shown() == ["IL-0102", "IL-0101"]

            # One topic page for both languages: the switch shows it in Korean (#ko), and the links
            # from it keep Korean.
            page.click("a.switch.en")
            page.wait_for_url("**/en/topics/component/node-image.html#ko")
            assert page.is_visible("a.home.ko") and not page.is_visible("a.home.en")
            assert "사례 2건" in page.inner_text("main") and page.inner_text("h1") == "노드 이미지"
            page.click('ol.incidents a[href*="IL-0102.html"]')
            page.wait_for_url("**/en/incidents/IL-0102.html#ko")
            assert "근본 원인" in page.inner_text("main") and "Root cause" not in page.inner_text("main")
            assert page.get_attribute("h1", "lang") == "ja"
            assert "같은 원인" in page.inner_text(".related")  # why, in Korean
            page.click("a.switch.ko")  # back to English, same page
            page.wait_for_url("**/en/incidents/IL-0102.html#en")
            assert "Root cause" in page.inner_text("main") and "same root cause" in page.inner_text(
                ".related"
            )

            # The Korean addresses of incident and topic pages lead to the shared page in Korean.
            page.goto((site / "ko" / "incidents" / "IL-0101.html").as_uri())
            page.wait_for_url("**/en/incidents/IL-0101.html#ko")
            assert "근본 원인" in page.inner_text("main")
            page.goto((site / "ko" / "topics" / "component" / "kubelet.html").as_uri())
            page.wait_for_url("**/en/topics/component/kubelet.html#ko")
            assert page.inner_text("h1") == "큐블릿"
            # From the Korean search page straight to the shared page in Korean.
            page.goto((site / "ko" / "index.html").as_uri())
            shown()
            page.click('li[data-id="IL-0104"] a.title')
            page.wait_for_url("**/en/incidents/IL-0104.html#ko")
            assert errors == []
        finally:
            browser.close()


def test_the_site_needs_no_shared_state(site: Path, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere"
    shutil.copytree(site, moved)
    html = (moved / "en" / "incidents" / "IL-0042.html").read_text(encoding="utf-8")
    assert "../../static/library.css" in html


WORDS = [
    "Certificates", "caches", "failed", "stopping", "installed", "policies", "classes", "analysis",
    "ＡＭＩ", "GPUノードの障害", "매일 노드를 롤오버하는", "cert-manager", "naïve", "x_y", "2024-10-31",
]  # fmt: skip
QUERIES = ["인증서 cert* 커 障害 expired-certificate", '"kubelet" NotReady*', "-- !!", "ノードイメージ"]


@needs_chromium
def test_the_browser_tokenizes_as_the_server(site: Path) -> None:
    """static/search.js repeats flows/library/tokens.py: the same tokens, stems and query words."""
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto((site / "en" / "index.html").as_uri())
            got = page.evaluate(
                "([words, queries, keys]) => ({"
                "  tokens: words.map(LIBRARY.tokens), stems: words.map(w => LIBRARY.stem(w.toLowerCase())),"
                "  queries: queries.map(q => LIBRARY.queryWords(q).map(w => [w.text, w.phrase, w.prefix])),"
                "  keys: keys.map(LIBRARY.shardKey)})",
                [WORDS, QUERIES, ["certificat", "커널", "障害", "@component:kubelet", "9x"]],
            )
        finally:
            browser.close()
    assert got["tokens"] == [tokens(w) for w in WORDS]
    assert got["stems"] == [stem(w.lower()) for w in WORDS]
    assert got["queries"] == [[[w.text, list(w.phrase), w.prefix] for w in query_words(q)] for q in QUERIES]
    assert got["keys"] == [shard_key(k) for k in ["certificat", "커널", "障害", "@component:kubelet", "9x"]]


AGREE = [
    "커널", "障害", "인증서", "証明書", "캐시", "certificates", "cert*", "kube*", "NotReady", "롤오버 daily",
    "커널 kernel", "memory leak", "larkspur", "노드", "障", "expired certificate", "zone",
]  # fmt: skip


@needs_chromium
def test_the_site_and_the_server_find_the_same_records(site: Path, library_settings: Settings) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    with LibraryIndex.for_settings(library_settings) as index:
        expected = {q: sorted(i.id for i in index.search(Query(q=q, page_size=100)).items) for q in AGREE}
    found: dict[str, list[str]] = {}
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto((site / "ko" / "index.html").as_uri())
            for q in AGREE:
                page.fill("#q", q)
                page.wait_for_selector("#incidents[aria-busy=false]", state="attached")
                found[q] = sorted(
                    page.eval_on_selector_all("#incidents li.incident", "els => els.map(e => e.dataset.id)")
                )
        finally:
            browser.close()
    assert found == expected
    assert expected["인증서"] == ["IL-0042"] and expected["커널"] == ["IL-0101"]


class _Parsed(HTMLParser):
    """A page as a browser's parser reads it: (tag, attributes) and text, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[Any] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.items.append((tag, sorted(attrs)))

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.items.append(" ".join(data.split()))


def _parsed(html: str) -> list[Any]:
    parser = _Parsed()
    parser.feed(html)
    return parser.items


def test_the_smaller_pages_say_the_same(library_settings: Settings) -> None:
    """Unquoted attributes and no lang="en" below <body> (the <html> element says it): the same
    elements, attributes and text as the templates wrote, for an incident's shared page."""
    from flows.library.pages import incident_page
    from flows.library.site import _compact, _links, _minify

    with LibraryIndex.for_settings(library_settings) as index:
        incident = index.incident("IL-0101")
    assert incident is not None
    ui = "en"
    html = _compact(incident_page(ui, _links(ui, 2, "incidents/"), incident, switch="", shared=True))
    small = _minify(html, ui)
    assert len(small) < len(html) and 'class="tag"' not in small and "class=tag" in small
    assert ' lang="en"' in html and " lang=en" not in small.split("<body")[1]
    assert " lang=ko" in small.split("<body")[1]  # the Korean switch and text keep theirs
    expected = [
        (item[0], [a for a in item[1] if a != ("lang", ui) or item[0] == "html"])
        if isinstance(item, tuple)
        else item
        for item in _parsed(html)
    ]
    assert _parsed(small) == expected
    # A value HTML cannot leave unquoted, or one starting with "/", keeps its quotes.
    kept = '<html lang="en"><body><a href="/x" title="a b" data-q="x&amp;y" lang="ko">=&#34;</a>'
    assert _minify(kept, "en") == kept.replace('lang="en"', "lang=en").replace('lang="ko"', "lang=ko")


class _Targets(HTMLParser):
    """A page's links (href, src, <meta refresh> url) and element ids."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        self.urls += [str(found[name]) for name in ("href", "src") if found.get(name)]
        if tag == "meta" and str(found.get("http-equiv", "")).lower() == "refresh":
            self.urls.append(str(found.get("content", "")).split("url=", 1)[1])


def test_every_link_in_the_site_leads_to_its_page(site: Path) -> None:
    """Walk the built site: every relative link (and <meta refresh>) names a file of the site, and its
    #fragment an element of that page (#ko and #en: the shared pages' languages)."""
    root = site.resolve()
    pages: dict[Path, _Targets] = {}
    for path in root.rglob("*.html"):
        pages[path] = _Targets()
        pages[path].feed(path.read_text(encoding="utf-8"))
    broken, followed = [], 0
    for path, parsed in pages.items():
        for url in parsed.urls:
            parts = urlsplit(url)
            if parts.scheme or parts.netloc:
                continue  # a record's source on the web
            followed += 1
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if root not in target.parents or not target.is_file():
                broken.append(f"{path.relative_to(root)}: {url}")
            elif parts.fragment and parts.fragment not in pages[target].ids:
                broken.append(f"{path.relative_to(root)}: {url} (no #{parts.fragment})")
    assert broken == []
    assert followed > 200 and len(pages) > 50  # the walk saw the site
    # A page the walk would have caught: a link to a record that is not in the site.
    missing = _Targets()
    missing.feed('<a href="IL-9999.html">')
    assert not (root / "en" / "incidents" / unquote(missing.urls[0])).is_file()


@needs_chromium
def test_the_shared_pages_read_in_both_languages_without_script(site: Path) -> None:
    """No script: the switch, the home link and the order of the record's languages follow #ko."""
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_context(java_script_enabled=False).new_page()
            url = (site / "en" / "incidents" / "IL-0101.html").as_uri()

            def first_lang() -> str:
                # IL-0101's summary, in Korean and English (lang=en: the <html> element's).
                boxes = {"en": ".v p:not([lang])", "ko": ".v p[lang=ko]"}
                ys = {lang: page.locator(where).bounding_box()["y"] for lang, where in boxes.items()}
                return min(ys, key=lambda lang: ys[lang])

            page.goto(url)
            assert page.is_visible("a.home.en") and not page.is_visible("a.home.ko")
            assert first_lang() == "en"  # the record's English summary leads on the English page
            page.click("a.switch.en")
            assert page.url.endswith("#ko")
            assert page.is_visible("a.home.ko") and not page.is_visible("a.home.en")
            assert page.is_visible("a.switch.ko") and page.inner_text("a.switch.ko") == "English"
            assert first_lang() == "ko"
            assert "Root cause" in page.inner_text("main")  # the interface words need the script
            page.click("a.switch.ko")
            assert first_lang() == "en"
        finally:
            browser.close()


@needs_chromium
@pytest.mark.skipif(not AXE.is_file(), reason=f"axe-core is not installed at {AXE}")
def test_the_site_has_no_serious_accessibility_violation(site: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    pages = [
        "en/index.html",
        "ko/index.html",
        "en/incidents/IL-0101.html",
        "en/incidents/IL-0101.html#ko",
        "en/incidents/IL-0102.html#ko",
        "en/topics/component/node-image.html",
        "en/topics/component/node-image.html#ko",
    ]
    found: dict[str, list[str]] = {}
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            for name in pages:
                page.goto((site / name.split("#")[0]).as_uri() + ("#ko" if name.endswith("#ko") else ""))
                page.add_script_tag(path=str(AXE))
                result = json.loads(page.evaluate("async () => JSON.stringify(await axe.run(document))"))
                found[name] = [
                    f"{v['impact']} {v['id']}: {[n['target'] for n in v['nodes']][:3]}"
                    for v in result["violations"]
                    if v["impact"] in ("critical", "serious")
                ]
        finally:
            browser.close()
    assert found == {name: [] for name in pages}
