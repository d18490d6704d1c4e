"""refine_with_model against a stub chat-completions server on 127.0.0.1 (real HTTP)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from extractors import extract_document
from extractors.draft import draft_document
from flows.model.client import ChatClient
from flows.model.refine import refine_with_model
from flows.settings import Settings
from flows.store.atomic import dumps_model
from schema.document import Document
from schema.draft import Draft
from tests.flows.model import answers
from tests.flows.model.stub import Stub, answer, rejects_json_schema, status

PAGES = Path(__file__).resolve().parents[2] / "data" / "postmortems"
KEY = "sk-test-never-written-0123456789"


def _settings(tmp_path: Path, url: str, **more: object) -> Settings:
    values: dict[str, object] = {
        "data_dir": tmp_path,
        "llm_base_url": url,
        "llm_model": "stub-model",
        "llm_api_key": KEY,
        "llm_retry_backoff": 0.01,
        "llm_timeout": 10.0,
        "llm_pause": 0.0,  # each test its own endpoint's fate (test_pause... tests the pause)
    }
    return Settings(**{**values, **more})  # type: ignore[arg-type]


def _page(name: str = answers.PAGE) -> tuple[Document, Draft]:
    data = (PAGES / name).read_bytes()
    doc = extract_document(data, url=answers.URL, content_type="text/html")
    draft = draft_document(
        doc, source_url=answers.URL, snapshot=None, snapshot_digest="sha256:x", now="2026-01-01T00:00:00Z"
    )
    return doc, draft


def _all_text(tmp_path: Path, draft: Draft, line: str) -> str:
    cached = "".join(p.read_text(encoding="utf-8") for p in tmp_path.rglob("*.json"))
    return dumps_model(draft) + line + cached


def test_a_good_answer_gives_both_languages_with_checked_quotes(stub: Stub, tmp_path: Path) -> None:
    stub.script(answer(answers.GOOD))
    doc, rule = _page()
    draft, report = refine_with_model(rule, doc, _settings(tmp_path, stub.url))
    rec = draft.record
    for name in ("summary", "trigger", "detection"):
        assert set(getattr(rec, name)) == {"ko", "en"}, name
        assert draft.confidence[name].method == "model"
        assert draft.confidence[f"{name}.en"].method == "machine-translation"
    assert all(set(item.text) == {"ko", "en"} for item in rec.remediation)
    assert rec.timeline.detected_after == "PT15M" and rec.timeline.resolved_after == "PT2H55M"
    assert rec.root_cause == "upgrade-migration" and "request-timeouts" in rec.symptoms
    for quotes in draft.evidence.values():
        assert all(doc.text[q.start : q.end] == q.quote for q in quotes)
    assert draft.evidence["trigger"][0].quote == answers.LOCK_KO
    assert draft.model is not None and draft.model.model == "stub-model" and draft.model.refusals == []
    assert draft.model.fields["summary"].machine_translated == ["en"]
    # what was sent: the protocol, the key as a bearer token, a json_schema answer format
    (request,) = stub.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    assert request["body"]["response_format"]["type"] == "json_schema"
    assert request["body"]["model"] == "stub-model" and request["body"]["temperature"] == 0
    # figures for the run report; the key is nowhere we write
    assert (report.requests, report.prompt_tokens, report.completion_tokens) == (1, 1200, 300)
    assert report.line().startswith("model stub-model: 7 fields, 0 refused, 1500 tokens")
    assert KEY not in _all_text(tmp_path, draft, report.line()) and KEY not in repr(
        _settings(tmp_path, stub.url)
    )


@pytest.mark.parametrize(
    ("served", "why"),
    [
        (answer(answers.INVENTED_QUOTES), "not in the source"),
        (answer(answers.UNKNOWN_TERMS), "outside the"),
        (answer(answers.BROKEN_JSON), "not JSON"),
        (answer(answers.GOOD, finish="length"), "cut off at the token limit"),
    ],
    ids=["invented-quotes", "unknown-terms", "broken-json", "truncated"],
)
def test_bad_answers_never_reach_the_draft(stub: Stub, tmp_path: Path, served: object, why: str) -> None:
    stub.script(served)  # type: ignore[arg-type]
    doc, rule = _page()
    draft, report = refine_with_model(rule, doc, _settings(tmp_path, stub.url))
    assert draft.record == rule.record
    assert draft.evidence == rule.evidence and draft.confidence == rule.confidence
    written = dumps_model(draft) + report.line()  # (the answer cache keeps the raw answer, as it must)
    for invented in answers.INVENTED:
        assert invented not in written, invented
    assert draft.model is not None and draft.model.fields == {}
    seen = " ".join(r.reason for r in draft.model.refusals) + (draft.model.note or "")
    assert why in seen


def test_without_an_endpoint_the_draft_is_the_same_object(tmp_path: Path) -> None:
    doc, rule = _page()
    draft, report = refine_with_model(rule, doc, Settings(data_dir=tmp_path))
    assert draft is rule and report.requests == 0
    assert '"model"' not in dumps_model(draft)


def test_429_waits_as_retry_after_says_then_answers(stub: Stub, tmp_path: Path) -> None:
    stub.script(status(429, {"Retry-After": "7"}), status(503), answer(answers.GOOD))
    waits: list[float] = []
    settings = _settings(tmp_path, stub.url)
    doc, rule = _page()
    with ChatClient(settings, sleep=waits.append) as client:
        draft, report = refine_with_model(rule, doc, settings, client=client)
    assert waits[0] == 7.0 and 0.0 < waits[1] <= 0.02  # Retry-After, then the backoff
    assert report.retries == 2 and len(stub.requests) == 3
    assert draft.model is not None and "summary" in draft.model.fields


def test_5xx_retried_then_the_rule_draft_stands_with_a_note(stub: Stub, tmp_path: Path) -> None:
    stub.script(default=status(503))
    doc, rule = _page()
    draft, report = refine_with_model(rule, doc, _settings(tmp_path, stub.url, llm_max_retries=2))
    assert len(stub.requests) == 3
    assert draft.record == rule.record
    assert draft.model is not None and "answered 503 after 2 retries" in (draft.model.note or "")
    assert "rule-based draft stands" in (draft.model.note or "") and "503" in report.line()


def test_a_retry_after_beyond_the_limit_ends_the_retries(stub: Stub, tmp_path: Path) -> None:
    stub.script(status(429, {"Retry-After": "3600"}), answer(answers.GOOD))
    doc, rule = _page()
    draft, _ = refine_with_model(rule, doc, _settings(tmp_path, stub.url))
    assert len(stub.requests) == 1 and draft.record == rule.record
    assert draft.model is not None and "asks to wait 3600 s" in (draft.model.note or "")


def test_a_server_without_json_schema_gets_json_object_and_the_schema_in_the_prompt(
    stub: Stub, tmp_path: Path
) -> None:
    stub.script(rejects_json_schema(), default=answer(answers.GOOD))
    doc, rule = _page()
    draft, _ = refine_with_model(rule, doc, _settings(tmp_path, stub.url))
    first, second = stub.requests
    assert first["body"]["response_format"]["type"] == "json_schema"
    assert second["body"]["response_format"] == {"type": "json_object"}
    assert "ANSWER JSON SCHEMA" in second["body"]["messages"][1]["content"]
    assert draft.model is not None and "summary" in draft.model.fields


def test_an_endpoint_that_is_down_leaves_the_rule_draft(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    doc, rule = _page()
    draft, report = refine_with_model(rule, doc, _settings(tmp_path, f"http://127.0.0.1:{port}/v1"))
    assert draft.record == rule.record
    assert draft.model is not None and "endpoint is down" in (draft.model.note or "")
    assert report.requests == 0


def test_a_slow_endpoint_times_out_and_the_rule_draft_stands(stub: Stub, tmp_path: Path) -> None:
    slow = answer(answers.GOOD)
    slow.delay = 1.5
    stub.script(slow)
    doc, rule = _page()
    draft, report = refine_with_model(rule, doc, _settings(tmp_path, stub.url, llm_timeout=0.3))
    assert draft.record == rule.record
    assert "did not answer in time" in (draft.model.note or "") if draft.model else False
    assert report.seconds < 1.4


def test_answers_are_cached_so_a_rerun_costs_nothing(stub: Stub, tmp_path: Path) -> None:
    stub.script(answer(answers.GOOD))
    doc, rule = _page()
    settings = _settings(tmp_path, stub.url)
    first, _ = refine_with_model(rule, doc, settings)
    again, report = refine_with_model(rule, doc, settings)
    assert len(stub.requests) == 1
    assert (report.requests, report.cached, report.tokens) == (0, 1, 0)
    assert dumps_model(again) == dumps_model(first)
    # another model, or another prompt version, is asked afresh
    stub.script(answer(answers.GOOD))
    refine_with_model(rule, doc, settings.model_copy(update={"llm_model": "other"}))
    assert len(stub.requests) == 2


def test_broken_answers_are_not_cached(stub: Stub, tmp_path: Path) -> None:
    stub.script(answer(answers.BROKEN_JSON), answer(answers.GOOD))
    doc, rule = _page()
    settings = _settings(tmp_path, stub.url)
    refine_with_model(rule, doc, settings)
    draft, _ = refine_with_model(rule, doc, settings)
    assert len(stub.requests) == 2 and draft.model is not None and draft.model.fields


def _long_page() -> bytes:
    sections = "".join(
        f"<h2>Part {i}</h2><p>{'On 2024-03-01 at 10:00 UTC the queue stalled and requests failed. ' * 30}</p>"
        for i in range(4)
    )
    return f"<html><body><article><h1>Incident report</h1>{sections}</article></body></html>".encode()


def test_long_pages_go_by_section_within_the_token_budget(stub: Stub, tmp_path: Path) -> None:
    doc = extract_document(_long_page(), url="https://x.example/pm", content_type="text/html")
    rule = draft_document(
        doc,
        source_url="https://x.example/pm",
        snapshot=None,
        snapshot_digest="sha256:y",
        now="2026-01-01T00:00:00Z",
    )
    stub.script(
        default=answer({"texts": [], "items": [], "terms": [], "durations": []}, prompt=100, completion=10)
    )
    settings = _settings(tmp_path, stub.url, llm_chunk_chars=2500, llm_max_tokens=100, llm_token_budget=8000)
    _, report = refine_with_model(rule, doc, settings)
    assert report.chunks == 4 and report.requests == 2  # 2 x (2500 + 1250 + 100) fit in 8000, 3 do not
    assert "token budget 8000: 2 of 4 parts not sent" in report.line()
    sent = [json.loads(json.dumps(r["body"]["messages"][1]["content"])) for r in stub.requests]
    assert all("SOURCE (part" in s for s in sent)


def test_after_a_failure_the_endpoint_is_paused_so_later_drafts_do_not_wait(
    stub: Stub, tmp_path: Path
) -> None:
    from flows.model.pause import PAUSES

    stub.script(default=status(503))
    settings = _settings(tmp_path, stub.url, llm_max_retries=0, llm_pause=30.0)
    doc, rule = _page()
    try:
        refine_with_model(rule, doc, settings)
        draft, report = refine_with_model(rule, doc, settings)
    finally:
        PAUSES.clear(stub.url)
    assert len(stub.requests) == 1 and report.requests == 0
    assert draft.model is not None and "not asked again for 30 s" in (draft.model.note or "")


def test_a_page_in_a_third_language_is_rewritten_in_it_and_translated(stub: Stub, tmp_path: Path) -> None:
    stub.script(answer({"texts": [], "items": [], "terms": [], "durations": []}))
    doc, rule = _page("ja-postmortem.html")
    assert rule.source.language == "ja"
    refine_with_model(rule, doc, _settings(tmp_path, stub.url))
    schema = stub.requests[0]["body"]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["items"]["items"]["properties"]["text"]["required"] == ["ja", "en", "ko"]
