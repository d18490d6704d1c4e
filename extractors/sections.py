"""Sections from heading blocks: heading path, level, span and role from the heading lexicon."""

from __future__ import annotations

from schema.document import Block, Section
from schema.headings import heading_role


def build_sections(
    text: str, blocks: list[Block], lang: str | None, title: str | None = None
) -> list[Section]:
    """One section per heading, spanning to the next heading of the same or a higher level.

    The heading that repeats the document title spans the whole article: its role is "other",
    whatever words it shares with the lexicon ("docs.rs outage postmortem").
    """
    spans: list[dict[str, object]] = []
    open_: list[int] = []  # indexes into spans of the headings still open, outermost first
    for block in blocks:
        if block.kind != "heading":
            continue
        level = max(1, block.level)
        while open_ and spans[open_[-1]]["level"] >= level:  # type: ignore[operator]
            spans[open_.pop()]["end"] = block.start
        heading = text[block.start : block.end]
        path = [str(spans[i]["heading"]) for i in open_] + [heading]
        spans.append(
            {"heading": heading, "level": level, "path": path, "start": block.start, "end": len(text)}
        )
        open_.append(len(spans) - 1)
    sections = []
    for span in spans:
        start, end = int(span["start"]), int(span["end"])  # type: ignore[call-overload]
        end = max(start, len(text[start:end].rstrip()) + start)
        heading = str(span["heading"])
        sections.append(
            Section(
                heading=heading,
                path=list(span["path"]),  # type: ignore[call-overload]
                level=int(span["level"]),  # type: ignore[call-overload]
                role="other" if title and heading.strip() == title.strip() else heading_role(heading, lang),
                start=start,
                end=end,
            )
        )
    return sections
