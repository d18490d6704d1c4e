"""The extracted document: article text with block and section offsets, metadata and language."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

BlockKind = Literal["heading", "paragraph", "list_item", "table_row", "code", "quote"]
SectionRole = Literal[
    "summary",
    "impact",
    "timeline",
    "trigger",
    "root_cause",
    "contributing",
    "detection",
    "remediation",
    "lessons",
    "action_items",
    "symptoms_text",
    "background",
    "skip",
    "other",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Block(_Frozen):
    """A heading, paragraph, list item, table row or code block; `text[start:end]` of the doc."""

    kind: BlockKind
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    level: int = 0  # heading level 1-6; list nesting depth for list items


class Section(_Frozen):
    """The span under one heading (up to the next heading of the same or a higher level)."""

    heading: str
    path: list[str] = Field(default_factory=list)  # headings from the top down to this one
    level: int = 1
    role: SectionRole = "other"
    start: int = Field(ge=0)  # offset of the heading text
    end: int = Field(ge=0)


class Link(_Frozen):
    url: str
    text: str = ""
    rel: str | None = None


class ExtractorInfo(_Frozen):
    name: str  # which path produced the text: "trafilatura", "readability", "markdown", "plain"
    version: str


class Document(_Frozen):
    """What an extractor makes of one page. Every offset points into `text`."""

    url: str | None = None
    canonical_url: str | None = None
    title: str | None = None
    site_name: str | None = None
    author: str | None = None
    published: str | None = None  # ISO date
    updated: str | None = None
    license: str | None = None  # license URL or name found on the page
    language: str | None = None
    language_confidence: float = 0.0
    text: str
    blocks: list[Block] = Field(default_factory=list)
    sections: list[Section] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)
    extractor: ExtractorInfo
    encoding: str | None = None  # how the bytes were decoded ("utf-8", "cp949", "iso2022_jp", ...)
    warnings: list[str] = Field(default_factory=list)

    def block_text(self, block: Block) -> str:
        return self.text[block.start : block.end]

    def section_at(self, offset: int) -> Section | None:
        """The innermost section containing `offset`, if any."""
        inner = None
        for section in self.sections:
            if section.start <= offset < section.end and (inner is None or section.level >= inner.level):
                inner = section
        return inner
