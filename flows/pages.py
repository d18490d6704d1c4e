"""Reading a saved page from disk: type by suffix, and a clear refusal of what is not a page."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from schema.errors import InputError

PAGE_TYPES = {
    ".html": "text/html",
    ".htm": "text/html",
    ".xhtml": "application/xhtml+xml",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
}
WARC_SUFFIXES = (".warc", ".warc.gz")
MAX_PAGE_BYTES = 64 * 1024 * 1024  # far above any real article; stops a mistaken disk image

_MAGIC = {
    b"%PDF": "a PDF document",
    b"\x89PNG": "a PNG image",
    b"GIF8": "a GIF image",
    b"\xff\xd8\xff": "a JPEG image",
    b"PK\x03\x04": "a ZIP archive",
    b"\x1f\x8b": "gzip-compressed data",
    b"\x7fELF": "an executable",
}


@dataclass(frozen=True)
class Page:
    path: Path
    data: bytes
    content_type: str

    @property
    def file_url(self) -> str:
        return self.path.resolve().as_uri()


def is_warc(path: Path) -> bool:
    return path.name.lower().endswith(WARC_SUFFIXES)


def binary_kind(data: bytes) -> str | None:
    """What the bytes are, when they are plainly not text; None for text."""
    for magic, kind in _MAGIC.items():
        if data.startswith(magic):
            return kind
    head = data[:8192]
    # UTF-16 text has NULs too, but pages in UTF-16 start with a BOM.
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "binary data"
    return None


def read_page(path: Path) -> Page:
    """The page at `path`, or InputError saying what is wrong with it and what to give instead."""
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path} is a directory: give a page file (.html, .md, .txt)")
    suffix = path.suffix.lower()
    content_type = PAGE_TYPES.get(suffix)
    if content_type is None:
        kinds = ", ".join(PAGE_TYPES)
        raise InputError(f"{path}: unsupported file type {suffix or '(none)'}; pages are {kinds}")
    size = path.stat().st_size
    if size == 0:
        raise InputError(f"{path} is empty: nothing to extract")
    if size > MAX_PAGE_BYTES:
        raise InputError(f"{path} is {size} bytes, over the {MAX_PAGE_BYTES}-byte page limit")
    data = path.read_bytes()
    kind = binary_kind(data)
    if kind:
        raise InputError(f"{path} is binary content ({kind}), not a page")
    return Page(path=path, data=data, content_type=content_type)
