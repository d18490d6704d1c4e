"""Moments (extractors/draft/moments.py): the stated times a timeline is read from, in the shapes
unseen postmortems used and the drafter missed (issue 34): ISO 8601 stamps with seconds on
`Start (UTC):` / `End (UTC):` lines, prose times in GMT, a timeline list whose first entry carries
the full date and later ones only the time, entries that are headings ("### 21:00 - Team
alerted"), incidents that span days, detection at the moment of impact. Every page is one we wrote."""

from __future__ import annotations

import re

import pytest

from extractors import draft_page

LEAD = (
    "<p>Checkout was down and customers saw errors. This is our postmortem with the root cause and fixes.</p>"
)

SHAPES: dict[str, tuple[str, tuple[str | None, str | None]]] = {
    "iso-seconds-start-end-lines": (
        LEAD + "<h2>Incident details</h2><ul>"
        "<li>Start (UTC): 2023-05-09T14:02:11Z</li>"
        "<li>Detected (UTC): 2023-05-09T14:20:40Z</li>"
        "<li>End (UTC): 2023-05-09T16:43:11Z</li></ul>"
        "<h2>Root cause</h2><p>A configuration change removed a route.</p>",
        ("PT18M29S", "PT2H41M"),
    ),
    "prose-gmt": (
        "<p>On 3 March 2022 our API started returning errors around 11:00 GMT after a faulty release. "
        "Customers reported the errors to support at 11:40 GMT. The release was rolled back and the "
        "incident was resolved at 23:01 GMT.</p><h2>Root cause</h2><p>A faulty release.</p>",
        ("PT40M", "PT12H1M"),
    ),
    "first-entry-full-date": (
        LEAD + "<h2>Timeline</h2><ul>"
        "<li>October 12th, 2022 at 21:17 (UTC): the database failover started and writes began failing.</li>"
        "<li>21:31: an alert fired and the on-call engineer was paged.</li>"
        "<li>23:05: writes recovered after the primary was restored.</li></ul>",
        ("PT14M", "PT1H48M"),
    ),
    "time-headings-with-event": (
        LEAD + "<h2>Timeline</h2><p>All times in CET</p>"
        "<h3>2022-06-02 10:00 - Problem starts</h3><p>The service stopped launching new sessions.</p>"
        "<h3>21:00 - Team alerted</h3><p>A user reported the outage in the chat channel.</p>"
        "<h3>21:24 - Quota object deleted and issue goes away</h3><p>Sessions launched again and the service was restored.</p>",
        ("PT11H", "PT11H24M"),
    ),
    "spans-days": (
        LEAD + "<h2>Timeline</h2><ul>"
        "<li>2021-02-01 09:00 UTC: the nightly export started failing silently.</li>"
        "<li>2021-02-20 10:30 UTC: a user reported that exports were missing.</li>"
        "<li>2021-03-30 16:00 UTC: the fix was deployed and exports were restored.</li></ul>",
        ("P19DT1H30M", "P57DT7H"),
    ),
    "detected-at-impact": (
        LEAD + "<h2>Timeline</h2><ul>"
        "<li>2024-03-03 14:05 UTC: checkout began returning errors.</li>"
        "<li>2024-03-03 14:05 UTC: an alert fired and the on-call engineer was paged.</li>"
        "<li>2024-03-03 15:00 UTC: the deploy was rolled back and service restored.</li></ul>",
        ("PT0S", "PT55M"),
    ),
}


DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$")


def seconds(value: str | None) -> int | None:
    """Seconds of an ISO 8601 duration (PT1H2M, P3DT4H): PT24H and P1D are the same length."""
    if value is None:
        return None
    m = DURATION.match(value)
    assert m, value
    d, h, mi, s = (int(x or 0) for x in m.groups())
    return ((d * 24 + h) * 60 + mi) * 60 + s


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_timeline_shapes_of_unseen_pages(name: str) -> None:
    body, (detected, resolved) = SHAPES[name]
    html = f'<html lang="en"><head><title>Outage postmortem</title></head><body><article><h1>Outage postmortem</h1>{body}</article></body></html>'
    draft = draft_page(html.encode(), url=f"https://e.example/{name}/", now="2026-01-01T00:00:00Z").draft
    got = draft.record.timeline
    assert (seconds(got.detected_after), seconds(got.resolved_after)) == (
        seconds(detected),
        seconds(resolved),
    ), got
    for key in ("detected_after", "resolved_after"):
        if getattr(got, key) is not None:
            assert draft.evidence.get(f"timeline.{key}"), key  # each value rests on quotes


@pytest.mark.parametrize(
    ("heading", "entry"),
    [
        ("2022-06-02 10:00 - Problem starts", True),
        ("21:00 - Team alerted", True),
        ("14:05", True),
        ("Timeline (all times 10:00 onwards are UTC)", False),  # the time is not first
        ("Lessons learned", False),
    ],
)
def test_a_heading_that_opens_with_a_time_is_a_timeline_entry(heading: str, entry: bool) -> None:
    from extractors.draft.context import entry_heading

    assert entry_heading(heading) is entry


def test_an_entrys_own_sentence_names_its_event_before_the_sentences_it_heads() -> None:
    body = (
        LEAD + "<h2>Timeline</h2>"
        "<h3>2018-03-26 10:34</h3><p>Launch success drops to 0% and builds are failing.</p>"
        "<h3>10:55</h3><p>The cluster recovers on its own and builds are back to normal.</p>"
        "<h3>15:00</h3><p>The dip is noticed on a dashboard. The node appears to have recovered already.</p>"
    )
    html = f"<html lang='en'><head><title>Outage</title></head><body><article><h1>Outage</h1>{body}</article></body></html>"
    got = draft_page(
        html.encode(), url="https://e.example/own/", now="2026-01-01T00:00:00Z"
    ).draft.record.timeline
    assert (got.detected_after, got.resolved_after) == ("PT4H26M", "PT21M")


def test_a_japanese_intrusion_timeline_spanning_weeks() -> None:
    """発見 (found) is a detection, 再開する (resumed) a recovery; the last service resumed ends it."""
    body = (
        "<p>サーバーへの不正侵入がありました。経緯をご報告します。</p><h2>経緯</h2><p>時刻はすべてUTCです。</p><ul>"
        "<li>2024/5/23 11:15 確認できた中で最も古い侵入の痕跡</li>"
        "<li>2024/5/28 09:26 管理者が侵入の形跡を発見する</li>"
        "<li>2024/6/3 06:34 メーリングリストを別のホストで再開する</li>"
        "<li>2024/6/22 04:18 CVSサービスを再開する</li></ul>"
    )
    html = f"<html lang='ja'><head><title>侵入の報告</title></head><body><article><h1>侵入の報告</h1>{body}</article></body></html>"
    got = draft_page(
        html.encode(), url="https://e.example/ja/", now="2026-01-01T00:00:00Z"
    ).draft.record.timeline
    assert (seconds(got.detected_after), seconds(got.resolved_after)) == (
        seconds("P4DT22H11M"),
        seconds("P29DT17H3M"),
    )
