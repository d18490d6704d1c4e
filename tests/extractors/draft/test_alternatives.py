"""Draft.alternatives: up to 3 runners-up per field, best first, each with score and exact quotes."""

from __future__ import annotations

import json

from extractors import draft_page

PAGE = (
    b"<html><head><title>API outage on May 2</title></head><body><article><h1>API outage on May 2</h1>"
    b"<p>On May 2 the API returned errors for an hour and requests timed out.</p>"
    b"<h2>Root cause</h2><p>A configuration change to the load balancer was the cause. "
    b"The change exposed a latent bug in the proxy. The network was congested at the time, "
    b"and a disk on one server failed.</p>"
    b"<h2>Impact</h2><p>Users saw elevated error rates and higher latency.</p>"
    b"</article></body></html>"
)


def draft(data: bytes = PAGE):
    return draft_page(data, url="https://blog.example.com/2024/05/outage/", now="2026-01-01T00:00:00Z")


def test_root_cause_alternatives_are_ranked_runners_up_with_exact_quotes() -> None:
    result = draft()
    d, text = result.draft, result.document.text
    alts = d.alternatives["root_cause"]
    assert 1 <= len(alts) <= 3
    assert d.record.root_cause not in [a.term for a in alts]
    assert [a.score for a in alts] == sorted((a.score for a in alts), reverse=True)
    assert all(0.0 <= a.score <= 1.0 for a in alts)
    top = d.confidence["root_cause"].value
    assert all(a.score <= top for a in alts)  # the drafted term scored best
    for a in alts:
        assert a.evidence  # every runner-up rests on what the page says
        assert all(text[e.start : e.end] == e.quote for e in a.evidence)


def test_vocabulary_alternatives_are_terms_not_kept() -> None:
    d = draft().draft
    for field, alts in d.alternatives.items():
        if field == "root_cause":
            continue
        kept = getattr(d.record, field) or []
        assert len(alts) <= 3 and not {a.term for a in alts} & set(kept), field


def test_json_carries_alternatives_and_is_byte_identical_run_to_run() -> None:
    first, second = draft().draft.model_dump_json(), draft().draft.model_dump_json()
    assert first == second
    data = json.loads(first)
    assert set(data["alternatives"]["root_cause"][0]) == {"term", "score", "evidence"}
    assert " weights shipped-" in data["source"]["drafter"]


def test_a_page_with_no_candidates_has_no_alternatives_key() -> None:
    words = "We planted a tree in the garden today and watered the roses along the path. " * 4
    plain = f"<html><body><article><h1>Hello</h1><p>{words}</p></article></body></html>".encode()
    assert "alternatives" not in json.loads(draft(plain).draft.model_dump_json())
