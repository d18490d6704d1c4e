"""Field rules that follow from language, not from one page: ruled-out components, negative
subjects that could not do something, counts with their unit, symptoms that are not causes
(pages of our own, en/ko/ja)."""

from __future__ import annotations

import pytest

from extractors import draft_page
from extractors.draft.negation import negated, ruled_out
from schema.draft import Draft


def draft(title: str, body: str) -> Draft:
    html = f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>{body}</article></body></html>"
    return draft_page(html.encode(), url="https://blog.example.com/2024/05/outage/").draft


RULED_OUT = [
    (
        "Login outage on May 2",
        "<p>On May 2 no one could log in for 30 minutes.</p><h2>Root cause</h2>"
        "<p>It was not the database: a bad deploy flushed the session cache. The database was healthy throughout.</p>",
    ),
    (
        "5월 2일 로그인 장애",
        "<p>5월 2일 30분 동안 아무도 로그인할 수 없었습니다.</p><h2>원인</h2>"
        "<p>잘못된 배포로 세션 캐시가 비워졌습니다. 데이터베이스는 정상이었습니다.</p>",
    ),
    (
        "5月2日のログイン障害",
        "<p>5月2日、30分間誰もログインできませんでした。</p><h2>原因</h2>"
        "<p>誤ったデプロイでセッションキャッシュが消去されました。データベースは正常でした。</p>",
    ),
]


@pytest.mark.parametrize(("title", "body"), RULED_OUT)
def test_a_component_the_page_rules_out_is_not_tagged(title: str, body: str) -> None:
    record = draft(title, body).record
    assert "database" not in (record.components or [])
    assert "database" not in (record.domain or [])


def test_the_component_that_failed_still_counts_beside_the_one_ruled_out() -> None:
    assert "cache" in (draft(*RULED_OUT[0]).record.components or [])


def test_ruled_out_phrases() -> None:
    text = "It was not the database that failed."
    a = text.index("database")
    assert ruled_out(text, a, a + len("database"))
    text = "The database ran out of connections."
    assert not ruled_out(text, 4, 12)
    text = "We will use IRSA instead of AWS keys."  # a plan names what it replaces
    a = text.index("AWS")
    assert not ruled_out(text, a, a + 3)


@pytest.mark.parametrize(
    ("text", "mention", "is_negated"),
    [
        ("On May 2 no one could log in for 30 minutes.", "log in", False),
        ("Nobody was able to pay for an hour.", "pay", False),
        ("No customers could reach the checkout page.", "checkout", False),
        ("No data was lost.", "data", True),
        ("The bug could have corrupted uploads.", "corrupted", True),
    ],
)
def test_a_negative_subject_that_could_not_is_an_impact(text: str, mention: str, is_negated: bool) -> None:
    a = text.index(mention)
    assert negated(text, a, a + len(mention)) is is_negated


def test_no_one_could_log_in_is_a_login_failure() -> None:
    record = draft(*RULED_OUT[0]).record
    assert "login-failure" in (record.symptoms or [])


def test_users_count_is_the_number_next_to_its_unit() -> None:
    record = draft(
        "Outage on May 2",
        "<p>On May 2 about 900 users could not log in for 30 minutes. We saw 20 distinct error types.</p>"
        "<h2>Root cause</h2><p>A bug in the new release.</p>",
    ).record
    assert record.impact.users == "about 900 users"


def test_impact_is_never_the_greeting() -> None:
    d = draft(
        "Outage on May 2",
        "<p>Hi everyone, I'm Kim from the platform team.</p>"
        "<p>On May 2 checkout failed for every customer for 40 minutes after a config change.</p>"
        "<h2>Root cause</h2><p>The config referenced a missing table.</p>",
    )
    assert "Hi everyone" not in d.record.impact.scope
    assert d.record.impact.scope.startswith("On May 2 checkout failed for every customer")


