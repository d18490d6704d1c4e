"""Sections from heading blocks: heading path, level, span and role from the heading lexicon."""

from __future__ import annotations

from dataclasses import dataclass

from schema.document import Block, Section
from schema.headings import heading_role


@dataclass
class _Open:
    heading: str
    level: int
    path: list[str]
    start: int
    end: int


def build_sections(
    text: str, blocks: list[Block], lang: str | None, title: str | None = None
) -> list[Section]:
    """One section per heading, spanning to the next heading of the same or a higher level.

    The heading that repeats the document title spans the whole article: its role is "other",
    whatever words it shares with the lexicon ("docs.rs outage postmortem").
    """
    spans: list[_Open] = []
    stack: list[_Open] = []  # the headings still open, outermost first
    for block in blocks:
        if block.kind != "heading":
            continue
        level = max(1, block.level)
        while stack and stack[-1].level >= level:
            stack.pop().end = block.start
        heading = text[block.start : block.end]
        span = _Open(heading, level, [s.heading for s in stack] + [heading], block.start, len(text))
        spans.append(span)
        stack.append(span)
    sections = []
    for span in spans:
        end = span.start + len(text[span.start : span.end].rstrip())
        is_title = title is not None and span.heading.strip() == title.strip()
        sections.append(
            Section(
                heading=span.heading,
                path=span.path,
                level=span.level,
                role="other" if is_title else heading_role(span.heading, lang),
                start=span.start,
                end=max(end, span.start),
            )
        )
    return sections
