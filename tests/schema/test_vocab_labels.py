"""Every vocabulary term is labelled in English, Korean and Japanese, read through one function."""

from __future__ import annotations

import re

import pytest

from schema.vocab import KINDS, LABEL_LANGUAGES, label, vocabulary

HANGUL = re.compile(r"[\uac00-\ud7a3]")
KANA_OR_KANJI = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@pytest.mark.parametrize("kind", KINDS)
def test_every_term_has_an_english_korean_and_japanese_label(kind: str) -> None:
    for term, entry in vocabulary(kind).terms.items():  # type: ignore[arg-type]
        for lang in LABEL_LANGUAGES:
            assert entry.labels.get(lang, "").strip(), f"{kind}:{term} has no {lang} label"
        assert not HANGUL.search(entry.labels["ja"]), f"{kind}:{term}: a Japanese label in Hangul"
        assert not HANGUL.search(entry.labels["en"]) and not KANA_OR_KANJI.search(entry.labels["en"])


@pytest.mark.parametrize(
    ("kind", "term", "en"),
    [
        ("root_causes", "ddos-attack", "DDoS attack"),
        ("components", "api-gateway", "API gateway"),
        ("components", "coredns", "CoreDNS"),
        ("components", "dns", "DNS"),
        ("components", "ci-cd", "CI/CD"),
        ("domains", "aws", "AWS"),
    ],
)
def test_english_labels_spell_acronyms_and_names_properly(kind: str, term: str, en: str) -> None:
    assert label(kind, term, "en") == en  # type: ignore[arg-type]


def test_a_label_in_each_language_and_the_fallbacks() -> None:
    assert label("root_causes", "time-handling", "ko") != "윤초"  # as broad as the term, not one case of it
    assert "윤초" in vocabulary("root_causes").terms["time-handling"].aliases["ko"]  # still found by it
    assert KANA_OR_KANJI.search(label("root_causes", "expired-certificate", "ja"))
    assert label("root_causes", "expired-certificate", "zh") == "Expired certificate"  # no zh: English
    assert label("root_causes", "no-such-term", "ko") == "no-such-term"
