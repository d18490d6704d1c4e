"""Timeline shapes real postmortems use (lists, tables, bold times, date headings over bare times, ISO
stamps, season-less US zones, bare offsets, en/ko/ja dates, prose durations), and the never-invent
rules: null wherever the page does not fix both ends. Every page here is one we wrote."""

from __future__ import annotations

from datetime import date

import pytest

from extractors import draft_page
from extractors.draft.dates import SeasonalZone, _times

KO_LEAD = "<p>결제 장애가 발생했습니다. 많은 고객분들께 불편을 드려 죄송합니다. 원인과 재발 방지 대책을 공유드립니다.</p>"
JA_LEAD = "<p>決済障害が発生しました。多くのお客様にご迷惑をおかけしましたことをお詫び申し上げます。原因と再発防止策をご報告します。</p>"
EN_LEAD = (
    "<p>Checkout was down and customers saw errors. This is our postmortem with the root cause and fixes.</p>"
)
CASES = {
    "en-dash-list-utc": (
        "en",
        EN_LEAD + "<h2>Timeline</h2><p>All times on 2024-03-03.</p><ul>"
        "<li>14:05 UTC: a deploy went out and checkout began returning errors.</li>"
        "<li>14:21 UTC: an alert fired and the on-call engineer was paged.</li>"
        "<li>15:02 UTC: the deploy was rolled back and checkout recovered.</li></ul>",
        ("PT16M", "PT57M"),
    ),
    "en-table-datetime": (
        "en",
        EN_LEAD + "<h2>Timeline</h2><table><tr><th>Time</th><th>Event</th></tr>"
        "<tr><td>2019-07-01 10:00</td><td>Config change deployed; API starts returning 500s.</td></tr>"
        "<tr><td>2019-07-01 10:12</td><td>Alert fired for error rate.</td></tr>"
        "<tr><td>2019-07-01 11:30</td><td>Change reverted; service restored.</td></tr></table>",
        ("PT12M", "PT1H30M"),
    ),
    "en-bold-ampm-pdt": (
        "en",
        EN_LEAD + "<h2>Timeline</h2><p>On October 12, 2018:</p>"
        "<p><strong>10:15 AM PDT</strong> A database migration started and writes began failing.</p>"
        "<p><strong>10:40 AM PDT</strong> Customers reported errors and we were alerted.</p>"
        "<p><strong>1:05 PM PDT</strong> Writes recovered after the migration was reverted.</p>",
        ("PT25M", "PT2H50M"),
    ),
    "en-date-heading-bare-times": (
        "en",
        EN_LEAD + "<h2>Timeline</h2><h3>July 1</h3><ul>"
        "<li>22:40 - a deploy started failing requests</li><li>23:05 - alert fired, on-call paged</li></ul>"
        "<h3>July 2</h3><ul><li>02:10 - rolled back, service restored</li></ul>",
        ("PT25M", "PT3H30M"),
    ),
    "ko-date-line-bare-times": (
        "ko",
        KO_LEAD + "<h2>타임라인</h2><p>7월 1일</p><ul><li>14:05 배포 후 결제 오류 발생</li>"
        "<li>14:30 모니터링 알림으로 장애 인지</li></ul><p>7월 2일</p><ul><li>09:05 롤백 후 정상화</li></ul>",
        ("PT25M", "PT19H"),
    ),
    "en-iso-t": (
        "en",
        EN_LEAD + "<h2>Timeline</h2><ul><li>2018-10-12T14:05Z - errors began after a deploy.</li>"
        "<li>2018-10-12T14:35Z - alert fired.</li><li>2018-10-12T16:05Z - rolled back, service restored.</li></ul>",
        ("PT30M", "PT2H"),
    ),
    "en-iso-seconds": (
        "en",
        EN_LEAD + "<h2>Timeline</h2><ul><li>2018-10-12 14:05:00 - errors began after a deploy.</li>"
        "<li>2018-10-12 14:35:00 - alert fired.</li><li>2018-10-12 16:05:00 - rolled back, service restored.</li></ul>",
        ("PT30M", "PT2H"),
    ),
    "en-et-zone": (
        "en",
        EN_LEAD
        + "<h2>Timeline</h2><p>On March 3, 2024:</p><ul><li>9:05 PM ET - errors began after a deploy.</li>"
        "<li>9:30 PM ET - alert fired.</li><li>10:20 PM ET - rolled back, service restored.</li></ul>",
        ("PT25M", "PT1H15M"),
    ),
    "en-mixed-zones": (
        "en",
        EN_LEAD + "<p>On March 3, 2024 at 9:00 AM PT errors began after a deploy. "
        "An alert fired at 17:20 UTC. Service was restored at 12:30 PM ET.</p>",
        ("PT20M", "PT30M"),
    ),
    "en-utc-plus-9": (
        "en",
        EN_LEAD + "<h2>Timeline</h2><ul><li>2024-03-03 23:50 UTC+9: errors began after a deploy.</li>"
        "<li>2024-03-04 00:10 +09:00: alert fired.</li><li>2024-03-03 15:40 UTC: rolled back, service restored.</li></ul>",
        ("PT20M", "PT50M"),
    ),
    "en-dmy-long": (
        "en",
        EN_LEAD + "<p>On 12 October 2018 at 14:05 UTC the API went down after a deploy. "
        "We were paged at 14:20 UTC. The API was back online at 13 October 2018 01:05 UTC.</p>",
        ("PT15M", "PT11H"),
    ),
    "ko-full-dates": (
        "ko",
        KO_LEAD + "<h2>타임라인</h2><ul><li>2018년 10월 12일 오후 11시 50분 배포 후 결제 오류 발생</li>"
        "<li>2018년 10월 13일 오전 0시 20분 알림으로 장애 인지</li><li>2018년 10월 13일 오전 2시 50분 롤백 후 정상화</li></ul>",
        ("PT30M", "PT3H"),
    ),
    "ja-full-dates": (
        "ja",
        JA_LEAD + "<h2>経緯</h2><ul><li>2018年10月12日 23時50分 リリース後にエラーが発生</li>"
        "<li>2018年10月13日 0時20分 アラートにより検知</li><li>2018年10月13日 2時50分 切り戻しにより復旧</li></ul>",
        ("PT30M", "PT3H"),
    ),
    "ja-md-dates": (
        "ja",
        JA_LEAD + "<h2>経緯</h2><ul><li>10月12日 23:50 リリース後にエラーが発生</li>"
        "<li>10月13日 0:20 アラートにより検知</li><li>10月14日 9:50 切り戻しにより復旧</li></ul>",
        ("PT30M", "PT34H"),
    ),
    "en-for-about-3-hours": (
        "en",
        EN_LEAD.replace(
            "Checkout was down and customers saw errors.", "On May 2 checkout was down for about 3 hours."
        )
        + "<h2>Root cause</h2><p>A bad config.</p>",
        (None, "PT3H"),
    ),
    "ko-2-hours": (
        "ko",
        "<p>5월 2일 결제 서비스가 2시간 동안 중단되었습니다. 원인과 재발 방지 대책을 공유드립니다.</p><h2>원인</h2><p>설정 오류입니다.</p>",
        (None, "PT2H"),
    ),
    "ja-about-3-hours": (
        "ja",
        "<p>5月2日、決済サービスが約3時間にわたり停止しました。原因と再発防止策をご報告します。</p><h2>原因</h2><p>設定の誤りです。</p>",
        (None, "PT3H"),
    ),
    "en-kst-multi-day": (
        "en",
        EN_LEAD + "<h2>Timeline (KST)</h2><ul><li>Mar 3 23:40 - a deploy started failing requests.</li>"
        "<li>Mar 4 00:15 - users reported errors.</li><li>Mar 5 10:40 - fix deployed and confirmed; service recovered.</li></ul>",
        ("PT35M", "PT35H"),
    ),
}
NULL = {
    "no-cue-times": (
        "en",
        EN_LEAD
        + "<p>On May 2 at 14:00 UTC we held our weekly meeting. At 15:30 UTC we published the notes.</p><h2>Root cause</h2><p>A bad config.</p>",
    ),
    "migration-took": (
        "en",
        EN_LEAD
        + "<p>On May 2 the API failed. The migration took 3 hours. We spent 2 days writing this report.</p><h2>Root cause</h2><p>A bad config.</p>",
    ),
    "hypothetical": (
        "en",
        EN_LEAD
        + "<p>On May 2 the API failed.</p><h2>Lessons</h2><p>If the database fails for 2 hours again, orders would be lost. An outage lasting 6 hours could cost us a lot.</p>",
    ),
    "action-within": (
        "en",
        EN_LEAD
        + "<p>On May 2 the API failed.</p><h2>Action items</h2><ul><li>Within 24 hours we will add alerts for errors lasting over 5 minutes.</li><li>Page on-call for errors that persist for 10 minutes.</li></ul>",
    ),
    "other-incident": (
        "en",
        EN_LEAD
        + "<p>On May 2 the API failed after a bad config.</p><h2>Background</h2><p>Last year a similar outage lasted for 5 hours. In 2019 the API was down for 3 hours.</p>",
    ),
    "background-duration": (
        "en",
        EN_LEAD
        + "<p>On May 2 the API failed.</p><h2>Background</h2><p>Our nightly batch runs for 4 hours and a failed run is retried for 2 hours.</p>",
    ),
    "went-well": (
        "en",
        EN_LEAD
        + "<p>On May 2 the API failed.</p><h2>What went well</h2><ul><li>Previous incidents were resolved in 20 minutes.</li></ul>",
    ),
    "ko-other-incident": (
        "ko",
        KO_LEAD
        + "<p>지난해에도 비슷한 장애가 3시간 동안 발생한 적이 있습니다.</p><h2>원인</h2><p>설정 오류입니다.</p>",
    ),
    "ja-hypothetical": (
        "ja",
        JA_LEAD
        + "<p>もし障害が3時間続いた場合、影響はさらに大きくなっていた可能性があります。</p><h2>原因</h2><p>設定の誤りです。</p>",
    ),
    "ambiguous-midnight-prose": (
        "en",
        EN_LEAD + "<p>The API went down at 22:10. We were paged at 09:40. It was restored at 11:00.</p>",
    ),
    "publication-vs-occurrence": (
        "en",
        "<p>Posted on 2024-05-10 09:00 UTC.</p>"
        + EN_LEAD
        + "<p>Earlier this month the API failed after a deploy. We were alerted at 14:20 UTC and it recovered at 15:00 UTC.</p>",
    ),
    "detection-only": (
        "en",
        EN_LEAD
        + "<h2>Key events</h2><ul><li>First detected 2022-01-22 11:57</li><li>Incident declared 2022-01-22 14:41</li><li>Resolved 2022-01-22 14:38</li></ul>",
    ),
}
NULL["undated-rollover-of-many-hours"] = (
    "en",
    EN_LEAD + "<h2>Timeline</h2><ul><li>16:00 - a deploy went out and errors began.</li>"
    "<li>09:00 - customers reported errors; we were alerted.</li><li>09:40 - rolled back, service restored.</li></ul>",
)
CASES["en-fix-deployed-is-recovery"] = (
    "en",
    EN_LEAD
    + "<h2>Timeline</h2><h3>2020-02-20</h3><ul><li>21:17 UTC: uploads silently stopped reaching the index</li>"
    "<li>21:28 UTC: a user emails support about a missing upload</li><li>22:09 UTC: a pull request with the fix is opened</li>"
    "<li>22:48 UTC: Fix deployed on production</li></ul>",
    ("PT11M", "PT1H31M"),
)
CASES["en-undated-short-rollover"] = (
    "en",
    EN_LEAD + "<h2>Timeline</h2><ul><li>23:40 - a deploy went out and errors began.</li>"
    "<li>23:55 - customers reported errors; we were alerted.</li><li>00:40 - rolled back, service restored.</li></ul>",
    ("PT15M", "PT1H"),
)
NULL["timeline-opens-with-response"] = (
    "en",
    EN_LEAD
    + "<h2>Timeline</h2><p>On 2024-03-03:</p><ul><li>09:50 - the team began investigating slow checkouts.</li>"
    "<li>10:05 - customers reported errors.</li><li>10:40 - service restored.</li></ul>",
)
NULL["ko-meeting-duration"] = (
    "ko",
    KO_LEAD + "<p>장애 이후 대응 회의를 2시간 동안 진행했습니다.</p><h2>원인</h2><p>설정 오류입니다.</p>",
)
NULL["ja-investigation-duration"] = (
    "ja",
    JA_LEAD + "<p>障害の原因調査は3時間にわたり続きました。</p><h2>原因</h2><p>設定の誤りです。</p>",
)
CASES["en-heading-zone-mixed"] = (
    "en",
    "<p>On March 3, 2024 at 17:00 UTC checkout began returning errors after a deploy. This is our postmortem.</p>"
    "<h2>Timeline (all times PST)</h2><ul><li>9:20 AM - customers reported errors; we were alerted.</li><li>10:30 AM - rolled back, service restored.</li></ul>",
    ("PT20M", "PT1H30M"),
)
CASES["ja-heading-zone-mixed"] = (
    "ja",
    "<p>2024年3月3日 05:00 UTC にリリース後、決済エラーが発生しました。原因と再発防止策をご報告します。</p>"
    "<h2>経緯（日本時間）</h2><ul><li>14時20分 アラートにより検知</li><li>15時30分 切り戻しにより復旧</li></ul>",
    ("PT20M", "PT1H30M"),
)
CASES["en-all-times-note"] = (
    "en",
    "<p>All times are in PDT. On March 13, 2024 a deploy went out at 9:00 AM and checkout errors began.</p>"
    "<p>An alert fired at 16:25 UTC. Service was restored at 10:10 AM.</p><h2>Root cause</h2><p>A bad config.</p>",
    ("PT25M", "PT1H10M"),
)
CASES["en-went-unnoticed"] = (
    "en",
    EN_LEAD + "<p>On May 2 a bad config broke uploads, and the problem went unnoticed for 2 hours. "
    "It took 3 hours from the start of the incident to the deploy of the fix.</p><h2>Root cause</h2><p>A bad config.</p>",
    ("PT2H", "PT3H"),
)
CASES["en-took-to-notice"] = (
    "en",
    EN_LEAD + "<p>On May 2 a bad config broke uploads. It took us 40 minutes to notice.</p>"
    "<h2>Root cause</h2><p>A bad config.</p>",
    ("PT40M", None),
)
CASES["ko-detect-within"] = (
    "ko",
    "<p>6월 5일 결제 장애가 발생했습니다. 장애 발생 20분 만에 알림으로 인지했습니다. 원인과 재발 방지 대책을 공유드립니다.</p>"
    "<h2>원인</h2><p>설정 오류입니다.</p>",
    ("PT20M", None),
)
CASES["ja-detect-until"] = (
    "ja",
    "<p>6月5日に決済障害が発生しました。障害を検知するまで約30分かかりました。原因と再発防止策をご報告します。</p>"
    "<h2>原因</h2><p>設定の誤りです。</p>",
    ("PT30M", None),
)
NULL["after-we-started-investigating"] = (
    "en",
    EN_LEAD + "<p>On May 2 uploads broke. Service was restored 2 hours after we started investigating.</p>"
    "<h2>Root cause</h2><p>A bad config.</p>",
)
CASES["ko-half-past"] = (
    "ko",
    KO_LEAD + "<h2>타임라인</h2><p>2024년 3월 3일</p><ul><li>오후 2시 배포 후 결제 오류 발생</li>"
    "<li>오후 2시 반 알림으로 장애 인지</li><li>오후 4시 롤백 후 정상화</li></ul>",
    ("PT30M", "PT2H"),
)
CASES["ja-half-past"] = (
    "ja",
    JA_LEAD + "<h2>経緯</h2><p>2024年3月3日</p><ul><li>午後2時 リリース後にエラーが発生</li>"
    "<li>午後2時半 アラートにより検知</li><li>午後4時 切り戻しにより復旧</li></ul>",
    ("PT30M", "PT2H"),
)
CASES["en-key-duration"] = (
    "en",
    EN_LEAD + "<ul><li><strong>Date</strong>: 2024-03-03</li><li><strong>Duration</strong>: 2h 15m</li></ul>"
    "<h2>Root cause</h2><p>A bad config.</p>",
    (None, "PT2H15M"),
)
CASES["ko-key-duration"] = (
    "ko",
    KO_LEAD + "<ul><li>발생 일시: 2024년 3월 3일</li><li>장애 시간: 약 2시간 10분</li></ul>"
    "<h2>원인</h2><p>설정 오류입니다.</p>",
    (None, "PT2H10M"),
)
CASES["ja-key-duration"] = (
    "ja",
    JA_LEAD + "<ul><li>発生日時：2024年3月3日</li><li>影響時間：約3時間</li></ul>"
    "<h2>原因</h2><p>設定の誤りです。</p>",
    (None, "PT3H"),
)
CASES["en-hours-and-m"] = (
    "en",
    EN_LEAD.replace(
        "Checkout was down and customers saw errors.", "On May 2 checkout was down for 2 hours 15m."
    )
    + "<h2>Root cause</h2><p>A bad config.</p>",
    (None, "PT2H15M"),
)
NULL["key-clock-time-is-no-duration"] = (
    "ja",
    JA_LEAD + "<ul><li>障害時間：14時05分</li></ul><h2>原因</h2><p>設定の誤りです。</p>",
)
NULL["time-to-repair-from-detection"] = (
    "en",
    EN_LEAD
    + "<ul><li><strong>Time to repair</strong>: 5h 3m</li><li><strong>Time to resolve</strong>: 7h 43m</li></ul>",
)
CASES["en-table-header-zone"] = (
    "en",
    "<p>On March 13, 2024 at 16:00 UTC checkout began returning errors after a deploy. This is our postmortem.</p>"
    "<h2>Timeline</h2><table><tr><th>Time (PDT)</th><th>Event</th></tr><tr><td>9:25 AM</td><td>Customers reported errors; we were alerted.</td></tr>"
    "<tr><td>10:30 AM</td><td>Rolled back; service restored.</td></tr></table>",
    ("PT25M", "PT1H30M"),
)
CASES["en-negated-resolve"] = (
    "en",
    EN_LEAD
    + "<h2>Timeline</h2><p>On 2024-03-03:</p><ul><li>14:05 UTC: a deploy went out and errors began.</li>"
    "<li>14:20 UTC: an alert fired.</li><li>15:00 UTC: service restored.</li>"
    "<li>18:30 UTC: some old hostnames still could not be resolved by a partner's cache.</li></ul>",
    ("PT15M", "PT55M"),
)
CASES["ko-negated-resolve"] = (
    "ko",
    KO_LEAD + "<h2>타임라인</h2><p>2024년 3월 3일</p><ul><li>14:05 배포 후 결제 오류 발생</li>"
    "<li>14:20 알림으로 장애 인지</li><li>15:00 롤백 후 정상화</li><li>18:30 일부 캐시는 여전히 복구되지 않음</li></ul>",
    ("PT15M", "PT55M"),
)
CASES["en-latent-change"] = (
    "en",
    EN_LEAD
    + "<h2>Timeline</h2><ul><li>2024-03-04 10:00 UTC: version 2.3 was deployed; nothing looked wrong.</li>"
    "<li>2024-03-06 14:00 UTC: checkout started failing for some customers.</li><li>2024-03-06 14:30 UTC: an alert fired.</li>"
    "<li>2024-03-06 16:00 UTC: service restored.</li></ul>",
    ("PT30M", "PT2H"),
)
CASES["en-prose-new-cues"] = (
    "en",
    EN_LEAD
    + "<p>On 2024-03-03 at 14:05 UTC the API stopped responding. At 14:20 UTC a user reports the outage on our forum. "
    "The API was repaired at 15:00 UTC.</p><h2>Root cause</h2><p>A bad config.</p>",
    ("PT15M", "PT55M"),
)
CASES["ko-prose-impact-cue"] = (
    "ko",
    "<p>2024년 3월 3일 14시 5분 결제 오류 발생 이후 14시 20분 고객 문의로 장애를 인지했고, 15시에 복구했습니다. 원인과 재발 방지 대책을 공유드립니다.</p>"
    "<h2>원인</h2><p>설정 오류입니다.</p>",
    ("PT15M", "PT55M"),
)
CASES["en-previous-version"] = (
    "en",
    EN_LEAD
    + "<h2>Timeline</h2><p>On 2024-03-03:</p><ul><li>14:05 UTC: a deploy went out and errors began.</li>"
    "<li>14:20 UTC: an alert fired; it could have fired sooner.</li><li>15:00 UTC: rolled back to the previous version; service restored.</li></ul>",
    ("PT15M", "PT55M"),
)
CASES["ja-previous-version"] = (
    "ja",
    JA_LEAD + "<h2>経緯</h2><p>2024年3月3日</p><ul><li>14:05 リリース後にエラーが発生</li>"
    "<li>14:20 アラートにより検知</li><li>15:00 前回のバージョンに切り戻しにより復旧</li></ul>",
    ("PT15M", "PT55M"),
)
CASES["en-more-cues"] = (
    "en",
    EN_LEAD
    + "<p>On 2024-03-03 at 14:05 UTC API requests were failing for most users. At 14:12 UTC we started receiving support tickets. "
    "Error rates returned to baseline at 14:50 UTC.</p><h2>Root cause</h2><p>A bad config.</p>",
    ("PT7M", "PT45M"),
)
CASES["ja-resume-cue"] = (
    "ja",
    JA_LEAD + "<h2>経緯</h2><p>2024年3月3日</p><ul><li>14:05 リリース後にエラーが発生</li>"
    "<li>14:20 アラートにより検知</li><li>15:00 サービス再開</li></ul>",
    ("PT15M", "PT55M"),
)


