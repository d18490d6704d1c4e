"""`incidents draft PAGE`: print the draft the pipeline would queue; archives and queues nothing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from flows.cli.common import error, usage_error
from flows.clock import utc_now
from flows.pages import read_page
from flows.settings import Settings, is_set
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
        from extractors import draft_page
        from extractors.draft import explain_draft

        saved = read_page(page)
        drafted = draft_page(
            saved.data, url=url or saved.file_url, content_type=saved.content_type, now=utc_now()
        )
        result = drafted.draft
        settings = _model_settings()
        if settings is not None:  # model-assisted drafting; without an endpoint nothing changes
            from flows.model import refine_with_model

            result, report = refine_with_model(result, drafted.document, settings)
            print(report.line(), file=sys.stderr)
        if explain or fmt == "text":
            from extractors.model.explain import explain_model

            print(explain_draft(result) + explain_model(result))
        else:
            print(dumps_model(result), end="")


def _model_settings() -> Settings | None:
    """Settings when a model endpoint is set, else None: without one, `draft` reads no settings
    at all, as before (a bad unrelated INCIDENTS_ variable does not stop it)."""
    if not is_set("llm_base_url"):  # in the environment or ./.env
        return None
    from pydantic import ValidationError

    try:
        return Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        name = "INCIDENTS_" + str(first["loc"][0]).upper() if first["loc"] else "INCIDENTS_*"
        error(f"{name}: {first['msg']}")  # a configuration error: exit 2, like a usage error
        raise typer.Exit(2) from exc
