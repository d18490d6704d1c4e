"""Plain-text sources: PGP clear-signing unwrapped, underlined/RD/ATX headings, lists, paragraphs."""

from __future__ import annotations

import re

from extractors.layout import TextBuilder, join_lines
from schema.headings import exact_role

_PGP_BEGIN = "-----BEGIN PGP SIGNED MESSAGE-----"
_PGP_SIG = re.compile(
    r"^-----BEGIN PGP SIGNATURE-----.*?(?:^-----END PGP SIGNATURE-----[ \t]*$|\Z)", re.S | re.M
)
_UNDERLINE = re.compile(r"^\s*(=+|-+|~+|\^+|\*+)\s*$")
_MARKED = re.compile(r"^(={1,6}|#{1,6})\s+(\S.*?)\s*(?:=+|#+)?\s*$")  # RD "== Title", ATX "## Title"
_BULLET = re.compile(r"^\s*(?:[*+\-\u2022\u30fb\u25cf\u25a0]|\d{1,3}[.)]|\(\d{1,3}\))\s+\S")
_DEFINITION = re.compile(r"^:\s+\S")  # RD ": term"
# "5/20 02:46 ...", "2024-06-01 10:00 ...": in a run of two or more, each starts a timeline entry
_TIMED = re.compile(r"^(?:\d{1,4}[/.\-]\d{1,2}(?:[/.\-]\d{1,4})?|\d{1,2}:\d{2})\s")
# a lone short line reads as a heading when it is a lexicon form ("Timeline", "1. 概要");
# 60 characters is longer than every lexicon form, shorter than most one-line paragraphs
_LONE_HEADING_CHARS = 60


def unwrap_pgp(text: str) -> tuple[str, bool]:
    """The signed text of a PGP clear-signed message (dash-escaping undone), and whether it was one."""
    start = text.find(_PGP_BEGIN)
    if start < 0:
        return text, False
    rest = text[start + len(_PGP_BEGIN) :].lstrip("\r\n")
    # armor headers ("Hash: SHA1") run up to the first blank line
    lines = rest.splitlines()
    i = 0
    while i < len(lines) and lines[i].strip() and ":" in lines[i]:
        i += 1
    body = "\n".join(lines[i:])
    body = _PGP_SIG.split(body, maxsplit=1)[0]
    body = "\n".join(line[2:] if line.startswith("- ") else line for line in body.splitlines())
    return body.strip("\n"), True


def parse_plaintext(text: str) -> tuple[TextBuilder, bool]:
    """Blocks of a plain-text document, and whether it was PGP clear-signed."""
    text, signed = unwrap_pgp(text.replace("\r\n", "\n").replace("\r", "\n"))
    builder = TextBuilder()
    for chunk in re.split(r"\n[ \t]*\n", text):
        _chunk(chunk, builder)
    return builder, signed


def _chunk(chunk: str, builder: TextBuilder) -> None:
    lines = [line.rstrip() for line in chunk.split("\n") if line.strip()]
    timed = sum(1 for line in lines if _TIMED.match(line)) >= 2

    def starts_item(line: str) -> bool:
        return bool(_BULLET.match(line) or _DEFINITION.match(line) or (timed and _TIMED.match(line)))

    i = 0
    para: list[str] = []
    items: list[str] = []

    def flush() -> None:
        if para:
            builder.add("paragraph", join_lines("\n".join(para)))
            para.clear()
        for item in items:
            builder.add("list_item", item, 1)
        items.clear()

    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if nxt and _UNDERLINE.match(nxt) and not _UNDERLINE.match(line) and len(nxt.strip()) >= 3:
            flush()
            builder.add("heading", line, 1 if nxt.strip()[0] == "=" else 2)
            i += 2
            continue
        m = _MARKED.match(line)
        if m and not _UNDERLINE.match(line):
            flush()
            builder.add("heading", m.group(2), len(m.group(1)))
            i += 1
            continue
        if len(lines) == 1 and len(line) <= _LONE_HEADING_CHARS and exact_role(line) not in (None, "skip"):
            builder.add("heading", line, 2)
            return
        if starts_item(line) or (items and line[:1].isspace()):
            if para:
                flush()
            if starts_item(line):
                items.append(re.sub(r"^\s*(?:[*+\-\u2022\u30fb\u25cf\u25a0]|:)\s+", "", line).strip())
            else:
                items[-1] = join_lines(items[-1] + "\n" + line)
            i += 1
            continue
        if items:
            flush()
        para.append(line)
        i += 1
    flush()