def page(lang: str, body: str) -> bytes:
    title = {"en": "Outage postmortem", "ko": "결제 장애 회고", "ja": "決済障害のご報告"}[lang]
    return (
        f'<html lang="{lang}"><head><title>{title}</title></head><body><article><h1>{title}</h1>'
        f"{body}</article></body></html>"
    ).encode()


def timeline_of(lang: str, body: str, name: str):
    draft = draft_page(page(lang, body), url=f"https://e.example/{name}/", now="2026-01-01T00:00:00Z").draft
    return draft, draft.record.timeline


# A timeline whose times stand alone, as headings or as paragraphs of their own, with the event told
# in the sentences under each: the event may be in the entry's second sentence.
_ALONE = (
    ("2021-03-04 09:10 UTC", "A deploy changes the pool size. Jobs start failing with timeouts."),
    ("09:40", "A user reports on the forum that jobs are stuck. The on-call engineer starts investigating."),
    ("10:30", "The deploy is identified as the cause and rolled back."),
    ("11:05", "The queue has drained. The incident is resolved."),
)
CASES["en-time-headings-over-entries"] = (
    "en",
    EN_LEAD + "<h2>Timeline</h2>" + "".join(f"<h3>{t}</h3><p>{e}</p>" for t, e in _ALONE),
    ("PT30M", "PT1H55M"),
)
CASES["en-bold-time-paragraphs-over-entries"] = (
    "en",
    EN_LEAD + "<h2>Timeline</h2>" + "".join(f"<p><strong>{t}</strong></p><p>{e}</p>" for t, e in _ALONE),
    ("PT30M", "PT1H55M"),
)
CASES["ko-time-headings-over-entries"] = (
    "ko",
    KO_LEAD
    + "<h2>타임라인</h2><h3>2024년 3월 3일 14:05</h3><p>배포가 나갔습니다. 결제 오류가 발생하기 시작했습니다.</p>"
    "<h3>14:25</h3><p>고객 문의가 들어왔습니다. 담당자가 장애를 인지했습니다.</p>"
    "<h3>15:10</h3><p>배포를 되돌렸습니다. 결제가 정상화되었습니다.</p>",
    ("PT20M", "PT1H5M"),
)
CASES["ja-time-paragraphs-over-entries"] = (
    "ja",
    JA_LEAD
    + "<h2>経緯</h2><p><strong>2024年3月3日 14:05</strong></p><p>設定を変更しました。決済エラーが発生しました。</p>"
    "<p><strong>14:25</strong></p><p>お客様からの問い合わせがありました。障害を検知しました。</p>"
    "<p><strong>15:10</strong></p><p>設定を切り戻しました。決済が復旧しました。</p>",
    ("PT20M", "PT1H5M"),
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_timeline_shapes(name: str) -> None:
    lang, body, want = CASES[name]
    draft, timeline = timeline_of(lang, body, name)
    assert (timeline.detected_after, timeline.resolved_after) == want
    for key, value in zip(("detected_after", "resolved_after"), want, strict=True):
        assert bool(draft.evidence.get(f"timeline.{key}")) == (value is not None)


@pytest.mark.parametrize("name", sorted(NULL))
def test_never_invented(name: str) -> None:
    lang, body = NULL[name]
    draft, timeline = timeline_of(lang, body, name)
    assert (timeline.detected_after, timeline.resolved_after) == (None, None)
    assert not [k for k in draft.evidence if k.startswith("timeline.")]


@pytest.mark.parametrize(
    ("day", "offset"),
    [
        (date(2024, 3, 9), -5.0),  # ET before the second Sunday of March: EST
        (date(2024, 3, 10), -4.0),  # from that Sunday: EDT
        (date(2024, 11, 2), -4.0),
        (date(2024, 11, 3), -5.0),  # the first Sunday of November: back to EST
        (date(2006, 4, 1), -5.0),  # before 2007: DST from the first Sunday of April
        (date(2006, 4, 2), -4.0),
        (date(2006, 10, 29), -5.0),  # ... to the last Sunday of October
    ],
)
def test_seasonal_us_zone(day: date, offset: float) -> None:
    assert SeasonalZone(-5).on(day) == offset


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("at 14:05+09:00 the", 9.0),
        ("at 14:05 +0530 the", 5.5),
        ("2018-10-12T14:05:00-07:00", -7.0),
        ("from 14:05-15:00 the", None),  # a range, not an offset
        ("at 9:00 AM PT", -8.0),
        ("at 10:15 UTC+9", 9.0),
    ],
)
def test_offsets_after_a_time(text: str, offset: float | None) -> None:
    assert _times(text, [])[0][5] == offset


def test_a_date_without_a_year_is_not_after_publication() -> None:
    # Written on January 5 about New Year's Eve: "Dec 31" is last year's, so recovery on Jan 1 is 4h later.
    body = (
        "<p>Checkout was down and customers saw errors. This is our postmortem.</p><h2>Timeline (UTC)</h2><ul>"
        "<li>Dec 31 22:00 - a deploy went out and errors began.</li><li>Dec 31 22:30 - an alert fired.</li>"
        "<li>Jan 1 02:00 - rolled back, service restored.</li></ul>"
    )
    html = (
        '<html lang="en"><head><title>Outage postmortem</title><meta property="article:published_time" '
        f'content="2025-01-05T10:00:00Z"></head><body><article><h1>Outage postmortem</h1>{body}</article></body></html>'
    )
    timeline = draft_page(
        html.encode(), url="https://e.example/p/", now="2026-01-01T00:00:00Z"
    ).draft.record.timeline
    assert (timeline.detected_after, timeline.resolved_after) == ("PT30M", "PT4H")
