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


def _pages(archive: Archive) -> list[dict[str, object]]:
    pages: dict[str, dict[str, object]] = {}
    for capture in archive.captures():
        if capture.kind in ("unchanged",) or capture.mime not in PAGE_MIMES:
            continue
        if capture.status not in (None, 200) or not capture.url.startswith(("http://", "https://")):
            continue
        pages[capture.url] = {"url": capture.url, "ts": capture.captured_at, "title": capture.url}
    return list(pages.values())


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
        lines = [json.dumps({"format": "json-pages-1.0", "id": "pages", "title": "All Pages"})]
        lines += [json.dumps(page) for page in _pages(archive)]
        pages.write_text("\n".join(lines) + "\n", encoding="utf-8")
        target = Path(work) / "out.wacz"
        args = ["create", "-o", str(target), "-p", str(pages), *map(str, warcs)]
        log = io.StringIO()
        with _offline_suffix_list(), contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            code = wacz_main(args)
        if code not in (0, None) or not target.exists():
            raise ArchiveError(f"py-wacz could not package raw/: {log.getvalue().strip()[-500:]}")
        with open(target, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(target, out)
    return len(warcs)
