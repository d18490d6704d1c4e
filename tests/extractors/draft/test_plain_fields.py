"""Symptoms and trigger in plain words: what users saw, and the change that started it (pages of our own)."""

from __future__ import annotations

import pytest

from extractors import draft_page


def page(title: str, body: str) -> bytes:
    return f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>{body}</article></body></html>".encode()


CASES = [
    (
        "Checkout trouble on May 2",
        "<p>On May 2 a new pricing config went out at 14:05. For 40 minutes checkout pages would not load "
        "for anyone.</p><h2>Root cause</h2><p>The config referenced a table that did not exist yet.</p>",
        "For 40 minutes checkout pages would not load for anyone.",
        "On May 2 a new pricing config went out at 14:05.",
    ),
    (
        "결제 페이지가 멈춘 날",
        "<p>5월 2일 오후 2시 가격 설정을 배포 직후 결제 페이지가 먹통이 되었다. 40분 동안 아무도 결제하지 "
        "못했다.</p><h2>원인</h2><p>설정이 아직 없는 테이블을 참조했다.</p>",
        "40분 동안 아무도 결제하지 못했다.",
        "5월 2일 오후 2시 가격 설정을 배포 직후 결제 페이지가 먹통이 되었다.",
    ),
    (
        "決済ページが止まった話",
        "<p>5月2日14時、価格設定の適用後に決済ページが表示されずに止まってしまいました。40分間、誰も決済"
        "できずにいました。</p><h2>原因</h2><p>設定がまだ存在しないテーブルを参照していました。</p>",
        "40分間、誰も決済できずにいました。",
        "5月2日14時、価格設定の適用後に決済ページが表示されずに止まってしまいました。",
    ),
]


@pytest.mark.parametrize(("title", "body", "symptom", "trigger"), CASES)
def test_plain_symptoms_and_trigger(title: str, body: str, symptom: str, trigger: str) -> None:
    draft = draft_page(page(title, body), url="https://e.example/p/").draft
    assert any(e.quote == symptom for e in draft.evidence.get("symptoms_text") or [])
    assert any(e.quote == trigger for e in draft.evidence.get("trigger") or [])


@pytest.mark.parametrize(("title", "body", "symptom", "trigger"), CASES)
def test_plain_impact_quotes_who_could_not_do_what(title: str, body: str, symptom: str, trigger: str) -> None:
    draft = draft_page(page(title, body), url="https://e.example/p/").draft
    assert any(e.quote == symptom for e in draft.evidence.get("impact") or []), draft.evidence.get("impact")
