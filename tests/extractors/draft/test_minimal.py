"""The drafter's public API on a hand-built Document: identity fields, summary, verdict."""

from __future__ import annotations

from extractors.draft import DraftOptions, draft_document, explain_draft
from schema.document import Block, Document, ExtractorInfo, Section
from schema.draft import draft_id_for

TEXT = (
    "On Wednesday at 09:15 UTC, we deployed changes to production. "
    "The DNS record failed to resolve for 10 minutes.\n\n"
    "Root cause\n\n"
    "Terraform removed the record because of a bug."
)


def make_doc() -> Document:
    rc = TEXT.index("Root cause")
    tf = TEXT.index("Terraform")
    return Document(
        url="https://blog.example.com/2023/02/08/dns/",
        title="DNS outage on 2023-01-25 | Example Blog",
        site_name="Example Blog",
        published="2023-02-08",
        language="en",
        text=TEXT,
        blocks=[
            Block(kind="paragraph", start=0, end=rc - 2),
            Block(kind="heading", start=rc, end=rc + 10, level=2),
            Block(kind="paragraph", start=tf, end=len(TEXT)),
        ],
        sections=[
            Section(
                heading="Root cause", path=["Root cause"], level=2, role="root_cause", start=rc, end=len(TEXT)
            )
        ],
        extractor=ExtractorInfo(name="hand", version="1"),
    )


def draft(doc: Document | None = None):
    return draft_document(
        doc or make_doc(),
        source_url="https://blog.example.com/2023/02/08/dns/",
        snapshot="snap-1",
        snapshot_digest="sha256:abc",
        now="2026-12-02T00:00:00Z",
        options=DraftOptions(),
    )


def test_identity_and_summary() -> None:
    d = draft()
    rec = d.record
    assert d.draft_id == draft_id_for("https://blog.example.com/2023/02/08/dns/", "sha256:abc")
    assert (rec.org, rec.org_slug, rec.date, rec.date_kind) == (
        "Example",
        "example",
        "2023-02-08",
        "published",
    )
    assert rec.title == {"en": "DNS outage on 2023-01-25"}
    assert rec.summary["en"].startswith("On Wednesday at 09:15 UTC")
    assert "Terraform" not in rec.summary["en"]
    ev = d.evidence["summary"][0]
    assert (
        ev.quote == TEXT[ev.start : ev.end] == "On Wednesday at 09:15 UTC, we deployed changes to production."
    )
    assert d.confidence["summary"].method == "rule"
    assert rec.review.written_by == "session" and rec.review.reviewed_at is None
    assert rec.sources[0].archived == "snap-1" and rec.sources[0].kind == "blog"
    assert d.history[0].action == "drafted" and d.history[0].at == "2026-12-02T00:00:00Z"
    assert d.source.language == "en" and d.source.extractor == "hand 1"


def test_deterministic_and_explained() -> None:
    assert draft().model_dump_json() == draft().model_dump_json()
    text = explain_draft(draft())
    assert "summary" in text and "On Wednesday at 09:15 UTC" in text


def test_exported_names() -> None:
    import extractors.draft as module

    assert sorted(module.__all__) == ["DRAFTERS", "DraftOptions", "draft_document", "explain_draft"]
    assert [name for name, _ in module.DRAFTERS][:4] == ["language", "org", "date", "title"]


def test_not_a_document_is_malformed_input() -> None:
    import pytest

    with pytest.raises(TypeError):
        draft_document("text", source_url="u", snapshot=None, snapshot_digest="d", now="2026-01-01T00:00:00Z")  # type: ignore[arg-type]


def test_verdict_threshold_option() -> None:
    strict = draft_document(
        make_doc(),
        source_url="https://blog.example.com/x",
        snapshot=None,
        snapshot_digest="d",
        now="2026-01-01T00:00:00Z",
        options=DraftOptions(verdict_threshold=1.0),
    )
    assert strict.postmortem.verdict is False


def test_front_matter_printed_on_the_page_is_not_prose() -> None:
    front = '+++ path = "inside/2024/x" title = "Outage" +++'
    body = "On Monday at 10:00 UTC the API went down for all users."
    text = f"{front}\n\n{body}"
    doc = Document(
        text=text,
        blocks=[
            Block(kind="paragraph", start=0, end=len(front)),
            Block(kind="paragraph", start=len(front) + 2, end=len(text)),
        ],
        extractor=ExtractorInfo(name="hand", version="1"),
    )
    d = draft(doc)
    assert d.record.summary == {"en": body}
    assert all(e.start > len(front) for items in d.evidence.values() for e in items)
