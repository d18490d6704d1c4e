"""Properties of the drafter for any Document: quotes are exact slices, the draft validates, no exceptions."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractors.draft import draft_document, explain_draft
from schema.document import Block, Document, ExtractorInfo, Section

HEADINGS = [
    "Summary",
    "Timeline",
    "Root cause",
    "Impact",
    "Resolution",
    "Action items",
    "개요",
    "원인",
    "経緯",
    "再発防止策",
    "Notes",
]
ROLES = {
    "Summary": "summary",
    "Timeline": "timeline",
    "Root cause": "root_cause",
    "Impact": "impact",
    "Resolution": "remediation",
    "Action items": "action_items",
    "개요": "summary",
    "원인": "root_cause",
    "経緯": "timeline",
    "再発防止策": "action_items",
}
WORDS = st.sampled_from(
    [
        "the",
        "outage",
        "at",
        "14:05",
        "UTC",
        "we",
        "deployed",
        "restored",
        "09:40",
        "2023-01-25",
        "alert",
        "fired",
        "DNS",
        "bug",
        "timeout",
        "users",
        "38%",
        "SEV2",
        "P1",
        "장애가",
        "발생했습니다.",
        "오후",
        "3시",
        "10분",
        "復旧した。",
        "14時05分",
        "約2時間",
        "we will",
        "fix.",
        "error",
        "  ",
        "\n",
        "é",
        "🙂",
        "Nov 7,",
        "9:15 PM",
    ]
)
PARAGRAPH = st.lists(WORDS, min_size=1, max_size=25).map(" ".join)


@st.composite
def documents(draw: st.DrawFn) -> Document:
    parts = draw(
        st.lists(st.tuples(st.none() | st.sampled_from(HEADINGS), PARAGRAPH), min_size=0, max_size=8)
    )
    text, blocks, heads = "", [], []
    for heading, para in parts:
        if heading:
            if text:
                text += "\n\n"
            heads.append((heading, len(text)))
            blocks.append(Block(kind="heading", start=len(text), end=len(text) + len(heading), level=2))
            text += heading
        kind = draw(st.sampled_from(["paragraph", "list_item", "table_row"]))
        text += "\n\n" if text else ""
        blocks.append(Block(kind=kind, start=len(text), end=len(text) + len(para)))
        text += para
    sections = []
    for i, (heading, start) in enumerate(heads):
        end = heads[i + 1][1] if i + 1 < len(heads) else len(text)
        sections.append(
            Section(
                heading=heading,
                path=[heading],
                level=2,
                role=ROLES.get(heading, "other"),
                start=start,
                end=end,
            )
        )
    return Document(
        url="https://blog.example.org/2024/01/02/post/",
        title=draw(st.none() | PARAGRAPH),
        site_name=draw(st.none() | st.sampled_from(["Example Tech Blog", "예시 블로그", ""])),
        published=draw(st.none() | st.sampled_from(["2024-01-02", "not a date", "2024-13-40"])),
        language=draw(st.none() | st.sampled_from(["en", "ko", "ja"])),
        text=text,
        blocks=blocks if draw(st.booleans()) else [],
        sections=sections,
        extractor=ExtractorInfo(name="hypothesis", version="0"),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_any_document_quotes_exact_slices(doc: Document) -> None:
    draft = draft_document(
        doc,
        source_url="https://blog.example.org/p",
        snapshot=None,
        snapshot_digest="x",
        now="2026-01-01T00:00:00Z",
    )
    for items in draft.evidence.values():
        for ev in items:
            assert ev.quote == doc.text[ev.start : ev.end]
    assert draft.record.review.written_by == "session"
    type(draft).model_validate(draft.model_dump())
    assert explain_draft(draft)
