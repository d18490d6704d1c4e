"""Detection: how the team found out, from the ways pages say it (emails, issues, inquiries, monitoring)."""

from __future__ import annotations

import pytest

from extractors import draft_page


def page(title: str, body: str) -> bytes:
    return f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>{body}</article></body></html>".encode()


@pytest.mark.parametrize(
    ("title", "body", "quote"),
    [
        (
            "The day our search stopped working",
            "<p>Last Tuesday search broke for everyone for two hours. We got emails from users before "
            "anything else showed it.</p><h2>What happened</h2><p>A new index mapping went out and the "
            "search nodes could not read it.</p>",
            "We got emails from users before anything else showed it.",
        ),
        (
            "Builds failed on May 2",
            "<p>On May 2 every build failed for an hour. A contributor opened an issue twenty minutes in."
            "</p><h2>Root cause</h2><p>The new base image lacked git.</p>",
            "A contributor opened an issue twenty minutes in.",
        ),
        (
            "결제 장애 회고",
            "<p>5월 2일 결제가 한 시간 동안 실패했습니다. 고객센터로 신고가 들어와 장애를 알았습니다.</p>"
            "<h2>원인</h2><p>설정 오류입니다.</p>",
            "고객센터로 신고가 들어와 장애를 알았습니다.",
        ),
        (
            "決済障害について",
            "<p>5月2日、決済が1時間失敗しました。監視ダッシュボードの異常で発覚しました。</p>"
            "<h2>原因</h2><p>設定の誤りです。</p>",
            "監視ダッシュボードの異常で発覚しました。",
        ),
    ],
)
def test_detection_quotes_how_the_team_found_out(title: str, body: str, quote: str) -> None:
    draft = draft_page(page(title, body), url="https://e.example/d/").draft
    assert any(e.quote == quote for e in draft.evidence.get("detection") or []), draft.evidence.get(
        "detection"
    )