@pytest.mark.parametrize(
    ("title", "body", "cause"),
    [
        (
            "Outage on May 2",
            "<h2>Summary</h2><p>On May 2 a config change broke checkout for 40 minutes.</p><h2>Impact</h2>"
            "<p>Customers saw a blank page when they tried to pay.</p><h2>Root cause</h2>"
            "<p>The config referenced a missing table.</p>",
            "The config referenced a missing table.",
        ),
        (
            "5월 2일 결제 장애",
            "<p>5월 2일 결제 페이지에서 오류가 발생해 고객이 결제하지 못했습니다.</p><h2>원인</h2>"
            "<p>설정이 존재하지 않는 테이블을 참조하여 실패했습니다.</p>",
            "설정이 존재하지 않는 테이블을 참조하여 실패했습니다.",
        ),
        (
            "5月2日の決済障害",
            "<p>5月2日、決済ページでエラーが発生し、お客様が決済できませんでした。</p><h2>原因</h2>"
            "<p>設定が存在しないテーブルを参照したため失敗しました。</p>",
            "設定が存在しないテーブルを参照したため失敗しました。",
        ),
    ],
)
def test_symptoms_text_is_what_was_seen_not_the_cause(title: str, body: str, cause: str) -> None:
    d = draft(title, body)
    quotes = [e.quote for e in d.evidence.get("symptoms_text") or []]
    assert quotes, "a symptom is told"
    assert cause not in quotes


@pytest.mark.parametrize(
    ("title", "body"),
    [
        (
            "API errors in the EU region",
            "<p>On May 2 some users in the EU region saw errors during the outage; other regions were unaffected.</p>"
            "<h2>Impact</h2><p>Some requests to the API were unavailable for 40 minutes.</p>"
            "<h2>Root cause</h2><p>A config change to one load balancer pool.</p>",
        ),
        (
            "EU 리전 API 오류",
            "<p>5월 2일 EU 리전의 일부 사용자에게 서비스 중단이 있었습니다. 다른 리전은 영향을 받지 않았습니다.</p>"
            "<h2>영향</h2><p>일부 요청이 40분 동안 접속 불가 상태였습니다.</p><h2>원인</h2><p>로드 밸런서 설정 변경.</p>",
        ),
        (
            "EUリージョンのAPIエラー",
            "<p>5月2日、EUリージョンの一部のお客様でサービス停止が発生しました。他のリージョンは影響を受けなかった。</p>"
            "<h2>影響</h2><p>一部のリクエストが40分間利用不可となりました。</p><h2>原因</h2><p>ロードバランサーの設定変更。</p>",
        ),
    ],
)
def test_a_partial_outage_is_not_drafted_full(title: str, body: str) -> None:
    symptoms = draft(title, body).record.symptoms or []
    assert "partial-outage" in symptoms
    assert "full-outage" not in symptoms


def test_a_full_outage_stays_full_where_the_page_says_all_of_it_went() -> None:
    symptoms = (
        draft(
            "Outage on May 2",
            "<p>On May 2 the service was down for all users for 40 minutes. Some requests kept retrying afterwards.</p>"
            "<h2>Root cause</h2><p>A config change.</p>",
        ).record.symptoms
        or []
    )
    assert "full-outage" in symptoms


@pytest.mark.parametrize(
    ("title", "body", "statement"),
    [
        (
            "Memory leak in the API gateway",
            "<p>On May 2 the gateway slowed down and most requests timed out.</p>"
            "<h2>Analysis</h2><p>We took a heap dump first. We looked at the pool class next.</p>"
            "<h2>Debugging</h2><p>At 10:00 we began investigating the root cause. A header that changed on every "
            "request was the cause of the leak: no pool was ever reused.</p>",
            "A header that changed on every request was the cause of the leak: no pool was ever reused.",
        ),
        (
            "API 게이트웨이 메모리 누수",
            "<p>5월 2일 게이트웨이가 느려지고 대부분의 요청이 타임아웃되었습니다.</p>"
            "<h2>분석</h2><p>먼저 힙 덤프를 확인했습니다. 다음으로 풀 클래스를 살펴보았습니다.</p>"
            "<h2>디버깅</h2><p>요청마다 바뀌는 헤더 때문에 풀을 재사용하지 못한 것이 메모리 누수의 원인이었습니다.</p>",
            "요청마다 바뀌는 헤더 때문에 풀을 재사용하지 못한 것이 메모리 누수의 원인이었습니다.",
        ),
        (
            "APIゲートウェイのメモリリーク",
            "<p>5月2日、ゲートウェイが遅くなり、ほとんどのリクエストがタイムアウトしました。</p>"
            "<h2>分析</h2><p>まずヒープダンプを確認しました。次にプールのクラスを調べました。</p>"
            "<h2>デバッグ</h2><p>リクエストごとに変わるヘッダーによりプールが再利用されなかったことがメモリリークの原因でした。</p>",
            "リクエストごとに変わるヘッダーによりプールが再利用されなかったことがメモリリークの原因でした。",
        ),
    ],
)
def test_root_cause_evidence_takes_the_sentence_that_states_the_cause(
    title: str, body: str, statement: str
) -> None:
    quotes = [e.quote for e in draft(title, body).evidence.get("root_cause") or []]
    assert statement in quotes
    assert not any("began investigating the root cause" in q for q in quotes)


