"""`incidents mcp`: the records library as an MCP server over stdio (official SDK, 2.x API)."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from flows.library.index import MAX_PAGE_SIZE, LibraryIndex, Query
from flows.library.models import Incident, SearchResult, Topic, TopicKind, Vocab
from flows.library.terms import vocab as vocabularies
from flows.settings import VERSION, Settings
from schema.errors import IngestError
from schema.types import (
    LANG_PATTERN,
    RECORD_ID_PATTERN,
    Component,
    Contributing,
    Domain,
    RootCause,
    Severity,
    Symptom,
)

INSTRUCTIONS = """\
Approved incident records (postmortems turned into structured, human-reviewed records), each with
an id (IL-NNNN), its organisation, date, title and summary in the languages the source has, its
root cause, components, symptoms and contributing factors as vocabulary terms, and its sources.
Use search_incidents to ask "has this happened before?" (words in any language, and filters by
vocabulary term), get_incident for one record and the incidents related to it, get_topic for the
records sharing one term, and vocab for the terms and their English and Korean labels."""

DATE = r"^\d{4}-\d{2}-\d{2}$"
FACETS_SHOWN = 10
Page = Annotated[int, Field(ge=1, description="Page number, from 1.")]
PageSize = Annotated[int, Field(ge=1, le=MAX_PAGE_SIZE, description="Records per page.")]
Date = Annotated[str | None, Field(pattern=DATE, description="ISO date, YYYY-MM-DD.")]
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def build_server(settings: Settings) -> MCPServer:
    """The MCP server answering from the data directory's library index."""
    index = LibraryIndex.for_settings(settings)
    server: MCPServer = MCPServer(name="incident-library", instructions=INSTRUCTIONS, version=VERSION)

    def run_query(query: Query) -> SearchResult:
        try:
            result = index.search(query)
        except IngestError as exc:
            raise ToolError(str(exc)) from None
        # The most frequent terms of each facet: enough to narrow a search, short enough for a prompt.
        result.facets = {kind: counts[:FACETS_SHOWN] for kind, counts in result.facets.items() if counts}
        return result

    @server.tool(annotations=READ_ONLY)
    def search_incidents(
        query: Annotated[
            str, Field(description="Words to find in any language (a word inside a sentence matches).")
        ] = "",
        component: Annotated[
            list[Component],  # type: ignore[valid-type]
            Field(description="Components the incident involved (all must match)."),
        ] = [],  # noqa: B006 (pydantic copies defaults)
        root_cause: RootCause | None = None,  # type: ignore[valid-type]
        symptom: list[Symptom] = [],  # type: ignore[valid-type]  # noqa: B006
        contributing: list[Contributing] = [],  # type: ignore[valid-type]  # noqa: B006
        domain: list[Domain] = [],  # type: ignore[valid-type]  # noqa: B006
        severity: Severity | None = None,  # type: ignore[valid-type]
        org: Annotated[str | None, Field(description="Organisation name or slug.")] = None,
        lang: Annotated[
            str | None, Field(pattern=LANG_PATTERN, description="Only records with text in this language.")
        ] = None,
        since: Date = None,
        until: Date = None,
        page: Page = 1,
        page_size: PageSize = 10,
    ) -> SearchResult:
        """Search the incident records: full text in every language, ranked, with filters and facet counts
        (the 10 most frequent terms of each facet)."""
        return run_query(
            Query(
                q=query,
                component=tuple(component),
                root_cause=(root_cause,) if root_cause else (),
                symptom=tuple(symptom),
                contributing=tuple(contributing),
                domain=tuple(domain),
                severity=(severity,) if severity else (),
                org=org,
                lang=lang,
                since=since,
                until=until,
                page=page,
                page_size=page_size,
            )
        )

    @server.tool(annotations=READ_ONLY)
    def get_incident(
        id: Annotated[str, Field(pattern=RECORD_ID_PATTERN, description="Record id, e.g. IL-0042.")],
    ) -> Incident:
        """One incident record in full, and the incidents related to it (shared cause or components)."""
        found = index.incident(id)
        if found is None:
            raise ToolError(f"no incident {id} in the records")
        return found

    @server.tool(annotations=READ_ONLY)
    def list_incidents(
        org: Annotated[str | None, Field(description="Organisation name or slug.")] = None,
        since: Date = None,
        until: Date = None,
        page: Page = 1,
        page_size: PageSize = 20,
    ) -> SearchResult:
        """The incident records, newest first."""
        return run_query(
            Query(
                org=org, since=since, until=until, page=page, page_size=page_size, sort="newest", facets=False
            )
        )

    @server.tool(annotations=READ_ONLY)
    def get_topic(
        kind: Annotated[TopicKind, Field(description="Which vocabulary the term is from.")],
        term: Annotated[str, Field(description="A vocabulary term, e.g. node-image (see the vocab tool).")],
        page: Page = 1,
        page_size: PageSize = 20,
    ) -> Topic:
        """The records sharing one vocabulary term (a root cause, a component, ...), newest first."""
        try:
            return index.topic(kind, term, page=page, page_size=page_size)
        except IngestError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(annotations=READ_ONLY)
    def vocab(
        kind: Annotated[TopicKind | None, Field(description="One vocabulary; all when left out.")] = None,
    ) -> Vocab:
        """The vocabularies records are tagged with: each term's labels (en, ko), definition and aliases."""
        return vocabularies(kind)

    return server


def serve_stdio(settings: Settings) -> None:
    """Run the server on stdin/stdout until the client closes the pipe."""
    build_server(settings).run()
