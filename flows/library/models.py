"""What the library answers with: one set of models for the JSON API, the MCP tools and the static site."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from schema.record import Record
from schema.vocab import Kind

# The vocabulary fields a record can be found by, as the API and the MCP tools name them (singular),
# with the vocabulary each draws on and the record field that holds it.
TopicKind = Literal["root_cause", "component", "contributing", "symptom", "domain", "severity"]
TOPIC_KINDS: dict[str, tuple[Kind, str]] = {
    "root_cause": ("root_causes", "root_cause"),
    "component": ("components", "components"),
    "contributing": ("contributing", "contributing"),
    "symptom": ("symptoms", "symptoms"),
    "domain": ("domains", "domain"),
    "severity": ("severity", "severity"),
}
# Facets: every topic kind, plus the organisation, the languages a record's text is in and the year.
FACET_KINDS: tuple[str, ...] = (*TOPIC_KINDS, "org", "lang", "year")

# Interface languages of the pages; record text is shown in whatever languages it has.
UI_LANGUAGES = ("en", "ko")


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceLink(_Out):
    url: str
    kind: str
    archived: str | None = None


class Brief(_Out):
    """One record as a search result or list item: enough to recognise it and follow its sources."""

    id: str
    org: str
    org_slug: str | None = None
    date: str | None = None
    title: dict[str, str]
    summary: dict[str, str] = Field(default_factory=dict)
    root_cause: str
    severity: str
    components: list[str] = Field(default_factory=list)
    contributing: list[str] = Field(default_factory=list)
    symptoms: list[str] = Field(default_factory=list)
    domain: list[str] = Field(default_factory=list)
    languages: list[str] = Field(default_factory=list)
    sources: list[SourceLink] = Field(default_factory=list)
    url: str | None = None
    score: float | None = Field(
        default=None, description="bm25 relevance (higher is better); null without a query"
    )
    snippet: str | None = Field(
        default=None,
        description="HTML: where the query's words matched (title, summary, or a vocabulary label), "
        "escaped, each match in <mark>; null without a query",
    )


class FacetCount(_Out):
    term: str
    count: int
    labels: dict[str, str] = Field(default_factory=dict)


class SearchResult(_Out):
    query: str
    filters: dict[str, Any]
    total: int
    page: int
    page_size: int
    items: list[Brief]
    facets: dict[str, list[FacetCount]] = Field(default_factory=dict)


class RelatedIncident(_Out):
    id: str
    score: float
    why: list[str]
    root_cause: str | None = None
    components: list[str] = Field(default_factory=list)
    same_org: bool
    may_recur: bool
    date: str | None = None
    org: str | None = None
    title: dict[str, str] = Field(default_factory=dict)


class Incident(_Out):
    record: Record
    related: list[RelatedIncident] = Field(default_factory=list)


class VocabTerm(_Out):
    term: str
    labels: dict[str, str]
    definition: str
    aliases: dict[str, list[str]] = Field(default_factory=dict)


class Topic(_Out):
    """Records sharing one vocabulary term, newest first."""

    kind: str
    term: str
    labels: dict[str, str]
    definition: str
    total: int
    page: int
    page_size: int
    items: list[Brief]


class Vocab(_Out):
    kinds: dict[str, list[VocabTerm]]
