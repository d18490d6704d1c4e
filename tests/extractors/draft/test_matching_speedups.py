"""The speed-ups in cue matching must not change a single match."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from extractors import extract_document
from extractors.draft import context, impact, negation, severity, timeline, vocab_match
from extractors.draft import dates as date_parsing
from extractors.draft.evidence import Context, cue_pattern, cues
from extractors.draft.lexicon import counts_within_each
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


def _cue_group(group: str) -> dict:
    # The postmortem gate's narrative cues live beside it (extractors/data/gate.json).
    from extractors.gate import _data

    if group == "heading_keywords":  # the heading classifier's keywords live in schema/headings.json
        import json

        from schema.headings import _LEXICON

        return json.loads(_LEXICON.read_text(encoding="utf-8"))["keywords"]["roles"]
    return _data()["narrative"] if group == "verdict" else cues()[group]


CUE_LISTS = sorted(
    (group, name)
    for group in ("fields", "heading_keywords", "verdict", "timeline")
    for name, phrases in _cue_group(group).items()
    if isinstance(phrases, list)
)


@pytest.mark.parametrize(("group", "name"), CUE_LISTS)
def test_cue_lexicon_matches_like_the_plain_alternation(group: str, name: str) -> None:
    """The automaton, case-sensitive, finds what the plain case-insensitive alternation finds in
    lower-cased text, sentence by sentence and in a whole page at once."""
    phrases = _cue_group(group)[name]
    tree, plain = cue_pattern(phrases), _naive(phrases)
    for text in [*SENTENCES, " ".join(SENTENCES)]:
        lower = text.lower()
        assert tree.findall(lower) == plain.findall(lower), (name, text)


def test_cue_lexicon_prefers_the_longer_phrase() -> None:
    pattern = cue_pattern(["data", "data loss", "데이터", "데이터 손실"])
    assert pattern.findall("a data loss; data; metadata") == ["data loss", "data"]
    assert pattern.findall("데이터 손실 후 데이터") == ["데이터 손실", "데이터"]


# Phrases that overlap, nest and share starts, in both kinds (word-start Latin, anywhere CJK).
LEXICON = [
    "data",
    "data loss",
    "loss",
    "at",
    "a",
    "ta los",
    "root cause",
    "cause",
    "데이터",
    "데이터 손실",
    "손실",
    "障害",
    "障",
]
LEXICON_TEXTS = st.lists(st.sampled_from([*LEXICON, " ", "x", "0", "-", ".", "s"]), max_size=14).map("".join)


@given(LEXICON_TEXTS)
@example("metadata loss")
@example("data lossdata loss")
@example("xdata loss")
@example("데이터 손실障害")
def test_cue_lexicon_matches_like_the_regex_on_any_text(text: str) -> None:
    """Leftmost, longest, non-overlapping, Latin phrases at word starts: re.findall's matches."""
    lexicon, plain = cue_pattern(LEXICON), _naive(LEXICON)
    assert lexicon.findall(text) == plain.findall(text), text
    hit, want = lexicon.search(text), plain.search(text)
    assert (hit and (hit.start(), hit.end(), hit.group(0))) == (
        want and (want.start(), want.end(), want.group(0))
    )


@given(LEXICON_TEXTS, st.lists(st.integers(0, 40), max_size=6))
@example("xdata loss", [1])
@example("data lossdata loss", [4, 9])
@example("데이터 손실障害", [3])
def test_counts_within_spans_are_each_spans_own_count(text: str, cuts: list[int]) -> None:
    """One pass over the text counts, per span, what `count` finds in the span's own text: a
    match that runs past the span's end is not the span's, and at a span's start a Latin
    phrase needs no word boundary before it."""
    lexicon = cue_pattern(LEXICON)
    bounds = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    starts, ends = bounds[:-1], bounds[1:]
    (got,) = counts_within_each((lexicon,), text, starts, ends)
    want = {
        i: n for i, (a, b) in enumerate(zip(starts, ends, strict=True)) if (n := lexicon.count(text[a:b]))
    }
    assert got == want, (text, bounds)
    # Several lexicons in one pass, sharing phrases (each phrase counts for every list it is in).
    lists = (lexicon, JOINT_SHORT, JOINT_CJK)
    for each, counts in zip(lists, counts_within_each(lists, text, starts, ends), strict=True):
        spans = enumerate(zip(starts, ends, strict=True))
        assert counts == {i: n for i, (a, b) in spans if (n := each.count(text[a:b]))}, (text, bounds)


