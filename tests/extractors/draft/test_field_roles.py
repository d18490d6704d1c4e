"""Where a field's sentences come from: labels that stand in for headings, and the problems list
(pages of our own, en/ko/ja)."""

from __future__ import annotations

import pytest

from extractors import draft_page
from extractors.draft.context import Context, label_role


def page(title: str, body: str) -> bytes:
    return f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>{body}</article></body></html>".encode()


def quotes(data: bytes, field: str) -> list[str]:
    draft = draft_page(data, url="https://e.example/p/").draft
    return [e.quote for e in draft.evidence.get(field) or []]


def test_label_roles() -> None:
    assert label_role("Impact: Users saw errors.") == ("impact", len("Impact:"), False)
    assert label_role("Resolution:") == ("remediation", len("Resolution:"), True)
    assert label_role("**Root cause:** a bug") is not None
    assert label_role("원인: 설정 오류")[0] == "root_cause"  # type: ignore[index]
    assert label_role("対応：再起動しました")[0] == "remediation"  # type: ignore[index]
    assert label_role("Context:") == ("other", len("Context:"), True)
    # A timeline entry, and a sentence with a keyword before a colon, are no labels.
    assert label_role("2023-08-04 09:14: Users reported errors") is None
    assert label_role("過去の障害対応中に遭遇した TCP: out of memory")[0] == "other"  # type: ignore[index]


LABELLED = page(
    "Lost logs on the platform",
    "<p>On 4 August the logging pipeline dropped application logs for two days.</p>"
    "<ul><li>Impact: Application teams could not see their logs in the dashboard for 33 hours.</li>"
    "<li>Context:</li><li>2023-08-04 09:14: Users reported missing logs.</li>"
    "<li>2023-08-04 10:09: Incident declared.</li>"
    "<li>Resolution:</li><li>The team raised the collector's memory buffer and redeployed it.</li>"
    "<li>Review actions:</li><li>Add an integration test that checks logs reach the cluster.</li>"
    "<li>Alert when the collector drops chunks.</li></ul>",
)


def test_a_label_gives_its_role_to_its_block_and_to_the_list_it_heads() -> None:
    assert "Application teams could not see their logs in the dashboard for 33 hours." in quotes(
        LABELLED, "impact"
    )
    remediation = quotes(LABELLED, "remediation")
    assert "The team raised the collector's memory buffer and redeployed it." in remediation
    actions = quotes(LABELLED, "action_items")
    assert "Add an integration test that checks logs reach the cluster." in actions
    assert "Alert when the collector drops chunks." in actions
    assert not any(q.endswith(":") for q in remediation + actions)  # a label alone is no content


def test_a_label_ends_at_the_paragraph_after_its_list() -> None:
    data = page(
        "Outage",
        "<p>Checkout failed for an hour on May 2.</p><ul><li>Resolution:</li><li>We rolled back the release.</li></ul>"
        "<p>We are sorry for the trouble this caused our customers.</p>",
    )
    doc = draft_page(data, url="https://e.example/p/").document
    roles = {s.text: s.role for s in Context(doc).sentences}
    assert roles["We rolled back the release."] == "remediation"
    assert roles["We are sorry for the trouble this caused our customers."] != "remediation"


@pytest.mark.parametrize(
    ("heading", "problem"),
    [
        ("What went wrong", "The pager rotation had no one assigned for the weekend."),
        ("Problems we ran into", "The pager rotation had no one assigned for the weekend."),
        ("うまくいかなかったこと", "週末のオンコール担当者が割り当てられていませんでした。"),
        ("아쉬운 점", "주말 온콜 담당자가 지정되어 있지 않았습니다."),
    ],
)
def test_the_problems_list_is_no_remediation_and_counts_as_contributing(heading: str, problem: str) -> None:
    data = page(
        "Checkout outage",
        "<p>Checkout failed for every customer for an hour on May 2.</p><h2>Root cause</h2>"
        "<p>A bad config was deployed.</p>"
        f"<h2>{heading}</h2><ul><li>{problem}</li></ul>"
        "<h2>Lessons learned</h2><p>Config changes need a canary stage before they reach production.</p>",
    )
    assert problem not in quotes(data, "remediation")
    doc = draft_page(data, url="https://e.example/p/").document
    assert {s.role for s in Context(doc).sentences if s.text == problem} == {"contributing"}
    # The lessons keep the page's own lessons first (the problems list may follow them).
    assert any("canary" in q for q in quotes(data, "lessons"))


# Contributing factors are lacks: a mention counts more in a sentence that states one.
LACK_CASES = [
    (
        "Checkout errors on May 2",
        "<p>On May 2 checkout failed for every customer for two hours after a config change.</p>"
        "<p>There was no alerting on the checkout error rate, so customers told us first.</p>"
        "<p>Our monitoring did not cover the payment callback at all.</p>",
        "<p>On May 2 checkout failed for every customer for two hours after a config change.</p>"
        "<p>Alerting on the checkout error rate paged the on-call engineer within a minute.</p>"
        "<p>Our monitoring showed the payment callback failing.</p>",
    ),
    (
        "5월 2일 결제 장애",
        "<p>5월 2일 설정 변경 후 두 시간 동안 모든 고객의 결제가 실패했습니다.</p>"
        "<p>결제 오류율에 대한 모니터링이 없어 고객 문의로 처음 알게 되었습니다.</p>"
        "<p>결제 콜백에는 알림이 설정되어 있지 않았습니다.</p>",
        "<p>5월 2일 설정 변경 후 두 시간 동안 모든 고객의 결제가 실패했습니다.</p>"
        "<p>결제 오류율 모니터링으로 1분 만에 담당자가 호출되었습니다.</p>"
        "<p>결제 콜백의 알림이 바로 울렸습니다.</p>",
    ),
    (
        "5月2日の決済障害",
        "<p>5月2日、設定変更の後、2時間にわたり全てのお客様の決済が失敗しました。</p>"
        "<p>決済エラー率の監視がなく、お客様からの問い合わせで初めて気付きました。</p>"
        "<p>決済コールバックにはアラートが設定されていなかった。</p>",
        "<p>5月2日、設定変更の後、2時間にわたり全てのお客様の決済が失敗しました。</p>"
        "<p>決済エラー率の監視により1分で担当者に通知されました。</p>"
        "<p>決済コールバックのアラートがすぐに鳴りました。</p>",
    ),
]


