"""Bad input gets an ExtractionError with its reason: never a crash, a hang or a huge allocation."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractors import ExtractOptions, extract_document
from schema.errors import ExtractionError


def reason(data: bytes, **kwargs: object) -> str:
    with pytest.raises(ExtractionError) as info:
        extract_document(data, **kwargs)  # type: ignore[arg-type]
    return str(info.value)


def test_empty() -> None:
    assert reason(b"") == "empty page"
    assert reason(b"  \n\t ") == "empty page"


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 10,
        b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj",
        b"\x1f\x8b\x08\x00" + b"\x00" * 100,
        bytes(range(32)) * 200,
        b"PK\x03\x04" + b"\x00" * 50,
    ],
)
def test_binary(data: bytes) -> None:
    assert reason(data, url="https://x.example/page.html") == "binary content"


def test_nul_bytes_after_the_sniffed_prefix() -> None:
    data = b"<html><body><p>" + b"text " * 3000 + b"\x00" * 10 + b"</p></body></html>"
    assert reason(data) == "binary content"


def test_oversize_single_line_page_is_refused_before_parsing() -> None:
    data = b"<html><body><p>" + b"word " * (4 * 1024 * 1024) + b"</p></body></html>"  # 20 MB, one line
    assert reason(data).startswith("page too large: 20971")


def test_deep_nesting() -> None:
    data = (
        b"<html><body>" + b"<div>" * 5000 + b"<p>" + b"Deep article text. " * 50 + b"</p>" + b"</div>" * 5000
    )
    assert "nested deeper than 255 levels" in reason(data)


def test_too_many_elements() -> None:
    data = b"<html><body><article>" + b"<p>word word.</p>" * 40_000 + b"</article></body></html>"
    assert reason(data).startswith("page too complex: 40")


def test_limits_are_options() -> None:
    data = b"<html><body><p>" + b"Real article words here. " * 100 + b"</p></body></html>"
    assert reason(data, options=ExtractOptions(max_bytes=100)).startswith("page too large")


def test_only_navigation() -> None:
    nav = "".join(f'<li><a href="/s/{i}">Section {i}</a></li>' for i in range(30))
    data = f"<html><body><header><nav><ul>{nav}</ul></nav></header><footer>© X</footer></body></html>"
    assert reason(data.encode()).startswith("no article text found")


def test_markup_without_text() -> None:
    assert reason(
        b"<html><head><script>var a = 1;</script></head><body><div></div></body></html>"
    ).startswith("no article text found")


def test_truncated_html_still_extracts(page: Callable[[str], bytes]) -> None:
    data = page("en-blog-outage.html")
    cut = data[: data.index(b"<h2>Detection</h2>") + 30]  # stops inside a heading, tags left open
    doc = extract_document(cut)
    assert "Root cause analysis" in [s.heading for s in doc.sections]
    assert "Our synthetic checks" not in doc.text


def test_invalid_bytes_are_replaced_and_reported() -> None:
    body = b"<p>" + b"The database failed over at night. " * 10 + b"\xff\xfe broken \xc3</p>"
    doc = extract_document(b"<html><meta charset='utf-8'><body>" + body + b"</body></html>")
    assert "The database failed over" in doc.text
    assert any("U+FFFD" in w for w in doc.warnings)


@pytest.mark.parametrize("data", [b"<head", b"<html><head", b"<body"])
def test_a_page_cut_short_in_its_head_is_an_extraction_error(data: bytes) -> None:
    """Found by the property below: lxml.html raised AssertionError on readability's empty summary."""
    with pytest.raises(ExtractionError):
        extract_document(data, content_type="text/html")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=3000), st.sampled_from([None, "text/html", "text/plain", "text/markdown"]))
def test_arbitrary_bytes_give_a_document_or_an_extraction_error(
    data: bytes, content_type: str | None
) -> None:
    try:
        doc = extract_document(data, content_type=content_type)
    except ExtractionError:
        return
    for block in doc.blocks:
        assert doc.text[block.start : block.end]


@settings(max_examples=30, deadline=None)
@given(st.text(max_size=2000))
def test_arbitrary_text_as_markdown_and_html(text: str) -> None:
    for content_type in ("text/markdown", "text/html", "text/plain"):
        try:
            doc = extract_document(text.encode("utf-8", "surrogatepass"), content_type=content_type)
        except ExtractionError:
            continue
        assert all(doc.text[b.start : b.end] for b in doc.blocks)