JOINT_SHORT = cue_pattern(["data", "loss", "a", "at"])
JOINT_CJK = cue_pattern(["데이터", "障", "loss", "ta los"])


def test_cue_counts_are_each_sentences_own_count_on_our_pages() -> None:
    lexicons = [cue_pattern(_cue_group(group)[name]) for group, name in CUE_LISTS]
    for page in PAGES:
        ctx = Context(
            extract_document(page.read_bytes(), url="https://example.org/p", content_type="text/html")
        )
        assert ctx._lowered is not None and ctx._bounds is not None  # the one-pass path is taken
        for lexicon in lexicons:
            want = {s.start: n for s in ctx.sentences if (n := lexicon.count(s.text.lower()))}
            assert ctx.cue_counts(lexicon) == want, page.name


# Pieces that the severity and duration patterns are made of, and some that are near misses.
PIECES = [
    *"sevSEVPp0123456 :_-=.",
    *["severity", "Severity::", "level", "priority", "incident", "outage", "issue", "impact level"],
    *["incident level", "critical", "high", "minor", "sev0", "P1", "ſev", "prıority", "ıncident"],
    *["심각도", "등급", "장애", "레벨", "치명적", "높음", "重大度", "深刻度", "障害レベル", "レベル", "高"],
    *["약", "約", "およそ", "일", "日", "시간", "時間", "분", "分", "동안", "復旧まで", " "],
]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@given(TEXTS)
@example("SEV 2")
@example("severity::3")
@example("Priority: P1")
@example("p2 outage")
@example("심각도 2")
@example("장애 등급 3")
@example("Severity: high")
@example("重大度: 高")
def test_severity_gate_holds_every_stated_level(text: str) -> None:
    if any(p.search(text) for p in [*severity.STATED, severity.WORDS]):
        assert severity.GATE.search(text), text


def test_severity_gate_on_our_pages() -> None:
    stated = [t for t in SENTENCES if any(p.search(t) for p in [*severity.STATED, severity.WORDS])]
    assert stated  # the fixtures state levels, so this checks something
    assert all(severity.GATE.search(t) for t in stated)


@given(TEXTS)
@example("약 3시간 20분")
@example("5분")
@example("2日")
@example("約1時間")
def test_cjk_durations_need_a_unit(text: str) -> None:
    """The matches _stated keeps (a number with a unit) all hold a _CJK_UNIT character."""
    for m in timeline.DURATION_CJK.finditer(text):
        if (m[1] or m[2] or m[3]) and m.end() - m.start() >= 2:
            assert date_parsing._CJK_UNIT.search(text), text


def _span(m: re.Match[str] | None) -> tuple[int, int] | None:
    return m.span() if m else None


@given(
    st.lists(
        st.sampled_from([*PIECES, "us-east-1", "East US 2", "-", "3", "1,200 users", "약 "]), max_size=12
    ).map("".join)
)
@example("about 1,200 users")
@example("約3万人")
@example("us-east-1 and East US 2")
@example("asia-northeast1")
@example("Outage in East US 2")
def test_impact_gates_keep_every_match(text: str) -> None:
    """The digit and hyphen-or-compass tests before COUNT and CLOUD_REGION skip only misses."""
    assert _span(impact._count(text)) == _span(impact.COUNT.search(text)), text
    assert _span(impact._cloud_region(text)) == _span(impact.CLOUD_REGION.search(text)), text


def test_impact_gates_on_our_pages() -> None:
    hits = 0
    for s in SENTENCES:
        hits += bool(impact.COUNT.search(s)) + bool(impact.CLOUD_REGION.search(s))
        assert _span(impact._count(s)) == _span(impact.COUNT.search(s)), s
        assert _span(impact._cloud_region(s)) == _span(impact.CLOUD_REGION.search(s)), s
    assert hits > 0