@pytest.mark.parametrize(("title", "lacking", "working"), LACK_CASES)
def test_a_contributing_factor_is_stated_as_a_lack(title: str, lacking: str, working: str) -> None:
    def contributing(body: str) -> list[str]:
        record = draft_page(page(title, body), url="https://e.example/p/").draft.record
        return list(record.contributing or [])

    assert "monitoring-gap" in contributing(lacking)
    assert "monitoring-gap" not in contributing(working)


@pytest.mark.parametrize(
    ("heading", "role"),
    [
        # Korean and Japanese put the head noun last: the phrase that ends the heading names it.
        ("대응 과정의 문제점", "contributing"),
        ("잘 대응한 점", "lessons"),
        ("正しく対応できたこと", "lessons"),
        ("対応できなかったこと", "contributing"),
        ("当時の対応について", "remediation"),
        ("장애 원인 분석", "root_cause"),
        ("Things we did well", "lessons"),
        ("What went wrong during the response", "contributing"),
    ],
)
def test_went_well_and_problems_headings(heading: str, role: str) -> None:
    from schema.headings import heading_role

    assert heading_role(heading) == role


RETRO = [
    (
        "Checkout outage",
        "<p>Checkout failed for every customer for an hour on May 2.</p><h2>Recovery</h2>"
        "<p>We shipped a hotfix that skips the broken migration.</p><h2>Our response</h2>"
        "<h3>What went well</h3><ul><li>The on-call engineer started within minutes.</li></ul>"
        "<h3>What went wrong</h3><ul><li>The release went to every user at once.</li></ul>",
        "We shipped a hotfix that skips the broken migration.",
        "The on-call engineer started within minutes.",
        "The release went to every user at once.",
    ),
    (
        "決済の障害",
        "<p>5月2日、1時間にわたり全てのお客様の決済が失敗しました。</p><h2>復旧方法</h2>"
        "<p>壊れたマイグレーションを飛ばすHotfixをリリースしました。</p><h2>当時の対応について</h2>"
        "<h3>正しく対応できたこと</h3><ul><li>担当者が数分で対応を開始できた</li></ul>"
        "<h3>課題</h3><ul><li>全ての利用者に一度にリリースした</li></ul>",
        "壊れたマイグレーションを飛ばすHotfixをリリースしました。",
        "担当者が数分で対応を開始できた",
        "全ての利用者に一度にリリースした",
    ),
]


@pytest.mark.parametrize(("title", "body", "fix", "went_well", "problem"), RETRO)
def test_remediation_is_the_fix_and_lessons_are_the_retrospective(
    title: str, body: str, fix: str, went_well: str, problem: str
) -> None:
    data = page(title, body)
    remediation = quotes(data, "remediation")
    assert fix in remediation
    assert went_well not in remediation and problem not in remediation
    lessons = quotes(data, "lessons")
    assert went_well in lessons and problem in lessons


NEUTRAL_MONITORING = [
    (
        "Cache latency on May 2",
        "<p>On May 2 cache reads slowed down for an hour.</p>"
        "<p>We run Prometheus for monitoring every cache node.</p>"
        "<p>The monitoring dashboards showed the read latency rising at 10:02.</p>"
        "<p>Monitoring also showed the eviction rate climbing.</p>"
        "<p>We kept monitoring the cluster after the fix.</p>",
    ),
    (
        "5월 2일 캐시 지연",
        "<p>5월 2일 한 시간 동안 캐시 읽기가 느려졌습니다.</p>"
        "<p>모든 캐시 노드는 Prometheus로 모니터링하고 있습니다.</p>"
        "<p>모니터링 대시보드에서 10시 2분부터 지연이 늘어나는 것을 확인했습니다.</p>"
        "<p>모니터링 지표에서 eviction 비율도 올라갔습니다.</p>"
        "<p>수정 후에도 클러스터를 계속 모니터링했습니다.</p>",
    ),
    (
        "5月2日のキャッシュ遅延",
        "<p>5月2日、1時間にわたりキャッシュの読み込みが遅くなりました。</p>"
        "<p>すべてのキャッシュノードを Prometheus で監視しています。</p>"
        "<p>監視ダッシュボードで10時2分から遅延の増加を確認しました。</p>"
        "<p>監視の指標ではエビクション率も上がっていました。</p>"
        "<p>修正後もクラスタの監視を続けました。</p>",
    ),
]


@pytest.mark.parametrize(("title", "body"), NEUTRAL_MONITORING)
def test_monitoring_that_worked_is_no_monitoring_gap(title: str, body: str) -> None:
    record = draft_page(page(title, body), url="https://e.example/p/").draft.record
    assert "monitoring-gap" not in (record.contributing or [])
