"""The pure checks of model-assisted drafting: quotes, durations, terms, the answer's shape, the merge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractors import extract_document
from extractors.draft import draft_document
from extractors.model import AnswerError, Folded, answer_schema, chunks, locate, merge_answers, parse_answer
from extractors.model.answer import Answer
from extractors.model.durations import derivable
from extractors.model.prompt import messages
from schema.document import Document, ExtractorInfo, Section
from schema.draft import Draft

PAGES = Path(__file__).resolve().parents[2] / "data" / "postmortems"
URL = "https://tech.nuripay.example/2023/09/20/payment-api-incident/"


@pytest.fixture(scope="module")
def ko() -> tuple[Document, Draft]:
    data = (PAGES / "ko-postmortem.html").read_bytes()
    doc = extract_document(data, url=URL, content_type="text/html")
    draft = draft_document(
        doc, source_url=URL, snapshot=None, snapshot_digest="sha256:x", now="2026-01-01T00:00:00Z"
    )
    return doc, draft


def _doc(text: str) -> Document:
    return Document(text=text, extractor=ExtractorInfo(name="plain", version="0"))


def test_a_quote_is_found_across_whitespace_and_located_exactly() -> None:
    doc = _doc("Intro.\n\nThe   database\nfailed over at 09:10 UTC. Done.")
    ev = locate(doc, Folded(doc.text), "The database failed over at 09:10 UTC.")
    assert ev is not None
    assert ev.quote == doc.text[ev.start : ev.end] == "The   database\nfailed over at 09:10 UTC."


def test_an_invented_or_trivial_quote_is_not_found() -> None:
    doc = _doc("The database failed over at 09:10 UTC.")
    folded = Folded(doc.text)
    assert locate(doc, folded, "The cache failed over at 09:10 UTC.") is None
    assert locate(doc, folded, "database") is None  # too short to prove anything
    assert locate(doc, folded, "") is None


@pytest.mark.parametrize(
    ("value", "quotes", "ok"),
    [
        ("PT2H55M", ["2023년 9월 14일 오후 3시 10분: 배포", "오후 6시 5분: 정상화"], True),
        ("PT15M", ["오후 3시 10분: 배포", "오후 3시 25분: 알림"], True),
        ("PT3H", ["약 3시간 동안 일부 결제가 실패했습니다."], True),
        ("PT3H", ["오후 3시 10분: 배포", "오후 6시 5분: 정상화"], False),
        ("PT10H", ["Between 21:27 UTC and 07:27 UTC certificates had expired."], True),
        ("PT1H30M", ["at 2:00 PM the queue stalled", "at 3:30 PM it recovered"], True),
        ("PT26H", ["2024-03-01 10:00 start", "2024-03-02 12:00 end"], True),
        ("PT2H", ["2024-03-01 10:00 start", "2024-03-02 12:00 end"], False),
        ("PT45M", ["The outage lasted 45 minutes."], True),
        ("PT1H", ["No times here at all."], False),
        ("P1M", ["lasted 1 month"], False),
    ],
)
def test_durations_must_follow_from_the_quotes(value: str, quotes: list[str], ok: bool) -> None:
    assert derivable(value, quotes) is ok


def test_answer_schema_is_strict_for_each_language() -> None:
    schema = answer_schema(("en", "ko"))
    text = schema["properties"]["texts"]["items"]["properties"]["text"]
    assert text["required"] == ["en", "ko"] and text["additionalProperties"] is False
    assert schema["required"] == ["texts", "items", "terms", "durations"]


@pytest.mark.parametrize(
    "content",
    [None, "", "not json", '{"texts": [{"field": "summary", "text": {"en": "cut', "[1, 2]", '{"texts": 5}'],
)
def test_broken_or_truncated_answers_are_refused(content: str | None) -> None:
    with pytest.raises(AnswerError):
        parse_answer(content)


def test_a_fenced_answer_with_extra_keys_is_read() -> None:
    answer = parse_answer('```json\n{"texts": [], "terms": [], "extra": 1}\n```')
    assert answer == Answer()


def test_long_pages_are_cut_by_section_and_cover_the_text() -> None:
    text = "".join(f"Heading {i}\n" + ("word " * 200) + "\n" for i in range(6))
    starts = [i for i in range(len(text)) if text.startswith("Heading", i)]
    doc = Document(
        text=text,
        sections=[Section(heading=f"Heading {i}", start=s, end=s + 1000) for i, s in enumerate(starts)],
        extractor=ExtractorInfo(name="plain", version="0"),
    )
    spans = chunks(doc, 2500)
    assert len(spans) == 3 and spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(b - a <= 2500 for a, b in spans) and all(spans[i][1] == spans[i + 1][0] for i in range(2))
    assert all(text[a:].startswith("Heading") for a, _ in spans)
    assert chunks(doc, 100000) == [(0, len(text))]


def test_the_prompt_carries_the_source_the_vocabularies_and_the_rule_draft(
    ko: tuple[Document, Draft],
) -> None:
    doc, draft = ko
    msgs = messages(doc, (0, len(doc.text)), draft, ("en", "ko"))
    assert [m["role"] for m in msgs] == ["system", "user"]
    user = msgs[1]["content"]
    assert doc.text in user and "upgrade-migration" in user and '"source_language": "ko"' in user
    assert "ANSWER JSON SCHEMA" not in user
    assert "ANSWER JSON SCHEMA" in messages(doc, (0, 10), draft, ("en",), schema={"x": 1})[1]["content"]


SUMMARY_KO = "2023년 9월 14일 오후 결제 API에서 장애가 발생해 약 3시간 동안 일부 결제가 실패했습니다."


def _answer(**parts: object) -> Answer:
    return Answer.model_validate(parts)


def test_checked_fields_merge_with_both_languages(ko: tuple[Document, Draft]) -> None:
    doc, draft = ko
    answer = _answer(
        texts=[
            {
                "field": "summary",
                "text": {
                    "en": "Payments failed for about three hours.",
                    "ko": "약 3시간 동안 결제가 실패했습니다.",
                },
                "quotes": [SUMMARY_KO],
            }
        ],
        terms=[
            {"field": "components", "term": "api-gateway", "quotes": ["결제 API에서 장애가 발생해"]},
            {
                "field": "root_cause",
                "term": "upgrade-migration",
                "quotes": ["데이터베이스 마이그레이션 스크립트를 운영 환경에 배포했습니다."],
            },
        ],
        durations=[
            {"field": "resolved_after", "value": "PT2H55M", "quotes": ["오후 3시 10분", "오후 6시 5분"]}
        ],
    )
    merged = merge_answers(draft, doc, [answer], model="m", languages=("en", "ko"))
    rec = merged.record
    assert list(rec.summary) == ["ko", "en"]
    assert merged.confidence["summary"].method == "model"
    assert merged.confidence["summary.en"].method == "machine-translation"
    assert merged.model is not None and merged.model.fields["summary"].machine_translated == ["en"]
    assert "api-gateway" in rec.components and "database" in rec.components  # added to the rules' terms
    assert rec.timeline.resolved_after == "PT2H55M"
    for quotes in merged.evidence.values():
        for ev in quotes:
            assert doc.text[ev.start : ev.end] == ev.quote
    assert merged.model.refusals == []
    assert merged.model.prompt_version and merged.model.model == "m"


def test_invented_quotes_unknown_terms_and_underivable_durations_never_reach_the_draft(
    ko: tuple[Document, Draft],
) -> None:
    doc, draft = ko
    answer = _answer(
        texts=[
            {
                "field": "summary",
                "text": {"en": "INVENTED SUMMARY", "ko": "지어낸 요약"},
                "quotes": ["이 문장은 원문에 없는 지어낸 인용입니다."],
            },
            {"field": "lessons", "text": {"en": "INVENTED LESSON"}, "quotes": []},
            {"field": "org", "text": {"en": "INVENTED ORG"}, "quotes": [SUMMARY_KO]},
            {"field": "INVENTED field", "text": {"en": "x"}, "quotes": [SUMMARY_KO]},
        ],
        items=[
            {
                "field": "remediation",
                "text": {"en": "INVENTED STEP", "ko": "지어낸 조치"},
                "quotes": ["지어낸 조치 인용문입니다 정말로"],
            }
        ],
        terms=[
            {"field": "components", "term": "flux-capacitor", "quotes": [SUMMARY_KO]},
            {"field": "root_cause", "term": "cosmic-rays", "quotes": [SUMMARY_KO]},
            {"field": "severity", "term": "sev1", "quotes": ["sev1 by our own reckoning here"]},
        ],
        durations=[
            {"field": "resolved_after", "value": "PT7H", "quotes": ["오후 3시 10분", "오후 6시 5분"]},
            {"field": "detected_after", "value": "soon", "quotes": ["오후 3시 25분"]},
        ],
    )
    merged = merge_answers(draft, doc, [answer], model="m", languages=("en", "ko"))
    assert merged.record == draft.record
    assert merged.evidence == draft.evidence and merged.confidence == draft.confidence
    text = json.dumps(merged.model_dump(mode="json"), ensure_ascii=False)
    for invented in ("INVENTED", "지어낸", "flux-capacitor", "cosmic-rays", "PT7H", "원문에 없는"):
        assert invented not in text
    assert merged.model is not None and merged.model.fields == {}
    refused = {r.field for r in merged.model.refusals}
    assert {
        "summary",
        "lessons",
        "org",
        "remediation[1]",
        "components",
        "root_cause",
        "severity.sev1",
    } <= refused
    assert {
        "timeline.resolved_after",
        "timeline.detected_after",
        "(a field the record does not have)",
    } <= refused
