"""Markdown: front matter, ATX and Setext headings, nested lists, tables, code, link lists."""

from __future__ import annotations

from collections.abc import Callable

from extractors import extract_document
from extractors.markdown import parse_markdown, split_front_matter


def kinds(doc_text: str, blocks: list) -> list[tuple[str, str, int]]:  # type: ignore[type-arg]
    return [(b.kind, doc_text[b.start : b.end], b.level) for b in blocks]


def test_fixture_metadata_and_structure(page: Callable[[str], bytes]) -> None:
    doc = extract_document(page("en-incident-log.md"), url="https://git.example/log/2024-05-02.md")
    assert doc.extractor.name == "markdown"
    assert (doc.title, doc.author, doc.published) == (
        "2024-05-02: Build queue stalled",
        "Priya Raman",
        "2024-05-03",
    )
    assert doc.language == "en"
    blocks = kinds(doc.text, doc.blocks)
    # the "# title" heading moved to Document.title; the Setext heading is a level-2 heading
    assert blocks[0] == ("heading", "Summary of impact", 2)
    assert ("list_item", "The cleanup job failed silently.", 2) in blocks
    assert ("list_item", "Its alert went to an archived channel.", 3) in blocks
    assert ("table_row", "Component | Status | Owner", 0) in blocks
    assert ("table_row", "scheduler | degraded | build team", 0) in blocks
    assert any(k == "code" and "DELETE FROM leases" in t for k, t, _ in blocks)
    assert ("quote", "We should have noticed the growth weeks earlier.", 0) in blocks
    # a timeline made only of links keeps its items, and the links are recorded
    assert ("list_item", "09:14 first alert", 1) in blocks
    assert "https://status.example.org/incidents/1" in {link.url for link in doc.links}
    # Markdown escapes are undone, template tags removed
    assert "tcp_keepalive" in doc.text and "tcp\\_" not in doc.text
    assert "{%" not in doc.text and "include footer" not in doc.text
    roles = [(s.heading, s.role) for s in doc.sections]
    assert roles == [
        ("Summary of impact", "summary"),
        ("Timeline", "timeline"),
        ("Root cause", "root_cause"),
        ("Action items", "action_items"),
    ]


def test_toml_front_matter() -> None:
    meta, rest = split_front_matter(
        '+++\ntitle = "Outage"\ndate = 2023-02-08\nauthors = ["A", "B"]\n+++\nBody\n'
    )
    assert meta["title"] == "Outage" and meta["authors"] == ["A", "B"] and rest == "Body\n"


def test_broken_yaml_front_matter_is_read_line_by_line() -> None:
    meta, rest = split_front_matter("---\ntitle: A: B: [unclosed\nauthor: Kim\n---\ntext\n")
    assert meta["author"] == "Kim" and rest == "text\n"


def test_setext_and_atx_levels() -> None:
    _, builder, _ = parse_markdown("Top\n===\n\nSub\n---\n\n### Third\n\nText.\n")
    assert [(b.kind, b.level) for b in builder.blocks] == [
        ("heading", 1),
        ("heading", 2),
        ("heading", 3),
        ("paragraph", 0),
    ]


def test_html_blocks_inside_markdown() -> None:
    _, builder, _ = parse_markdown("<div class='note'>\n<p>Inline <b>HTML</b> note.</p>\n</div>\n\nAfter.\n")
    assert "Inline HTML note." in builder.text and "After." in builder.text and "<" not in builder.text


def test_japanese_wrapped_lines_join_without_spaces() -> None:
    _, builder, _ = parse_markdown("障害が発生し、\n画像が表示されませんでした。\nThe CDN\nwas slow.\n")
    assert builder.text == "障害が発生し、画像が表示されませんでした。The CDN was slow."