@pytest.mark.parametrize(
    ("title", "body", "counterfactual", "real"),
    [
        (
            "Upload errors on May 2",
            "<p>The bug could have corrupted uploads for all users if it had run longer.</p>"
            "<p>For 20 minutes, uploads failed for about 300 users.</p>"
            "<p>We apologize to everyone affected by this outage.</p>",
            "The bug could have corrupted uploads for all users if it had run longer.",
            "For 20 minutes, uploads failed for about 300 users.",
        ),
        (
            "5월 2일 업로드 오류",
            "<p>버그가 더 오래 실행되었다면 모든 사용자의 업로드가 손상될 수도 있었습니다.</p>"
            "<p>20분 동안 약 300명의 사용자가 업로드할 수 없었습니다.</p>"
            "<p>불편을 드려 모든 사용자분들께 사과드립니다.</p>",
            "버그가 더 오래 실행되었다면 모든 사용자의 업로드가 손상될 수도 있었습니다.",
            "20분 동안 약 300명의 사용자가 업로드할 수 없었습니다.",
        ),
        (
            "5月2日のアップロードエラー",
            "<p>バグがもっと長く動いていれば、すべてのユーザーのアップロードが壊れる恐れがあった。</p>"
            "<p>20分間、約300人のユーザーがアップロードできなくなりました。</p>"
            "<p>すべての利用者の皆様にご迷惑をおかけしたことをお詫び申し上げます。</p>",
            "バグがもっと長く動いていれば、すべてのユーザーのアップロードが壊れる恐れがあった。",
            "20分間、約300人のユーザーがアップロードできなくなりました。",
        ),
    ],
)
def test_impact_is_what_happened_not_what_could_have_or_an_apology(
    title: str, body: str, counterfactual: str, real: str
) -> None:
    d = draft(title, body)
    quotes = [e.quote for e in d.evidence.get("impact") or []]
    assert real in quotes
    assert counterfactual not in quotes
    assert not any("apologize" in q or "사과드립니다" in q or "お詫び" in q for q in quotes)


def test_impact_evidence_holds_every_sentence_that_told_it() -> None:
    long_first = (
        "Between 21:27 UTC on July 30 and 07:27 UTC on July 31 the website, the package API and the diff "
        "service were running with expired certificates and could not be reached over secure connections "
        "by any client, browser or build tool that checks certificates."
    )
    d = draft(
        "Expired certificates",
        f"<p>{long_first}</p><p>All of the API features, publishing and searching packages, were affected.</p>"
        "<h2>Root cause</h2><p>The renewal job had been removed.</p>",
    )
    quotes = [e.quote for e in d.evidence.get("impact") or []]
    assert long_first in quotes
    assert "All of the API features, publishing and searching packages, were affected." in quotes


@pytest.mark.parametrize(
    ("title", "body", "first_report"),
    [
        (
            "App crash after v2.0",
            "<p>Version 2.0 crashed on start for many users. We noticed the reports quickly, and our alerts fired later.</p>"
            "<h2>Timeline</h2><ul><li>14:05 - v2.0 released</li>"
            "<li>14:20 - A user opened issue #12: the app does not start</li>"
            "<li>15:10 - v2.0.1 released with the fix</li></ul>",
            "14:20 - A user opened issue #12: the app does not start",
        ),
        (
            "v2.0 배포 후 앱 실행 불가",
            "<p>2.0 버전이 많은 사용자에게서 실행 직후 종료되었습니다. 제보를 받고 빠르게 인지했습니다.</p>"
            "<h2>타임라인</h2><ul><li>14:05 - v2.0 배포</li><li>14:20 - 사용자 제보 접수: 앱이 실행되지 않음</li>"
            "<li>15:10 - 수정된 v2.0.1 배포</li></ul>",
            "14:20 - 사용자 제보 접수: 앱이 실행되지 않음",
        ),
        (
            "v2.0リリース後の起動不能",
            "<p>バージョン2.0が多くの利用者の端末で起動直後に終了しました。問い合わせで気付きました。</p>"
            "<h2>タイムライン</h2><ul><li>14:05 - v2.0リリース</li><li>14:20 - GitHub Issue #12 「起動しない」投稿</li>"
            "<li>15:10 - 修正版v2.0.1リリース</li></ul>",
            "14:20 - GitHub Issue #12 「起動しない」投稿",
        ),
    ],
)
def test_detection_is_the_first_report_of_the_timeline(title: str, body: str, first_report: str) -> None:
    quotes = [e.quote for e in draft(title, body).evidence.get("detection") or []]
    assert quotes and quotes[0] == first_report


