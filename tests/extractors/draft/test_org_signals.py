"""Organisation from every signal a page gives: site name, JSON-LD publisher, copyright line, team lines, domain."""

from __future__ import annotations

import pytest
from lxml import html

from extractors import draft_page
from extractors.metadata import copyright_holder

BODY = (
    "<p>On May 2 the API returned errors for 40 minutes. {team} rolled back the deploy and service was "
    "restored. We are sorry for the trouble this caused our customers.</p>"
)


def page(head: str = "", body: str = BODY.format(team="The on-call engineer"), foot: str = "") -> bytes:
    return (
        f"<html><head><title>API outage on May 2</title>{head}</head><body><header><a href='/login'>Log in</a>"
        f"</header><article><h1>API outage on May 2</h1>{body}</article><footer>{foot}</footer></body></html>"
    ).encode()


def org_of(data: bytes, url: str) -> tuple[str | None, str | None]:
    record = draft_page(data, url=url, now="2026-01-01T00:00:00Z").draft.record
    return record.org, record.org_slug


@pytest.mark.parametrize(
    ("footer", "holder"),
    [
        ("© 2024 Lumenworks, Inc. All rights reserved.", "Lumenworks"),
        ("Copyright (c) 2019-2024 The Binder Team. Built with Sphinx", "The Binder Team"),
        ("© 2024 한빛로. All rights reserved.", "한빛로"),
        ("Copyright © 2023 株式会社ことのは", "株式会社ことのは"),
        ("© 2024 example.com", None),
        ("Built with love", None),
    ],
)
def test_copyright_holder(footer: str, holder: str | None) -> None:
    tree = html.fromstring(f"<html><body><p>x</p><footer>{footer}</footer></body></html>")
    assert copyright_holder(tree) == holder


def test_a_host_name_as_site_name_yields_to_the_team_the_page_names() -> None:
    head = '<meta property="og:site_name" content="github.com">'
    data = page(head, BODY.format(team="The Quillmark SRE team"))
    url = "https://github.com/quillmark-ops/postmortems/blob/main/2024-05-02.md"
    assert org_of(data, url) == ("Quillmark", "quillmark-ops")


def test_json_ld_publisher_beats_a_host_name() -> None:
    ld = '{"@context": "https://schema.org", "@type": "BlogPosting", "publisher": {"@type": "Organization", "name": "Acme Cloud"}}'
    head = f'<meta property="og:site_name" content="blog.acme.example"><script type="application/ld+json">{ld}</script>'
    assert org_of(page(head), "https://blog.acme.example/2024/05/02/outage/")[0] == "Acme Cloud"


def test_copyright_line_when_the_page_has_no_site_name() -> None:
    data = page(foot="© 2024 Quillmark Labs, Inc. All rights reserved.")
    assert org_of(data, "https://docs.quillmark.example/outage/") == ("Quillmark Labs", "quillmark")


@pytest.mark.parametrize(
    ("sentence", "org"),
    [
        ("한빛로 SRE팀이 배포를 되돌렸고", "한빛로"),
        ("コトノハSREチームが切り戻しを行い", "コトノハ"),
    ],
)
def test_team_lines_in_korean_and_japanese(sentence: str, org: str) -> None:
    body = f"<p>5월 2일 API 장애가 40분 동안 발생했습니다. 5月2日に障害が発生しました。 {sentence} 서비스가 복구되었습니다.</p>"
    assert org_of(page(body=body), "https://203.0.113.9/post/")[0] == org


def test_the_domain_when_nothing_else_names_the_publisher() -> None:
    assert org_of(page(), "https://engineering.quillmark.example/outage/")[1] == "quillmark"


@pytest.mark.parametrize(
    "byline",
    [
        "2024년 3월 5일 · 김철수",
        "2024年3月5日 山田",
        "2024.03.05",
        "Posted on March 5, 2024 by Priya",
        "5 March 2024",
    ],
)
def test_the_byline_date_is_the_publication_date_in_three_languages(byline: str) -> None:
    body = (
        f"<p>{byline}</p><p>On the previous day the API returned errors for 40 minutes after a bad deploy; "
        "most requests failed.</p><h2>Root cause</h2><p>A config change.</p>"
    )
    record = draft_page(page(body=body), url="https://e.example/p/", now="2026-01-01T00:00:00Z").draft.record
    assert (record.date, record.date_kind) == ("2024-03-05", "published")
