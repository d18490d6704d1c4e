"""`incidents draft PAGE`: print the draft the pipeline would queue; archives and queues nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated

import typer

from flows.cli.common import usage_error
from flows.clock import utc_now
from flows.pages import read_page
from flows.store.atomic import dumps_model

Format = Annotated[str, typer.Option("--format", help="json (the draft) or text (for a person).")]


def register(app: typer.Typer) -> None:
    @app.command("draft")
    def draft(
        page: Annotated[Path, typer.Argument(help="A saved page: .html, .md or .txt.")],
        url: Annotated[str | None, typer.Option("--url", help="The page's address on the web.")] = None,
        fmt: Format = "json",
        explain: Annotated[
            bool, typer.Option("--explain", help="Each field with its evidence and confidence.")
        ] = False,
    ) -> None:
        """Print the draft of one saved page (the interface our evaluation uses)."""
        if fmt not in ("json", "text"):
            raise typer.BadParameter("must be json or text", param_hint="--format")
        if url and not url.lower().startswith(("http://", "https://")):
            usage_error(f"--url {url}: the web address of a saved page must be an http or https URL")
        from extractors import extract_document
        from extractors.draft import draft_document, explain_draft

        saved = read_page(page)
        doc = extract_document(saved.data, url=url or saved.file_url, content_type=saved.content_type)
        result = draft_document(
            doc,
            source_url=url or saved.file_url,
            snapshot=None,
            snapshot_digest="sha256:" + hashlib.sha256(saved.data).hexdigest(),
            now=utc_now(),
        )
        if explain or fmt == "text":
            print(explain_draft(result))
        else:
            print(dumps_model(result), end="")
