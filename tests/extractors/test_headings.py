"""heading_role: the lexicon in schema/headings.json, fuzzy and numbered matches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from schema.document import SectionRole
from schema.headings import _LEXICON, heading_role, normalize_heading


@pytest.mark.parametrize(
    ("heading", "role"),
    [
        # The problems list is what made the incident worse, not a lesson (the reference lexicon
        # filed it under lessons; issue 26 moved it).
        ("What went wrong?", "contributing"),
        ("Problems we ran into", "contributing"),
        ("うまくいかなかったこと", "contributing"),
        ("아쉬운 점", "contributing"),
        ("What went well", "lessons"),
        ("What went wrong and why?", "root_cause"),
        ("Root Cause Analysis", "root_cause"),
        ("Root cause of the outage", "root_cause"),
        ("원인 분석", "root_cause"),
        ("4. 원인 분석", "root_cause"),
        ("発生原因", "root_cause"),
        ("第4章 発生原因", "root_cause"),
        ("■ 障害の原因について", "root_cause"),
        ("3. Timeline", "timeline"),
        ("Timeline of events", "timeline"),
        ("時系列", "timeline"),
        ("(1) 影響範囲", "impact"),
        ("2. 영향 범위", "impact"),
        ("Impact", "impact"),
        ("Summary", "summary"),
        ("1. 장애 개요", "summary"),
        ("■ 障害概要", "summary"),
        ("Detection", "detection"),
        ("Resolution", "remediation"),
        ("対応内容", "remediation"),
        ("Action Items", "action_items"),
        ("6. 재발 방지 대책", "action_items"),
        ("再発防止策", "action_items"),
        ("Lessons learned", "lessons"),
        ("Background", "background"),
        ("References", "skip"),
        ("Summery", "summary"),  # a typo still matches
        ("How we migrated our build farm", "other"),
        ("Why the tests did not catch it", "other"),
    ],
)
def test_roles(heading: str, role: str) -> None:
    assert heading_role(heading) == role


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("3. Timeline", "timeline"),
        ("(1) 概要", "概要"),
        ("第2章 原因", "原因"),
        ("【原因】", "原因"),
        ("2.1 Root Cause:", "root cause"),
        ("IV. Impact", "impact"),
        ("① 再発防止策", "再発防止策"),
        ("ＴＩＭＥＬＩＮＥ", "timeline"),
        ("What went wrong?", "what went wrong"),
    ],
)
def test_normalize(raw: str, normal: str) -> None:
    assert normalize_heading(raw) == normal


def test_lexicon_roles_are_section_roles() -> None:
    data = json.loads(Path(_LEXICON).read_text(encoding="utf-8"))
    assert set(data["roles"]) <= set(get_args(SectionRole))
    assert {"en", "ko", "ja"} <= set(data["roles"]["timeline"])


def test_every_reference_heading_maps_to_one_of_its_fields(shared: Path) -> None:
    ref = json.loads((shared / "reference" / "vocab-reference.json").read_text(encoding="utf-8"))
    refiled = set(json.loads(Path(_LEXICON).read_text(encoding="utf-8"))["refiled"]["forms"])
    for role, langs in ref["headings"].items():
        for lang, forms in langs.items():
            for form in forms:
                if f"{lang}:{form}" in refiled:
                    assert heading_role(form, lang) == "contributing", f"{lang}:{form}"
                    continue
                fields = ref["headings_provenance"].get(f"{lang}:{form}", {}).get("fields") or [role]
                got = heading_role(form, lang)
                # a form listed under several roles maps to one of them
                listed = [r for r, ls in ref["headings"].items() if form in ls.get(lang, [])]
                assert got in set(fields) | set(listed), f"{lang}:{form} -> {got}"
    for lang, forms in ref["headings_skip"].items():
        for form in forms:
            assert heading_role(form, lang) == "skip", f"{lang}:{form}"


def test_a_tie_goes_to_the_first_named_role_whatever_the_hash_seed() -> None:
    # Two roles' phrases of the same length ("timeline", "response"): the heading's own word order
    # decides, not set iteration order, which changes with PYTHONHASHSEED between processes.
    code = "from schema.headings import heading_role; print(heading_role('Timeline and Response', 'en'))"
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in range(1, 7)
    }
    assert seen == {"timeline"}


def test_one_heading_classifier_with_keywords_as_its_last_resort() -> None:
    from extractors.draft.evidence import heading_role_by_keyword

    cases = {
        "What went well": "lessons",
        "What we did well": "lessons",  # not remediation: a list of things that went right
        "Problems": "contributing",  # the problems list: what made it worse, not a lesson or a fix
        "잘한 점": "lessons",
        "良かった点": "lessons",
        "Root cause of the outage on the 3rd": "root_cause",  # a keyword inside a longer heading
        "장애 원인 분석 결과": "root_cause",
        "How we fixed it": "remediation",
    }
    for heading, role in cases.items():
        assert heading_role(heading, None) == role, heading
        assert heading_role_by_keyword(heading) == role, heading  # the drafter asks the same classifier


def test_what_went_well_is_never_remediation_in_a_draft() -> None:
    from extractors import draft_page

    body = (
        "<p>On May 2 the API returned errors for 40 minutes after a bad deploy.</p>"
        "<h2>Resolution</h2><p>We rolled back the deploy.</p>"
        "<h2>What went well</h2><ul><li>The alert fired within two minutes.</li><li>The rollback was quick.</li></ul>"
    )
    html = f"<html><head><title>API outage</title></head><body><article><h1>API outage</h1>{body}</article></body></html>"
    record = draft_page(html.encode(), url="https://e.example/w/").draft.record
    texts = [" ".join(item.text.values()) for item in record.remediation]
    assert texts and all("alert fired" not in t and "rollback was quick" not in t for t in texts)
