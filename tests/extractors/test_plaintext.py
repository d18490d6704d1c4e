"""Plain text: PGP clear-signing, underlined and RD headings, lists and timelines, encodings."""

from __future__ import annotations

from collections.abc import Callable

from extractors import extract_document
from extractors.plaintext import parse_plaintext, unwrap_pgp


def test_underlined_headings_fixture(page: Callable[[str], bytes]) -> None:
    doc = extract_document(page("en-status-notice.txt"), url="en-status-notice.txt")
    assert doc.extractor.name == "plain" and doc.title == "Database maintenance overrun"
    heads = [(doc.block_text(b), b.level) for b in doc.blocks if b.kind == "heading"]
    assert heads == [("What happened", 2), ("What we will change", 2)]
    assert [s.role for s in doc.sections] == ["summary", "action_items"]
    assert "reporting pages were read-only" in doc.text  # wrapped lines joined with a space
    items = [doc.block_text(b) for b in doc.blocks if b.kind == "list_item"]
    assert items == [
        "Rehearse maintenance on a copy made the day before.",
        "Announce a window that is twice the rehearsed time.",
    ]


def test_signed_iso_2022_jp_report(page: Callable[[str], bytes]) -> None:
    doc = extract_document(page("ja-mail-report.signed.iso2022jp.txt"))
    assert doc.encoding == "iso2022_jp" and doc.language == "ja"
    assert doc.title == "メールサーバ停止についての報告"
    assert "PGP" not in doc.text and "Hash:" not in doc.text and "iQEz" not in doc.text
    assert any("PGP" in w for w in doc.warnings)
    assert [(s.heading, s.role) for s in doc.sections] == [
        ("経緯", "timeline"),
        ("原因", "root_cause"),
        ("今後の対策", "action_items"),
    ]
    timeline = [doc.block_text(b) for b in doc.blocks if b.kind == "list_item"][:3]
    # one item per timed line; the indented continuation joins its entry
    assert timeline[1] == "9/3 02:30 メールの配送が止まる(キューが満杯になったため)"
    assert "2021年9月3日に、メールサーバが約5時間停止しました。ご不便" in doc.text


def test_dash_escaping_is_undone() -> None:
    body, signed = unwrap_pgp(
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA1\n\n- --- not a rule\ntext\n"
        "-----BEGIN PGP SIGNATURE-----\nabc\n-----END PGP SIGNATURE-----\n"
    )
    assert signed and body == "--- not a rule\ntext"


def test_not_signed() -> None:
    assert unwrap_pgp("plain text") == ("plain text", False)


def test_lone_lexicon_line_is_a_heading() -> None:
    builder, _ = parse_plaintext(
        "Intro paragraph that is long enough.\n\nTimeline\n\n10:00 alert\n10:05 fix\n"
    )
    heads = [builder.text[b.start : b.end] for b in builder.blocks if b.kind == "heading"]
    assert heads == ["Timeline"]
