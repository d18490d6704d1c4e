"""The speed-ups in cue matching must not change a single match."""

from __future__ import annotations

import re

import pytest

from extractors import extract_document
from extractors.draft.evidence import cue_pattern, cues
from extractors.sentences import split_sentences
from tests.conftest import DATA

PAGES = sorted((DATA / "postmortems").glob("*.html")) + sorted((DATA / "pipeline").glob("*.html"))


def _sentences() -> list[str]:
    out = []
    for page in PAGES:
        doc = extract_document(page.read_bytes(), url="https://example.org/p", content_type="text/html")
        out += [doc.text[a:b] for a, b in split_sentences(doc.text, doc.language)]
        out.append(doc.title or "")
    return out


SENTENCES = _sentences()


def _naive(phrases: list[str]) -> re.Pattern[str]:
    parts = []
    for p in sorted(set(phrases), key=len, reverse=True):
        esc = re.escape(p.lower())
        parts.append(rf"(?<![a-z0-9]){esc}" if p[:1].isascii() and p[:1].isalnum() else esc)
    return re.compile("|".join(parts) or r"(?!)", re.I)


CUE_LISTS = sorted(
    (group, name)
    for group in ("fields", "heading_keywords", "verdict", "timeline")
    for name, phrases in cues()[group].items()
    if isinstance(phrases, list)
)


@pytest.mark.parametrize(("group", "name"), CUE_LISTS)
def test_prefix_tree_cue_pattern_matches_like_the_plain_alternation(group: str, name: str) -> None:
    """The tree, case-sensitive, with its look-behinds after the first letters, finds what the
    plain case-insensitive alternation finds in lower-cased text, sentence by sentence and in a
    whole page at once."""
    phrases = cues()[group][name]
    tree, plain = cue_pattern(phrases), _naive(phrases)
    for text in [*SENTENCES, " ".join(SENTENCES)]:
        lower = text.lower()
        assert tree.findall(lower) == plain.findall(lower), (name, text)


def test_prefix_tree_prefers_the_longer_phrase() -> None:
    pattern = cue_pattern(["data", "data loss", "데이터", "데이터 손실"])
    assert pattern.findall("a data loss; data; metadata") == ["data loss", "data"]
    assert pattern.findall("데이터 손실 후 데이터") == ["데이터 손실", "데이터"]
