"""`incidents draft PAGE`: print the draft the pipeline would queue; archives and queues nothing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from flows.clock import utc_now
from flows.pages import read_page
from flows.settings import Settings
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
        from extractors import draft_page
        from extractors.draft import explain_draft

        saved = read_page(page)
        drafted = draft_page(
            saved.data, url=url or saved.file_url, content_type=saved.content_type, now=utc_now()
        )
        result = drafted.draft
        settings = Settings()
        if settings.llm_base_url:  # model-assisted drafting; without an endpoint nothing changes
            from flows.model import refine_with_model

            result, report = refine_with_model(result, drafted.document, settings)
            print(report.line(), file=sys.stderr)
        if explain or fmt == "text":
            from extractors.model.explain import explain_model

            print(explain_draft(result) + explain_model(result))
        else:
            print(dumps_model(result), end="")
