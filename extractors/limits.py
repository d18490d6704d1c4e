"""Cheap checks that bound the work and memory one page can cost, before any parser runs."""

from __future__ import annotations

from schema.errors import ExtractionError

# Magic numbers of formats that are never an article (checked on the first bytes only).
_MAGIC = (
    b"%PDF",
    b"\x89PNG",
    b"GIF8",
    b"\xff\xd8\xff",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"BZh",
    b"\xfd7zXZ",
    b"7z\xbc\xaf",
    b"\x7fELF",
    b"RIFF",
    b"OggS",
    b"\x00\x00\x01\x00",
    b"wOFF",
    b"wOF2",
)
# Share of control bytes (besides tab, newline, CR, FF, ESC) in the first 8 KiB above which input
# is binary: text pages have none; 0.05 leaves room for a few stray bytes in a legacy page.
_CONTROL_SHARE = 0.05
_SNIFF = 8192
# every byte but the C0 controls that text never holds (tab, newline, form feed, CR, ESC stay)
_TEXT_BYTES = bytes(b for b in range(256) if b >= 32 or b in (9, 10, 12, 13, 27))


def check_bytes(data: bytes, max_bytes: int) -> None:
    """Raise ExtractionError for empty, oversize or binary input; cost: one pass over 8 KiB."""
    if not data or not data.strip():
        raise ExtractionError("empty page")
    if len(data) > max_bytes:
        raise ExtractionError(f"page too large: {len(data)} bytes, limit {max_bytes}")
    head = data[:_SNIFF]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 BOM: text, decoded later
        return
    if head.startswith(_MAGIC):
        raise ExtractionError("binary content")
    control = len(head.translate(None, _TEXT_BYTES))  # what is left once text bytes are deleted
    if control > _CONTROL_SHARE * len(head):
        raise ExtractionError("binary content")
