"""`incidents mcp`: the records library as an MCP server over stdio (official SDK, 2.x API)."""

from __future__ import annotations

import difflib
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import ConfigDict, Field, model_validator

from flows.library.index import LibraryIndex, Query, Sort
from flows.library.models import TOPIC_KINDS, Incident, SearchResult, Topic, TopicKind, Vocab
from flows.library.terms import vocab as vocabularies
from flows.settings import VERSION, Settings
from schema.errors import IngestError
from schema.types import LANG_PATTERN, RECORD_ID_PATTERN

INSTRUCTIONS = """\
Approved incident records (postmortems turned into structured, human-reviewed records), each with
an id (IL-NNNN), its organisation, date, title and summary in the languages the source has, its
root cause, components, symptoms and contributing factors as vocabulary terms, and its sources.
Use search_incidents to ask "has this happened before?" (words in any language, vocabulary labels
in English, Korean and Japanese included; filters by vocabulary term; sort newest to list), get_incident
for one record and the incidents related to it, get_topic for the records sharing one term, and
vocab for the terms with their labels, definitions and aliases. Every list has pages of 20."""

DATE = r"^\d{4}-\d{2}-\d{2}$"
FACETS_SHOWN = 10
PAGE_SIZE = 20  # one page size for every tool
Page = Annotated[int, Field(ge=1, description=f"Page number, from 1 ({PAGE_SIZE} records a page).")]
Date = Annotated[str | None, Field(pattern=DATE, description="ISO date, YYYY-MM-DD.")]
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def _terms(kind: str, example: str) -> Any:
    """A filter of vocabulary terms: plain strings checked by the server (a misspelt term's error names
    the nearest ones), so the tool list does not carry every vocabulary."""
    return Field(
        description=f"Terms of the {TOPIC_KINDS[kind][0]} vocabulary (the vocab tool lists them), "
        f"e.g. {example}; a record must have all of them."
    )


Components = Annotated[list[str], _terms("component", "kubelet")]
RootCauses = Annotated[list[str], _terms("root_cause", "expired-certificate")]
Symptoms = Annotated[list[str], _terms("symptom", "nodes-not-ready")]
ContributingFactors = Annotated[list[str], _terms("contributing", "monitoring-gap")]
Domains = Annotated[list[str], _terms("domain", "kubernetes")]
Severities = Annotated[list[str], _terms("severity", "sev1")]
LANG = "Only records with text in this language (en, ko, ja, ...)."
SORT = "relevance (the best match first; newest first without words), newest or oldest."


def _strict(tool: Tool) -> Tool:
    """Reject arguments the tool does not take (a client's `q` for `query`, a `limit`): a tool error
    naming them, the nearest valid name and every valid one, instead of silently ignoring them."""
    base = tool.fn_metadata.arg_model
    valid = list(base.model_fields)
    name = tool.name

    def known(data: Any) -> Any:
        if isinstance(data, dict):
            unknown = [key for key in data if key not in valid]
            if unknown:
                hints = []
                for key in unknown:
                    near = [v for v in valid if v.startswith(str(key))] or difflib.get_close_matches(
                        str(key), valid, n=1, cutoff=0.5
                    )
                    hints.append(f"{key!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
                raise ValueError(
                    f"{name} does not take {', '.join(hints)}; its arguments are: {', '.join(valid)}"
                )
        return data

    class Strict(base):  # type: ignore[valid-type,misc]
        model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

        @model_validator(mode="before")
        @classmethod
        def _known(cls, data: Any) -> Any:
            return known(data)

    tool.fn_metadata.arg_model = Strict
    tool.parameters["additionalProperties"] = False
    return tool


def build_server(settings: Settings) -> MCPServer:
    """The MCP server answering from the data directory's library index."""
    index = LibraryIndex.for_settings(settings)

    def run_query(query: Query) -> SearchResult:
        try:
            result = index.search(query)
        except IngestError as exc:
            raise ToolError(str(exc)) from None
        # The most frequent terms of each facet: enough to narrow a search, short enough for a prompt.
        result.facets = {kind: counts[:FACETS_SHOWN] for kind, counts in result.facets.items() if counts}
        return result

    def search_incidents(
        query: Annotated[
            str,
            Field(
                description="Words in any language; a record must hold every word (its text or its "
                "vocabulary labels). English words match their forms (certificates: certificate); "
                "end a word with * for a prefix (cert*). Empty: every record."
            ),
        ] = "",
        component: Components = [],  # noqa: B006 (pydantic copies defaults)
        root_cause: RootCauses = [],  # noqa: B006
        symptom: Symptoms = [],  # noqa: B006
        contributing: ContributingFactors = [],  # noqa: B006
        domain: Domains = [],  # noqa: B006
        severity: Severities = [],  # noqa: B006
        org: Annotated[str | None, Field(description="Organisation name or slug, e.g. harbor-bank.")] = None,
        lang: Annotated[
            str | None,
            Field(pattern=LANG_PATTERN, description=LANG),
        ] = None,
        since: Date = None,
        until: Date = None,
        sort: Annotated[
            Sort,
            Field(description=SORT),
        ] = "relevance",
        page: Page = 1,
    ) -> SearchResult:
        """Search the incident records: full text in every language, ranked, with filters, a snippet
        of where the words matched (HTML, matches in <mark>) and facet counts (the 10 most frequent
        terms of each facet). Without words and filters it lists every record."""
        return run_query(
            Query(
                q=query,
                component=tuple(component),
                root_cause=tuple(root_cause),
                symptom=tuple(symptom),
                contributing=tuple(contributing),
                domain=tuple(domain),
                severity=tuple(severity),
                org=org,
                lang=lang,
                since=since,
                until=until,
                sort="newest" if sort == "relevance" and not query.strip() else sort,
                page=page,
                page_size=PAGE_SIZE,
            )
        )

    def get_incident(
        id: Annotated[str, Field(pattern=RECORD_ID_PATTERN, description="Record id, e.g. IL-0042.")],
    ) -> Incident:
        """One incident record in full, and up to 5 incidents related to it, each with why (a shared
        root cause or component, never only a generic one such as monitoring)."""
        found = index.incident(id)
        if found is None:
            raise ToolError(f"no incident {id} in the records")
        return found

    def get_topic(
        kind: Annotated[TopicKind, Field(description="Which vocabulary the term is from.")],
        term: Annotated[str, Field(description="A vocabulary term, e.g. node-image (see the vocab tool).")],
        page: Page = 1,
    ) -> Topic:
        """The records sharing one vocabulary term (a root cause, a component, ...), newest first."""
        try:
            return index.topic(kind, term, page=page, page_size=PAGE_SIZE)
        except IngestError as exc:
            raise ToolError(str(exc)) from None

    def vocab(
        kind: Annotated[TopicKind | None, Field(description="One vocabulary; all when left out.")] = None,
    ) -> Vocab:
        """The vocabularies records are tagged with: each term's labels, definition and aliases."""
        return vocabularies(kind)

    tools = [
        _strict(Tool.from_function(fn, annotations=READ_ONLY))
        for fn in (search_incidents, get_incident, get_topic, vocab)
    ]
    return MCPServer(name="incident-library", instructions=INSTRUCTIONS, version=VERSION, tools=tools)


def serve_stdio(settings: Settings) -> None:
    """Run the server on stdin/stdout until the client closes the pipe."""
    build_server(settings).run()