@given(
    st.lists(
        st.sampled_from(["+++", "---", " = ", '"', "title", "x", " ", "\n", ":", "=", "-", "+"]), max_size=14
    ).map("".join)
)
@example('+++ title = "x"')
@example('title = "a" draft = "b"')
@example("--- title: x")
def test_front_matter_gate_keeps_every_match(text: str) -> None:
    """The substring test before _FRONT_MATTER skips only blocks the regex would not match."""
    assert context._front_matter(text) == bool(context._FRONT_MATTER.search(text)), text


def _own_hits(ctx: Context, pattern: re.Pattern[str]) -> set[int]:
    return {i for i, s in enumerate(ctx.sentences) if pattern.search(s.text)}


def test_touching_holds_every_sentence_with_a_severity_gate_hit_on_our_pages() -> None:
    seen = 0
    for page in PAGES:
        ctx = Context(
            extract_document(page.read_bytes(), url="https://example.org/p", content_type="text/html")
        )
        own = _own_hits(ctx, severity.GATE)
        seen += len(own)
        touched = severity.gated_sentences(ctx)
        assert touched is not None
        assert own <= touched, page.name
    assert seen  # the fixtures state severities, so this checks something


@given(
    st.lists(st.sampled_from([*PIECES, ". ", "\n", "! ", "Sev", "P", "1"]), min_size=1, max_size=16).map(
        "".join
    )
)
@settings(deadline=None, max_examples=60)  # a page extraction each
@example("It was sev. 2 P1 outage")
@example("Priority\nP2 incident")
def test_touching_holds_every_sentence_with_a_hit(text: str) -> None:
    body = f"Report\n\n{text}\n\nThe service was down for a while and we restored it."
    ctx = Context(extract_document(body.encode(), url="https://example.org/p.txt", content_type="text/plain"))
    assert ctx.touching(severity.GATE) is not None  # our extraction gives ordered sentences
    assert _own_hits(ctx, severity.GATE) <= ctx.touching(severity.GATE), text
    touched = severity.gated_sentences(ctx)  # the fast way: folded text, case-sensitive
    if touched is not None:
        assert _own_hits(ctx, severity.GATE) <= touched, text
    zero = severity.ZERO_TOP_ANY_CASE.search(ctx.doc.text)
    if ctx.folded is not None:
        assert bool(severity.ZERO_TOP.search(ctx.folded)) == bool(zero), text


TIME_PIECES = [
    *"0123456789:/-. ",
    "12",
    "2024",
    "am",
    "PM",
    "a.m.",
    "p.m.",
    "UTC",
    "KST",
    "時",
    "시",
    "分",
    "분",
]
TIME_PIECES += [
    "年",
    "년",
    "月",
    "월",
    "日",
    "일",
    "Jan",
    "MARCH",
    "sept",
    "of ",
    "st",
    "th",
    "午後",
    "오전",
    "ı",
    "ſ",
]


def _parsed(ctx: Context) -> tuple[set[int], set[int]]:
    times = {i for i, s in enumerate(ctx.sentences) if date_parsing._times(s.text, [])}
    dates = {i for i, s in enumerate(ctx.sentences) if date_parsing._dates(s.text, 2000)}
    return times, dates


def test_time_and_date_gates_hold_every_sentence_that_states_one_on_our_pages() -> None:
    seen = 0
    for page in PAGES:
        ctx = Context(
            extract_document(page.read_bytes(), url="https://example.org/p", content_type="text/html")
        )
        times, dates = _parsed(ctx)
        seen += len(times) + len(dates)
        timed, dated = timeline.gated_sentences(ctx)
        assert timed is not None and dated is not None
        assert times <= timed and dates <= dated, page.name
    assert seen


