"""Timelines in the clock formats of English, Korean and Japanese pages; durations measured from the
first impact; null when the page does not fix them; the trigger is never the fix."""

from __future__ import annotations

import pytest

from extractors import draft_page

KO_LEAD = "<p>6월 5일 결제 장애가 발생했습니다. 많은 고객분들께 불편을 드려 죄송합니다. 원인과 재발 방지 대책을 공유드립니다.</p>"
JA_LEAD = "<p>6月5日に決済障害が発生しました。多くのお客様にご迷惑をおかけしましたことをお詫び申し上げます。原因と再発防止策をご報告します。</p>"

CASES = {
    "en-24h-across-midnight": (
        "en",
        "<p>Between March 3 and March 4 the API was down.</p><h2>Timeline</h2><ul>"
        "<li>2024-03-03 22:40 UTC - deploy of v2.1 started failing requests.</li>"
        "<li>2024-03-03 23:10 UTC - alert fired and on-call paged.</li>"
        "<li>2024-03-04 01:15 UTC - rolled back; service restored.</li></ul>",
        ("PT30M", "PT2H35M"),
    ),
    "en-am-pm": (
        "en",
        "<p>On June 5 checkout failed.</p><h2>Timeline (all times PDT)</h2><ul>"
        "<li>9:05 AM - a config change is pushed and checkout errors begin.</li>"
        "<li>9:20 AM - customers report errors; we are alerted.</li>"
        "<li>11:40 AM - the change is reverted and checkout recovers.</li></ul>",
        ("PT15M", "PT2H35M"),
    ),
    "en-offset": (
        "en",
        "<p>On May 2 the API failed.</p><h2>Timeline</h2><ul>"
        "<li>May 2, 23:50 (UTC+9) - errors began after the deploy.</li>"
        "<li>May 3, 00:05 (UTC+9) - alert fired.</li>"
        "<li>May 3, 00:45 (UTC+9) - rolled back, errors stopped, service recovered.</li></ul>",
        ("PT15M", "PT55M"),
    ),
    "en-stated-durations": (
        "en",
        "<p>On May 2 the API returned errors for 40 minutes. The on-call engineer was paged 12 minutes "
        "after the errors began.</p><h2>Root cause</h2><p>A bad config.</p>",
        ("PT12M", "PT40M"),
    ),
    "ko-am-pm-across-midnight": (
        "ko",
        KO_LEAD + "<h2>타임라인</h2><ul><li>오후 11시 13분 배포 후 결제 오류 발생</li>"
        "<li>오후 11시 40분 모니터링 알림으로 장애 인지</li><li>오전 1시 5분 롤백 후 정상화</li></ul>",
        ("PT27M", "PT1H52M"),
    ),
    "ko-24h": (
        "ko",
        KO_LEAD + "<h2>타임라인</h2><ul><li>14:05 배포 후 결제 오류 발생</li>"
        "<li>14:20 알림으로 장애 인지</li><li>15:35 롤백 후 복구</li></ul>",
        ("PT15M", "PT1H30M"),
    ),
    "ja-kanji-minutes": (
        "ja",
        JA_LEAD + "<h2>経緯</h2><ul><li>14時05分 リリース後にエラーが発生</li>"
        "<li>14時20分 アラートにより検知</li><li>15時35分 切り戻しにより復旧</li></ul>",
        ("PT15M", "PT1H30M"),
    ),
    "ja-gogo-across-midnight": (
        "ja",
        JA_LEAD + "<h2>経緯</h2><ul><li>午後11時05分 リリース後にエラーが発生</li>"
        "<li>午後11時20分 アラートにより検知</li><li>午前0時35分 切り戻しにより復旧</li></ul>",
        ("PT15M", "PT1H30M"),
    ),
    "en-time-subheadings": (
        "en",
        "<p>On March 3 the API was down.</p><h2>Timeline</h2><h3>2024-03-03 22:40 UTC</h3>"
        "<p>A deploy started failing requests.</p><h3>2024-03-03 23:10 UTC</h3><p>An alert fired and "
        "on-call was paged.</p><h3>2024-03-04 01:15 UTC</h3><p>We rolled back; service was restored.</p>",
        ("PT30M", "PT2H35M"),
    ),
    "ko-stated-after-start": (
        "ko",
        "<p>6월 5일 결제 장애가 약 2시간 동안 발생했습니다. 장애 발생 15분 후 알림으로 인지했습니다.</p>"
        "<h2>원인</h2><p>설정 오류입니다.</p>",
        ("PT15M", "PT2H"),
    ),
    "ja-stated-after-start": (
        "ja",
        "<p>6月5日、決済障害が約2時間発生しました。障害発生から15分後にアラートで検知しました。</p>"
        "<h2>原因</h2><p>設定の誤りです。</p>",
        ("PT15M", "PT2H"),
    ),
    "en-no-times": (
        "en",
        "<p>Last week the API was down for a while after a deploy. We rolled back and it recovered.</p>"
        "<h2>Root cause</h2><p>A bad config.</p>",
        (None, None),
    ),
}


def page(lang: str, body: str) -> bytes:
    title = {"en": "Outage postmortem", "ko": "결제 장애 회고", "ja": "決済障害のご報告"}[lang]
    return f'<html lang="{lang}"><head><title>{title}</title></head><body><article><h1>{title}</h1>{body}</article></body></html>'.encode()


@pytest.mark.parametrize("name", sorted(CASES))
def test_detected_and_resolved_after_first_impact(name: str) -> None:
    lang, body, want = CASES[name]
    draft = draft_page(page(lang, body), url=f"https://e.example/{name}/", now="2026-01-01T00:00:00Z").draft
    timeline = draft.record.timeline
    assert (timeline.detected_after, timeline.resolved_after) == want
    for key, value in zip(("detected_after", "resolved_after"), want, strict=True):
        # Each figure rests on quotes; an unfixed one has none.
        assert bool(draft.evidence.get(f"timeline.{key}")) == (value is not None)


def test_the_fix_is_not_the_trigger() -> None:
    draft = draft_page(page("en", CASES["en-am-pm"][1]), url="https://e.example/t/").draft
    trigger = (draft.record.trigger or {}).get("en", "")
    assert "errors begin" in trigger and "reverted" not in trigger


def test_the_fix_does_not_land_in_symptoms_text() -> None:
    body = (
        "<p>On May 2 checkout was broken for an hour.</p><h2>What happened</h2><p>Customers saw 502 errors "
        "and slow pages on checkout. We restored service by rolling back the deploy, and the errors stopped."
        "</p><h2>Root cause</h2><p>A config change removed the pool limit.</p>"
    )
    draft = draft_page(page("en", body), url="https://e.example/s/").draft
    text = (draft.record.symptoms_text or {}).get("en", "")
    assert "502 errors" in text and "rolling back" not in text


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("2024-03-03 22:40 UTC", True),
        ("March 3, 9:05 PM PDT", True),
        ("14:05", True),
        ("오후 11시 13분", True),
        ("14時05分", True),
        ("Update at 14:05: we are investigating", False),
        ("Timeline", False),
        ("2024-03-03", False),
    ],
)
def test_a_heading_that_is_only_a_time_is_a_timeline_entry(heading: str, expected: bool) -> None:
    from extractors.draft.context import stamp_heading

    assert stamp_heading(heading) is expected
