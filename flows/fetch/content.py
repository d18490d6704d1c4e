"""Which media types we archive and draft from, and a sniff for responses that name none."""

from __future__ import annotations

ACCEPTED_TYPES = frozenset(
    {"text/html", "application/xhtml+xml", "text/plain", "text/markdown", "text/x-markdown"}
)

# Leading bytes of formats that servers mislabel or leave unlabelled.
_SIGNATURES = (
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG", "image/png"),
    (b"GIF8", "image/gif"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"RIFF", "application/octet-stream"),
)


def media_type(content_type: str | None) -> str | None:
    """`text/html; charset=EUC-KR` -> `text/html`."""
    if not content_type:
        return None
    return content_type.split(";", 1)[0].strip().lower() or None


def sniff(head: bytes) -> str:
    """A media type for bytes that came without one: binary formats by signature, else text."""
    for magic, kind in _SIGNATURES:
        if head.startswith(magic):
            return kind
    if b"\x00" in head[:1024]:
        return "application/octet-stream"
    stripped = head.lstrip()[:256].lower()
    if stripped.startswith((b"<!doctype html", b"<html", b"<head", b"<?xml")) or b"<body" in stripped:
        return "text/html"
    return "text/plain"


def is_accepted(kind: str | None) -> bool:
    return kind in ACCEPTED_TYPES
