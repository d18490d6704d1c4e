"""The summary is the incident in brief: never a greeting, an author's introduction or a table of contents."""

from __future__ import annotations

import pytest

from extractors import draft_page

CASES = [
    (
        "<p>Hi everyone, I am a backend engineer on the payments team.</p><p>On May 2 our payment API "
        "returned errors for 40 minutes after a bad deploy; most card payments failed.</p>"
        "<h2>Root cause</h2><p>A config change.</p>",
        "en",
        "On May 2 our payment API",
    ),
    (
        "<p>안녕하세요, 결제팀 백엔드 개발자 김철수입니다.</p><p>5월 2일 결제 API에서 40분 동안 장애가 발생해 "
        "대부분의 카드 결제가 실패했습니다.</p><h2>원인</h2><p>설정 변경이 원인이었습니다.</p>",
        "ko",
        "5월 2일 결제 API에서",
    ),
    (
        "<p>こんにちは。決済チームの山田と申します。</p><p>5月2日、決済APIで40分間障害が発生し、多くのカード決済が"
        "失敗しました。</p><h2>原因</h2><p>設定変更が原因でした。</p>",
        "ja",
        "5月2日、決済APIで",
    ),
    (
        "<h2>Summary</h2><p>Hello, welcome to our engineering blog.</p><p>On May 2 the payment API "
        "returned errors for 40 minutes.</p><h2>Root cause</h2><p>A config change.</p>",
        "en",
        "On May 2 the payment API",
    ),
]


@pytest.mark.parametrize(("body", "lang", "opening"), CASES)
def test_summary_skips_the_preamble(body: str, lang: str, opening: str) -> None:
    html = f"<html><head><title>Payment outage</title></head><body><article><h1>Payment outage</h1>{body}</article></body></html>"
    summary = draft_page(html.encode(), url="https://e.example/s/").draft.record.summary or {}
    assert summary.get(lang, "").startswith(opening), summary
