"""`incidents draft PAGE` on our Korean and Japanese fixtures: fields in the page language, with evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import run

PAGES = Path(__file__).resolve().parents[2] / "data" / "postmortems"


@pytest.mark.parametrize(("name", "lang"), [("ko-postmortem", "ko"), ("ja-postmortem", "ja")])
def test_draft_json_in_the_page_language(capsys: pytest.CaptureFixture[str], name: str, lang: str) -> None:
    result = run(
        capsys,
        "draft",
        str(PAGES / f"{name}.html"),
        "--url",
        f"https://pages.example/{name}/",
        "--format",
        "json",
    )
    assert result.code == 0, result.err
    draft = json.loads(result.out)
    rec = draft["record"]
    assert draft["source"]["language"] == lang
    for field in ("title", "summary", "trigger", "detection"):
        assert set(rec[field]) == {lang}, field
    assert all(set(item["text"]) == {lang} for item in rec["remediation"] + rec["action_items"])
    assert rec["timeline"]["resolved_after"] is not None
    for key in ("summary", "remediation", "action_items", "timeline.resolved_after", "root_cause"):
        assert draft["evidence"][key], key
    assert draft["postmortem"]["verdict"] is True


def test_draft_explain_lists_fields_with_quotes(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "draft", str(PAGES / "ja-postmortem.html"), "--explain")
    assert result.code == 0, result.err
    assert "summary  [heading" in result.out and "< 概要 @" in result.out
    assert "timeline.resolved_after" in result.out