def test_the_trigger_is_the_change_and_never_the_fix() -> None:
    d = draft(
        "Checkout outage on May 2",
        "<p>On May 2 checkout failed for every customer for 40 minutes after a config change.</p>"
        "<p>We reverted the config change at 14:38 and checkout recovered.</p>"
        "<h2>Root cause</h2><p>The new config referenced a table that did not exist yet.</p>",
    )
    quotes = [e.quote for e in d.evidence.get("trigger") or []]
    assert "On May 2 checkout failed for every customer for 40 minutes after a config change." in quotes
    assert not any("reverted" in q for q in quotes)


@pytest.mark.parametrize(
    "opening",
    [
        "Contents: Background, What happened, Root cause, Timeline, Lessons learned and next steps for the team",
        "This post was written by Jane Doe, a site reliability engineer on the payments platform team.",
    ],
)
def test_the_summary_is_never_a_table_of_contents_or_a_byline(opening: str) -> None:
    d = draft(
        "Outage on May 2",
        f"<p>{opening}</p><p>On May 2 checkout failed for every customer for 40 minutes after a config change.</p>"
        "<h2>Root cause</h2><p>The config referenced a missing table.</p>",
    )
    summary = d.record.summary["en"]
    assert opening not in summary
    assert summary.startswith("On May 2 checkout failed")


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("On May 2 about 900 users could not log in.", "about 900 users"),
        (
            "에러 타입 약 20개가 1000회 넘게 찍혔고, 10번이 넘는 에러를 겪은 사용자가 900명이 넘었습니다.",
            "900명",
        ),
        ("約300人のユーザーがログインできませんでした。", "約300人"),
        ("For 13 minutes on 2023-07-20, our users saw errors.", None),  # a date is no count
        ("3. 요청 처리 방식을 바꿨습니다.", None),  # a list number is no count
        ("2023년 5월 4에 명령을 실행했습니다.", None),  # a counter follows its number directly
    ],
)
def test_users_are_counted_with_their_unit(text: str, count: str | None) -> None:
    from extractors.draft.impact import _count

    m = _count(text)
    assert (m.group(0).strip() if m else None) == count


@pytest.mark.parametrize(
    ("title", "body"),
    [
        (
            "API障害",
            "<p>5月2日、APIが20分間停止しました。データの損失はありませんでした。データ消失も発生しておりません。</p>"
            "<h2>原因</h2><p>ソフトウェアのバグでワーカーが停止しました。</p>",
        ),
        (
            "API 장애",
            "<p>5월 2일 API가 20분 동안 중단되었습니다. 데이터 손실 없이 복구되었습니다.</p>"
            "<h2>원인</h2><p>소프트웨어 버그로 워커가 종료되었습니다.</p>",
        ),
        (
            "API outage",
            "<p>On May 2 the API was down for 20 minutes. No data was lost. If the bug had run longer it would "
            "have corrupted data.</p><h2>Root cause</h2><p>A software bug crashed the workers.</p>",
        ),
    ],
)
def test_denied_and_counterfactual_losses_are_no_symptom(title: str, body: str) -> None:
    symptoms = draft(title, body).record.symptoms or []
    assert "data-loss" not in symptoms and "data-corruption" not in symptoms


