"""The one tokenizer: stems, CJK pairs, prefixes, vocabulary labels, snippets."""

from __future__ import annotations

import pytest

from flows.library.tokens import fts_query, query_words, snippet, stem, term_text, tokens


@pytest.mark.parametrize(
    ("forms", "expected"),
    [
        (["certificate", "certificates"], "certificat"),
        (["cache", "caches"], "cach"),
        (["fail", "failed", "failing", "fails"], "fail"),
        (["stop", "stopped", "stopping", "stops"], "stop"),
        (["install", "installed", "installing"], "install"),
        (["policy", "policies"], "policy"),
        (["class", "classes"], "class"),
        (["node", "nodes"], "nod"),
    ],
)
def test_an_english_words_forms_share_a_stem(forms: list[str], expected: str) -> None:
    assert {stem(form) for form in forms} == {expected}


@pytest.mark.parametrize("word", ["dns", "aws", "status", "analysis", "string", "add", "need", "쿠버"])
def test_short_and_uninflected_words_are_left_alone(word: str) -> None:
    assert stem(word) == word


def test_cjk_runs_become_pairs_and_latin_words_stems() -> None:
    assert tokens("GPUノードの障害 Certificates") == [
        "gpu",
        "ノー",
        "ード",
        "ドの",
        "の障",
        "障害",
        "害",
        "certificat",
    ]
    # Full-width letters are the same letters.
    assert tokens("ＡＭＩ") == ["ami"]


def test_query_words_are_phrases_and_prefixes() -> None:
    found = {w.text: fts_query(w) for w in query_words('인증서 cert* 커 障害 expired-certificate "')}
    assert found == {
        "인증서": '"인증 증서"',
        "cert*": '"cert" *',
        "커": '"커" *',  # one character: the pairs it starts
        "障害": '"障害"',
        "expired-certificate": '"expir certificat"',
    }
    assert query_words("--- !!") == []


def test_a_terms_text_holds_its_labels_and_aliases_in_every_language() -> None:
    text = term_text("components", "certificate")
    assert "인증서" in text and "証明書" in text and "certificate" in text


def test_snippets_mark_the_matches_and_escape_the_rest() -> None:
    marked = snippet(
        ["A TLS certificate expired; the <b>caches</b> failed"], query_words("certificates cache*")
    )
    assert (
        marked == "A TLS <mark>certificate</mark> expired; the &lt;b&gt;<mark>caches</mark>&lt;/b&gt; failed"
    )
    assert (
        snippet(["매일 노드를 롤오버하는 모듈"], query_words("롤오버"))
        == "매일 노드를 <mark>롤오버</mark>하는 모듈"
    )
    assert snippet(["nothing here"], query_words("cache")) is None
    long = "word " * 100 + "certificate " + "word " * 100
    cut = snippet([long], query_words("certificate"))
    assert cut is not None and cut.startswith("…") and cut.endswith("…") and "<mark>certificate</mark>" in cut
    assert len(cut) < 200
