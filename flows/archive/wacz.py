"""`archive export --wacz`: package raw/'s WARC files as WACZ 1.1.1 with py-wacz."""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from flows.archive.store import Archive
from flows.settings import VERSION
from schema.errors import ArchiveError

PAGE_MIMES = ("text/html", "application/xhtml+xml", "text/plain", "text/markdown")


@contextlib.contextmanager
def _offline_suffix_list() -> Iterator[None]:
    """py-wacz reaches tldextract through surt (for its public-suffix option), and tldextract's
    default downloads the suffix list on first use; its bundled snapshot must do, offline."""
    import tldextract

    saved = tldextract.extract
    tldextract.extract = tldextract.TLDExtract(suffix_list_urls=())  # type: ignore[assignment]
    try:
        yield
    finally:
        tldextract.extract = saved


@contextlib.contextmanager
def _our_software() -> Iterator[None]:
    """datapackage.json's `software` names incident-ingest beside py-wacz. py-wacz writes it in
    generate_datapackage and hashes what that returns into datapackage-digest.json, so the
    name is set there (for this call only), and the digest covers it."""
    from wacz.waczindexer import WACZIndexer

    saved = WACZIndexer.generate_datapackage

    def generate(self: WACZIndexer, res: object, wacz: object) -> str:
        package = json.loads(saved(self, res, wacz))
        package["software"] = f"incident-ingest {VERSION} with {package.get('software') or 'py-wacz'}"
        return json.dumps(package, indent=2)

    WACZIndexer.generate_datapackage = generate
    try:
        yield
    finally:
        WACZIndexer.generate_datapackage = saved


def page_title(data: bytes, content_type: str | None, mime: str | None) -> str | None:
    """The page's title as extraction reads it (og:/JSON-LD title, else <title> matched against
    the first heading, without the site name); a text page's first line."""
    from extractors.decode import decode_bytes

    text, _codec, _warnings = decode_bytes(data, content_type)
    if mime in ("text/html", "application/xhtml+xml"):
        from extractors.html import parse_html
        from extractors.metadata import page_title as title_of
        from extractors.metadata import read_metadata

        try:
            tree = parse_html(text)
        except Exception:  # noqa: BLE001 - whatever lxml raises, an unparseable page keeps its URL as title
            return None
        md = read_metadata(tree)
        heading = next((" ".join(h.text_content().split()) for h in tree.iter("h1")), None)
        title = md.title or title_of(md, heading)
    else:
        title = next((line.strip().lstrip("#").strip() for line in text.splitlines() if line.strip()), None)
    return " ".join(title.split())[:300] if title else None


def _pages(archive: Archive) -> list[dict[str, object]]:
    """One entry per web page (its newest capture), titled as extraction reads it. Only http(s)
    pages: a saved page without its web address (urn:) has no place in a list of pages."""
    pages: dict[str, dict[str, object]] = {}
    for capture in archive.captures():
        if capture.kind in ("unchanged",) or capture.mime not in PAGE_MIMES:
            continue
        if capture.status not in (None, 200) or not capture.url.startswith(("http://", "https://")):
            continue
        pages[capture.url] = {"url": capture.url, "ts": capture.captured_at, "id": capture.id}
    for page in pages.values():
        title = None
        with contextlib.suppress(ArchiveError):
            capture = archive.get(str(page["id"]))
            title = page_title(archive.read_payload(capture.id), capture.content_type, capture.mime)
        page["title"] = title or page["url"]
    return list(pages.values())


def describe(archive: Archive, pages: list[dict[str, object]]) -> tuple[str, str]:
    """datapackage.json's title and description."""
    operator = archive.settings.archive_operator
    title = f"Incident postmortems archived by {operator}" if operator else "Incident postmortems"
    stamps = sorted(str(p["ts"]) for p in pages)
    span = f", captured {stamps[0][:10]} to {stamps[-1][:10]}" if stamps else ""
    description = (
        f"{len(pages)} web pages of incident postmortems{span}, archived by incident-ingest {VERSION} "
        "(fetched politely, robots.txt obeyed) as the sources of human-reviewed incident records."
    )
    return title, description


def export_wacz(archive: Archive, out: Path) -> int:
    """Write `out` atomically; returns the number of WARC files packaged."""
    from wacz.main import main as wacz_main

    warcs = [archive.raw / row["name"] for row in archive.index.files()]
    warcs = [p for p in warcs if p.exists() and p.stat().st_size > 0]
    if not warcs:
        raise ArchiveError(f"nothing to export: {archive.raw} holds no WARC files yet")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".wacz-") as work:
        pages = Path(work) / "pages.jsonl"
        listed = _pages(archive)
        lines = [json.dumps({"format": "json-pages-1.0", "id": "pages", "title": "All Pages"})]
        lines += [json.dumps(page, ensure_ascii=False) for page in listed]
        pages.write_text("\n".join(lines) + "\n", encoding="utf-8")
        target = Path(work) / "out.wacz"
        title, description = describe(archive, listed)
        args = ["create", "-o", str(target), "-p", str(pages), "--title", title, "--desc", description]
        args += [*map(str, warcs)]
        log = io.StringIO()
        with (
            _offline_suffix_list(),
            _our_software(),
            contextlib.redirect_stdout(log),
            contextlib.redirect_stderr(log),
        ):
            code = wacz_main(args)
        if code not in (0, None) or not target.exists():
            raise ArchiveError(f"py-wacz could not package raw/: {log.getvalue().strip()[-500:]}")
        with open(target, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(target, out)
    return len(warcs)
