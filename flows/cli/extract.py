"""`incidents extract PAGE`: print the extracted Document; writes nothing."""

from __future__ import annotations

import mimetypes
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from schema.errors import InputError


class Format(StrEnum):
    json = "json"
    text = "text"
    markdown = "markdown"


def _markdown(doc: object) -> str:
    """Headings as '#' lines, list items as '- ', table rows as '| ... |', code fenced."""
    from schema.document import Document

    assert isinstance(doc, Document)
    out: list[str] = []
    prev = None
    for block in doc.blocks:
        body = doc.block_text(block)
        if block.kind == "heading":
            line = "#" * min(6, max(1, block.level)) + " " + body
        elif block.kind == "list_item":
            line = "  " * max(0, block.level - 1) + "- " + body
        elif block.kind == "table_row":
            line = "| " + body + " |"
        elif block.kind == "code":
            line = "```\n" + body + "\n```"
        elif block.kind == "quote":
            line = "> " + body
        else:
            line = body
        tight = prev == block.kind and block.kind in ("list_item", "table_row")
        out.append(("\n" if tight else "\n\n") + line if out else line)
        prev = block.kind
    return "".join(out)


def register(app: typer.Typer) -> None:
    """Add the `extract` command to the root app."""

    @app.command("extract")
    def extract(
        page: Annotated[Path, typer.Argument(help="A saved page: HTML, Markdown or plain text.")],
        url: Annotated[
            str | None, typer.Option("--url", help="The page's address (for links and format sniffing).")
        ] = None,
        fmt: Annotated[
            Format, typer.Option("--format", help="json: the Document; text; markdown.")
        ] = Format.json,
    ) -> None:
        """Print the extracted document (article text, blocks, sections, metadata); writes nothing."""
        from extractors import extract_document

        if not page.is_file():
            raise InputError(f"{page}: no such file")
        data = page.read_bytes()
        content_type, _ = mimetypes.guess_type(page.name)
        if page.name.lower().endswith((".md", ".markdown", ".md.erb")):
            content_type = "text/markdown"
        # the file name decides the format when no URL says otherwise
        doc = extract_document(data, url=url, content_type=content_type)
        if fmt is Format.json:
            print(doc.model_dump_json(indent=2))
        elif fmt is Format.text:
            print(doc.text)
        else:
            print(_markdown(doc))