@pytest.mark.parametrize(
    ("title", "body"),
    [
        ("ログイン障害", "<p>5月2日、30分間ログインできませんでした。</p><h2>原因</h2><p>設定ミス。</p>"),
        ("로그인 장애", "<p>5월 2일 30분 동안 로그인할 수 없었습니다.</p><h2>원인</h2><p>설정 오류.</p>"),
    ],
)
def test_could_not_is_a_symptom_not_a_denial(title: str, body: str) -> None:
    assert "login-failure" in (draft(title, body).record.symptoms or [])


def test_taken_down_is_no_outage_but_was_down_is() -> None:
    taken = draft(
        "Phishing campaign against our users",
        "<p>A phishing site imitated our login page and 4 user accounts were phished.</p>"
        "<p>The phishing domain has been taken down. We narrowed down the senders.</p>"
        "<h2>Root cause</h2><p>Attackers registered a look-alike domain.</p>",
    ).record
    assert "full-outage" not in (taken.symptoms or [])
    down = draft(
        "Outage on May 2",
        "<p>On May 2 the website was down for two hours.</p><h2>Root cause</h2><p>A disk filled up.</p>",
    ).record
    assert "full-outage" in (down.symptoms or [])


@pytest.mark.parametrize(
    ("title", "body"),
    [
        (
            "Account takeover of 12 users",
            "<p>On May 2 attackers used leaked passwords to log in to 12 accounts that had no two-factor "
            "authentication.</p><h2>Root cause</h2><p>Credential stuffing with passwords reused from another breach; "
            "our login did not rate-limit failed attempts.</p>",
        ),
        (
            "12개 계정 탈취",
            "<p>5월 2일 공격자가 유출된 비밀번호로 2단계 인증이 없는 계정 12개에 로그인했습니다.</p>"
            "<h2>원인</h2><p>다른 서비스에서 유출된 비밀번호를 이용한 공격이었고, 로그인 실패 횟수를 제한하지 않았습니다.</p>",
        ),
        (
            "12アカウントの乗っ取り",
            "<p>5月2日、攻撃者が流出したパスワードで二要素認証のない12のアカウントにログインしました。</p>"
            "<h2>原因</h2><p>他サービスから流出したパスワードによる攻撃で、ログイン失敗の回数を制限していませんでした。</p>",
        ),
    ],
)
def test_an_account_takeover_names_identity_and_auth(title: str, body: str) -> None:
    assert "identity-auth" in (draft(title, body).record.components or [])


@pytest.mark.parametrize(
    ("title", "body", "component"),
    [
        (
            "Slow static pages",
            "<p>On May 2 static pages took tens of seconds to load.</p><h2>Root cause</h2>"
            "<p>The HAProxy host in front of the web servers ran out of TCP memory.</p>",
            "load-balancer",
        ),
        (
            "静的コンテンツの遅延",
            "<p>5月2日、静的コンテンツの配信が数十秒遅延しました。</p><h2>原因</h2>"
            "<p>Web サーバーの前段の haproxy ホストで TCP のメモリが不足していました。</p>",
            "load-balancer",
        ),
        (
            "Leaked deploy key",
            "<p>On May 2 a deploy key leaked through the logs of our CircleCI builds.</p><h2>Root cause</h2>"
            "<p>A CI job printed its environment, including the key.</p>",
            "ci-cd",
        ),
    ],
)
def test_products_named_by_their_kind(title: str, body: str, component: str) -> None:
    assert component in (draft(title, body).record.components or [])


@pytest.mark.parametrize(
    ("url", "head", "body", "slug"),
    [
        # The page names a publisher the domain does not spell: the slug is the publisher's.
        (
            "https://blog.jupyter.example/2024/05/outage/",
            '<meta property="og:site_name" content="Binder">',
            "",
            "binder",
        ),
        (
            "https://sre.example.net/outage",
            "",
            "<p>The Widget SRE team fixed it within the hour.</p><p>The Widget team thanks everyone.</p>",
            "widget",
        ),
        # The domain spells the publisher's name, whole or cut short: the domain's slug stays.
        (
            "https://blog.pypi.example/posts/outage/",
            '<meta property="og:site_name" content="Python Package Index">',
            "",
            "pypi",
        ),
        (
            "https://engineering.example-corp.io/posts/outage",
            '<meta property="og:site_name" content="Example Corp Engineering Blog">',
            "",
            "example-corp",
        ),
        # A blog on a shared host is the subdomain's, not the post path's.
        ("https://acme-eng.medium.com/outage-123", "", "", "acme-eng"),
    ],
)
def test_org_slug_is_the_publishers(url: str, head: str, body: str, slug: str) -> None:
    html = (
        f"<html><head><title>Outage on May 2</title>{head}</head><body><article><h1>Outage on May 2</h1>"
        "<p>On May 2 builds failed for every user for two hours after a config change.</p>"
        f"{body}<h2>Root cause</h2><p>A bad config.</p></article></body></html>"
    )
    assert draft_page(html.encode(), url=url).draft.record.org_slug == slug


