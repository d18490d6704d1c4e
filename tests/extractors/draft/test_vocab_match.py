"""The vocabulary prefilter: it may only skip regex searches that could not have matched."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extractors import extract_document
from extractors.draft.evidence import Context
from extractors.draft.vocab_match import KINDS, candidates_by_sentence, candidates_in, matchers
from tests.conftest import DATA

PAGES = sorted((DATA / "postmortems").glob("*.html")) + sorted((DATA / "pipeline").glob("*.html"))
PAGES += sorted((DATA / "pages").glob("*"))


def _contexts() -> list[Context]:
    out = []
    for page in PAGES:
        kind = "text/html" if ".html" in page.name else "text/plain"
        doc = extract_document(page.read_bytes(), url="https://example.org/p", content_type=kind)
        out.append(Context(doc))
    return out


CONTEXTS = _contexts()


@pytest.mark.parametrize("kind", KINDS)
def test_every_matcher_that_hits_a_sentence_is_a_candidate(kind: str) -> None:
    every = matchers(kind)  # type: ignore[arg-type]
    hits = pairs = kept = 0
    for ctx in CONTEXTS:
        sents = ctx.sentences
        found = candidates_by_sentence(ctx.doc.text, [s.start for s in sents], [s.end for s in sents])[kind]  # type: ignore[index]
        for s, ids in zip(sents, found, strict=True):
            for i, m in enumerate(every):
                pairs += 1
                kept += i in ids
                if hit := m.pattern.search(s.text):
                    hits += 1
                    assert i in ids, (kind, m.term, s.text)
                    # a search may start at the earliest form: no hit starts before it
                    assert ids[i] <= s.start + hit.start(), (kind, m.term, s.text)
    assert hits > 0
    assert kept < pairs / 10, "the prefilter should leave out most sentence-matcher pairs"


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("symptoms", "We saw an elevated error-rate on the API."),
        ("components", "The load balancers were upgraded."),
        ("components", "로드밸런서를 교체했습니다."),
        ("symptoms", "Users saw elevated latency and timeouts."),
    ],
)
def test_title_candidates_cover_hits(kind: str, text: str) -> None:
    ids = candidates_in(text)[kind]  # type: ignore[index]
    hits = [i for i, m in enumerate(matchers(kind)) if m.pattern.search(text)]  # type: ignore[arg-type]
    assert hits and set(hits) <= set(ids)


def test_separators_and_inflections_are_found_across_sentences() -> None:
    text = "Intro line here.\nThe load-balancers failed. Error rates rose.\nデータベースが停止しました。"
    spans = [(0, 16), (17, 43), (44, 61), (62, len(text))]
    found = candidates_by_sentence(text, [a for a, _ in spans], [b for _, b in spans])
    hits = 0
    for kind in KINDS:
        for (a, b), ids in zip(spans, found[kind], strict=True):
            for i, m in enumerate(matchers(kind)):
                if m.pattern.search(text[a:b]):
                    hits += 1
                    assert i in ids, (kind, m.term, text[a:b])
    assert hits >= 3


def _multiword_forms() -> list[str]:
    return sorted({f for kind in KINDS for m in matchers(kind) for f in m.forms if " " in f})  # type: ignore[arg-type]


MULTIWORD = _multiword_forms()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(MULTIWORD),
            st.sampled_from([" ", "-", "  ", "\n", " - ", ".", "/", "", ", "]),
            st.sampled_from(["", "s", "ed", " the", " the bug", "."]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_multiword_forms_are_candidates_whatever_stands_between_their_words(
    parts: list[tuple[str, str, str]],
) -> None:
    # Forms with their spaces replaced by other separators (or punctuation, where the patterns
    # do not match): every regex hit must stay a candidate, the next-word shortcut included.
    text = " ".join(form.replace(" ", sep) + tail for form, sep, tail in parts)
    found = candidates_by_sentence(text, [0], [len(text)])
    for kind in KINDS:
        for i, m in enumerate(matchers(kind)):  # type: ignore[arg-type]
            if hit := m.pattern.search(text):
                assert i in found[kind][0], (kind, m.term, text)  # type: ignore[index]
                assert found[kind][0][i] <= hit.start(), (kind, m.term, text)  # type: ignore[index]


def _term_ids(kind: str, term: str) -> set[int]:
    return {i for i, m in enumerate(matchers(kind)) if m.term == term}  # type: ignore[arg-type]


def test_an_occurrence_lands_in_its_own_sentence_after_leading_separators() -> None:
    # Occurrences are found in the page without white space and hyphens, then mapped back: the
    # page's leading " -  " must be counted, or "load balancer" would land in the first sentence.
    text = " -  Intro here. The load balancer failed."
    cut = text.index("load")
    found = candidates_by_sentence(text, [4, cut], [cut - 1, len(text)])["components"]
    ids = _term_ids("components", "load-balancer")
    assert ids & set(found[1])
    assert not ids & set(found[0])


def test_a_latin_form_inside_a_longer_word_is_not_a_candidate() -> None:
    text = "Our xdns cache was fine. Then dns failed."
    first_end = text.index(".") + 1
    found = candidates_by_sentence(text, [0, first_end + 1], [first_end, len(text)])["domains"]
    ids = _term_ids("domains", "dns")
    assert ids & set(found[1])
    assert not ids & set(found[0])
