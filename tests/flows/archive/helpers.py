"""Shared steps of the archive tests: fetch a routed page and archive it; run the warcio CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from flows.archive import Archive, Capture
from flows.fetch import Fetcher
from tests.httpserver import LoopbackServer, Reply

WARCIO = str(Path(sys.executable).with_name("warcio"))


def archive_page(
    fetcher: Fetcher,
    archive: Archive,
    server: LoopbackServer,
    path: str,
    body: bytes,
    content_type: str = "text/html; charset=utf-8",
    **headers: str,
) -> Capture:
    server.route(path, Reply(body=body, headers={"Content-Type": content_type, **headers}))
    result = fetcher.fetch(server.url(path))
    try:
        return archive.record_fetch(result)
    finally:
        result.discard()


def warcio(*args: str) -> subprocess.CompletedProcess[str]:
    """The real warcio command line, as an archivist would run it."""
    return subprocess.run([WARCIO, *args], capture_output=True, text=True, timeout=120, check=False)


def warc_files(raw: Path) -> list[Path]:
    return sorted(raw.rglob("*.warc.gz")) + sorted(raw.rglob("*.warc"))
