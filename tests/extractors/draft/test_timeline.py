"""Timeline rules on hand-built Documents: zones, dates, midnight, CJK clock times, stated durations."""

from __future__ import annotations

import pytest

from extractors.draft.evidence import Context
from extractors.draft.timeline import draft_timeline
from schema.document import Block, Document, ExtractorInfo, Section


def doc_of(lines: list[str], *, heading: str | None = "Timeline", lang: str = "en") -> Document:
    text, blocks = "", []
    if heading:
        blocks.append(Block(kind="heading", start=0, end=len(heading), level=2))
        text = heading
    for line in lines:
        text += "\n\n" if text else ""
        blocks.append(
            Block(kind="list_item" if heading else "paragraph", start=len(text), end=len(text) + len(line))
        )
        text += line
    sections = (
        [Section(heading=heading, path=[heading], level=2, role="timeline", start=0, end=len(text))]
        if heading
        else []
    )
    return Document(
        text=text,
        blocks=blocks,
        sections=sections,
        language=lang,
        extractor=ExtractorInfo(name="t", version="0"),
    )


def durations(doc: Document) -> tuple[str | None, str | None]:
    found = draft_timeline(Context(doc))
    tl = found.record["timeline"]
    for key in ("detected_after", "resolved_after"):
        for ev in found.evidence.get(f"timeline.{key}", []):
            assert doc.text[ev.start : ev.end] == ev.quote
    return tl["detected_after"], tl["resolved_after"]


def test_utc_times_roll_over_midnight() -> None:
    doc = doc_of(
        [
            "23:10 UTC - We deployed release 2.4.",
            "23:40 UTC - An alert fired for elevated errors.",
            "02:05 UTC - Service restored.",
        ]
    )
    assert durations(doc) == ("PT30M", "PT2H55M")


def test_dated_times_in_kst_across_days() -> None:
    doc = doc_of(
        [
            "2023-01-25 10:00 KST: the faulty config was deployed.",
            "2023-01-25 17:00 KST: users reported errors.",
            "2023-01-27 16:10 KST: service was restored.",
        ]
    )
    assert durations(doc) == ("PT7H", "PT54H10M")


def test_two_zones_for_one_instant_count_once() -> None:
    doc = doc_of(
        [
            "09:00 EDT (13:00 UTC): the bad build was released.",
            "10:30 EDT (14:30 UTC): a customer reported failures.",
            "12:00 EDT (16:00 UTC): the release was rolled back and service recovered.",
        ]
    )
    assert durations(doc) == ("PT1H30M", "PT3H")


def test_between_interval_in_prose() -> None:
    doc = doc_of(
        ["Between 2024-05-01 21:00 UTC and 2024-05-02 03:30 UTC the API was unavailable for most users."],
        heading=None,
    )
    assert durations(doc) == (None, "PT6H30M")


def test_korean_clock_times() -> None:
    doc = doc_of(
        [
            "오후 3시 10분: 설정 변경을 배포했습니다.",
            "오후 3시 40분: 알림으로 장애를 인지했습니다.",
            "오후 5시: 서비스가 복구되었습니다.",
        ],
        heading="타임라인",
        lang="ko",
    )
    assert durations(doc) == ("PT30M", "PT1H50M")


def test_japanese_clock_times() -> None:
    doc = doc_of(
        [
            "14時05分 新バージョンをリリースした。",
            "14時50分 問い合わせで障害を検知した。",
            "16時20分 切り戻しが完了し復旧した。",
        ],
        heading="経緯",
        lang="ja",
    )
    assert durations(doc) == ("PT45M", "PT2H15M")


@pytest.mark.parametrize(
    ("sentence", "lang", "expected"),
    [
        ("The outage lasted about 3 hours before the fix was rolled out.", "en", (None, "PT3H")),
        ("결제 장애는 약 7시간 동안 이어졌습니다.", "ko", (None, "PT7H")),
        ("감지까지 7시간, 복구까지 54시간 10분이 걸린 장애였다.", "ko", ("PT7H", "PT54H10M")),
        ("サービスは約2時間停止した。", "ja", (None, "PT2H")),
    ],
)
def test_stated_durations(sentence: str, lang: str, expected: tuple[str | None, str | None]) -> None:
    assert durations(doc_of([sentence], heading=None, lang=lang)) == expected


@pytest.mark.parametrize(
    "lines",
    [
        ["We will publish a follow-up within a few hours."],
        [
            "First detected 2020-09-21 18:27",
            "Resolved 2020-09-21 21:41",
        ],  # no first impact: nothing to subtract from
        ["10:00 We merged the fix and deployed it.", "09:00 Users reported errors."],
        ["Builds took 10-15 minutes longer than usual during the migration window."],
    ],
)
def test_no_invented_durations(lines: list[str]) -> None:
    assert durations(doc_of(lines)) == (None, None)


# --- the fitted choice among the values the page's times support (timeline.proposals)

_FITTED_PAGE = (
    b"<html lang='en'><head><title>Outage postmortem</title></head><body><article><h1>Outage postmortem</h1>"
    b"<p>Checkout was down and customers saw errors. This is our postmortem.</p><h2>Timeline</h2><ul>"
    b"<li>2024-03-03 13:00 UTC: version 2.3 was deployed.</li>"
    b"<li>2024-03-03 14:00 UTC: checkout began returning errors.</li>"
    b"<li>2024-03-03 14:20 UTC: an alert fired and the on-call engineer was paged.</li>"
    b"<li>2024-03-03 15:00 UTC: service restored.</li></ul></article></body></html>"
)


def _draft(weights=None):
    from extractors import draft_page

    return draft_page(
        _FITTED_PAGE, url="https://e.example/p/", now="2026-01-01T00:00:00Z", weights=weights
    ).draft


def test_proposals_hold_the_rules_value_first_and_the_other_starts() -> None:
    from extractors import extract_document
    from extractors.draft.timeline import proposals

    doc = extract_document(_FITTED_PAGE, url="https://e.example/p/", content_type="text/html")
    props = proposals(Context(doc))
    detected = [p.candidate for p in props["detected_after"]]
    assert detected[0].term == "PT20M" and detected[0].features["rule"] == 1.0  # from the errors
    assert "PT1H20M" in [c.term for c in detected]  # from the deploy: a candidate, not the rules' pick
    change = next(c for c in detected if c.term == "PT1H20M")
    assert change.features.get("start_change") == 1.0 and not change.features.get("rule")
    assert all(p.quotes for k in props for p in props[k])  # every value rests on quotes


def test_a_fitted_timeline_model_decides_and_without_one_the_rules_do() -> None:
    from extractors.draft.linear import TextSet, TimelineModel, shipped

    assert _draft(shipped().model_copy(update={"text": TextSet()})).record.timeline.detected_after == "PT20M"
    # A model that trusts changes over the impact: the deploy becomes the start.
    model = TimelineModel(bias=-2.0, weights={"start_change": 4.0})
    weights = shipped().model_copy(update={"text": TextSet(timeline={"detected_after": model})})
    draft = _draft(weights)
    assert draft.record.timeline.detected_after == "PT1H20M"
    assert any("deployed" in q.quote for q in draft.evidence["timeline.detected_after"])
    # A model that trusts nothing: null, never a guess.
    doubt = TimelineModel(bias=-5.0, weights={}, threshold=0.5)
    weights = shipped().model_copy(update={"text": TextSet(timeline={"detected_after": doubt})})
    assert _draft(weights).record.timeline.detected_after is None