@settings(deadline=None, max_examples=80)  # a page extraction each
@given(st.lists(st.sampled_from([*TIME_PIECES, ". ", "\n"]), min_size=1, max_size=16).map("".join))
@example("At 9 AM the site was down")
@example("12:30 UTC")
@example("오후 3시 20분")
@example("2024年3月5日")
@example("on the 5th of March")
@example("Sept. 4, 2024")
def test_time_and_date_gates_hold_every_sentence_that_states_one(text: str) -> None:
    body = f"Report\n\n{text}\n\nThe service was down for a while and we restored it."
    ctx = Context(extract_document(body.encode(), url="https://example.org/p.txt", content_type="text/plain"))
    times, dates = _parsed(ctx)
    timed, dated = timeline.gated_sentences(ctx)
    assert timed is None or times <= timed, text
    assert dated is None or dates <= dated, text


def _clause_says_plain(
    text: str, start: int, end: int, before: re.Pattern[str], after: tuple[str, ...], unable: bool
) -> bool:
    """negation._clause_says as first written: sliced head, a substring test per `after` word."""
    _, _, window, after_chars, _ = negation._cues()
    head = text[:start]
    cut = max((m.end() for m in negation._CLAUSE_END.finditer(head)), default=0)
    clause = head[cut:]
    if unable and "no" in clause.lower():
        clause = negation._UNABLE.sub(" ", clause)
    words = negation._WORDS.findall(clause.lower())[-window:]
    if words and before.search(" ".join(words)):
        return True
    tail = text[end : end + after_chars]
    stop = negation._CLAUSE_END.search(tail)
    tail = (tail[: stop.start()] if stop else tail).lower()
    return any(a in tail for a in after)


def _negation_cue_sets() -> list[tuple[re.Pattern[str], re.Pattern[str], tuple[str, ...], bool]]:
    n = vocab_match.settings()["negation"]
    neg_before, neg_after, *_ = negation._cues()
    ro_before, ro_after, _ = negation._ruled_out_cues()
    return [
        (neg_before, neg_after, tuple(n["after"]), True),
        (ro_before, ro_after, tuple(n["ruled_out"]["after"]), False),
    ]


def _check_clause_says(text: str) -> None:
    for before, after_rx, after_words, unable in _negation_cue_sets():
        for start in range(0, len(text) + 1, max(1, len(text) // 12)):
            for end in (start, min(len(text), start + 5)):
                fast = negation._clause_says(text, start, end, before, after_rx, unable=unable)
                assert fast == _clause_says_plain(text, start, end, before, after_words, unable), (
                    text,
                    start,
                )


def test_clause_test_answers_as_its_plain_form_on_our_pages() -> None:
    for text in SENTENCES:
        _check_clause_says(text)


def test_any_of_finds_a_word_exactly_where_a_substring_test_does() -> None:
    assert negation._any_of(()).search("anything") is None
    rx = negation._any_of(("was fine", "a.b", "정상", "正常でした"))
    for text, found in [
        ("it was fine", True),
        ("axb", False),
        ("a.b", True),
        ("DB는 정상", True),
        ("DBは正常", False),
    ]:
        assert (rx.search(text) is not None) is found


_PIECES = [*"abnotwsdil ,;.-—'", "no one could ", "was not ", "but ", " was fine", "İ", "없", "が、"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
@example("No one could log in, the database was fine")
@example("The API failed but no data was lost")
def test_clause_test_answers_as_its_plain_form_on_any_text(text: str) -> None:
    _check_clause_says(text)


def _label_plain(text: str) -> tuple[str, int, bool] | None:
    """context.label_role without its colon test first."""
    m = context._LABEL.match(text)
    if not m or any(c.isdigit() for c in m.group(1)):
        return None
    role = context.exact_role(m.group(1))
    return (role if role in context._LABEL_ROLES else "other"), m.end(), not text[m.end() :].strip()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([*"ab *_:：\n1", "Impact", "Root cause", "원인", "影響", " Note"]), max_size=20
    ).map("".join)
)
@example("**Impact:** users saw errors")
@example("Root cause")
def test_label_role_answers_as_its_plain_form(text: str) -> None:
    assert context.label_role(text) == _label_plain(text)