def test_a_verb_that_spells_a_component_is_not_the_component() -> None:
    acted = draft(
        "Origin overload on May 2",
        "<p>On May 2 the origin was overloaded and pages failed for an hour.</p><h2>Root cause</h2>"
        "<p>We switched traffic to the backup origin and switched the rules back, then we switched again.</p>",
    ).record
    assert "network-fabric" not in (acted.components or [])
    thing = draft(
        "Network outage on May 2",
        "<p>On May 2 the office network failed for an hour.</p><h2>Root cause</h2>"
        "<p>The core switch failed and the backup switch did not take over.</p>",
    ).record
    assert "network-fabric" in (thing.components or [])


def test_a_step_of_the_resolution_is_never_the_trigger() -> None:
    d = draft(
        "Pods evicted on May 2",
        "<p>On May 2 user workloads were evicted and services were unavailable for two hours.</p>"
        "<h2>Resolution</h2><p>A new node group with 20 nodes was deployed manually to spread the workloads.</p>",
    )
    quotes = [e.quote for e in d.evidence.get("trigger") or []]
    assert not any("node group" in q for q in quotes)


@pytest.mark.parametrize(
    ("title", "body", "stated", "guessed"),
    [
        (
            "Regression in release 2.1.1",
            "<p>Release 2.1.1 changed the return type of a common method and broke several libraries.</p>"
            "<p>At first we thought the problem happened because of the new compiler.</p>"
            "<p>The regression happened because one commit was left out of the backport.</p>",
            "The regression happened because one commit was left out of the backport.",
            "At first we thought the problem happened because of the new compiler.",
        ),
        (
            "2.1.1 릴리스의 회귀",
            "<p>2.1.1 릴리스에서 자주 쓰이는 메소드의 반환형이 바뀌어 여러 라이브러리가 깨졌습니다.</p>"
            "<p>처음에는 새 컴파일러가 달라져서 생겼을 것이라 생각했습니다.</p>"
            "<p>이 사고는 한 커밋의 백포트를 빼먹어서 생겼습니다.</p>",
            "이 사고는 한 커밋의 백포트를 빼먹어서 생겼습니다.",
            "처음에는 새 컴파일러가 달라져서 생겼을 것이라 생각했습니다.",
        ),
    ],
)
def test_a_stated_cause_is_evidence_a_guess_is_not(title: str, body: str, stated: str, guessed: str) -> None:
    quotes = [e.quote for e in draft(title, body).evidence.get("root_cause") or []]
    assert stated in quotes
    assert guessed not in quotes


def test_a_cdn_cache_is_the_cdn_not_the_cache_component() -> None:
    cdn = draft(
        "404s served from the edge",
        "<p>On May 2 the site returned 404 pages for two hours.</p><h2>Root cause</h2>"
        "<p>The Cloudflare cache stored the 404 responses. The CDN cache kept them for four hours. "
        "Purging the Cloudflare cache every five minutes did not help, the CDN cache filled again.</p>",
    ).record
    assert "cache" not in (cdn.components or [])
    assert "cdn" in (cdn.components or [])
    app = draft(
        "Session errors on May 2",
        "<p>On May 2 logins failed for an hour.</p><h2>Root cause</h2>"
        "<p>The Redis cache that holds sessions ran out of memory and evicted every session.</p>",
    ).record
    assert "cache" in (app.components or [])


def test_an_apology_tells_no_symptom() -> None:
    record = draft(
        "Expired certificates on May 2",
        "<p>On May 2 the website and the API ran with expired certificates and could not be reached over TLS; "
        "the package mirror and the documentation site were unaffected.</p>"
        "<p>Such outages are unacceptable and we apologize to everyone affected by the outage.</p>"
        "<h2>Root cause</h2><p>The renewal job had been removed.</p>",
    ).record
    assert "full-outage" not in (record.symptoms or [])
