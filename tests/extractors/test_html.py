"""HTML pages with blog clutter in three languages and four legacy encodings."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from extractors import extract_document
from schema.document import Document

CLUTTER = [
    "cookie",
    "Share on",
    "Subscribe",
    "Newsletter",
    "Comments are closed",
    "Thanks for the detailed write-up",
    "All rights reserved",
    "Related posts",
    "Scaling our build farm",
    "쿠키",
    "공유하기",
    "인기 글",
    "좋은 글 감사합니다",
    "クッキー",
    "ツイート",
    "関連記事",
    "採用情報",
]


def check_offsets(doc: Document) -> None:
    """Every block is a trimmed slice of text, in order, apart; sections start at their heading."""
    last = 0
    for block in doc.blocks:
        piece = doc.text[block.start : block.end]
        assert piece and piece == piece.strip("\n ") and block.start >= last
        last = block.end
    starts = {b.start for b in doc.blocks if b.kind == "heading"}
    for section in doc.sections:
        assert section.start in starts and section.end <= len(doc.text)
        assert doc.text[section.start :].startswith(section.heading)
        assert section.path[-1] == section.heading


def test_english_blog_post(page: Callable[[str], bytes]) -> None:
    doc = extract_document(page("en-blog-outage.html"), url="https://eng.northwind.example/p/1")
    check_offsets(doc)
    assert doc.extractor.name == "trafilatura"
    assert doc.title == "Postmortem: API outage of 14 March 2024"
    assert doc.site_name == "Northwind Engineering"
    assert doc.author == "Dana Whitfield"
    assert (doc.published, doc.updated) == ("2024-03-18", "2024-03-20")
    assert doc.canonical_url == "https://eng.northwind.example/2024/03/api-outage-postmortem/"
    assert doc.license == "https://creativecommons.org/licenses/by/4.0/"
    assert doc.language == "en"
    for junk in CLUTTER:
        assert junk not in doc.text, junk
    assert doc.text.startswith("On Thursday, 14 March 2024")  # title and byline are not article text
    assert [(s.heading, s.role) for s in doc.sections] == [
        ("Summary", "summary"),
        ("Impact", "impact"),
        ("Timeline", "timeline"),
        ("Root cause analysis", "root_cause"),
        ("Why the tests did not catch it", "other"),
        ("Detection", "detection"),
        ("Resolution", "remediation"),
        ("Action items", "action_items"),
        ("Lessons learned", "lessons"),
    ]
    nested = doc.sections[4]
    assert nested.path == ["Root cause analysis", "Why the tests did not catch it"] and nested.level == 3
    root = doc.sections[3]
    assert root.start < nested.start < nested.end <= root.end  # the h3 sits inside its h2
    rows = [doc.block_text(b) for b in doc.blocks if b.kind == "table_row"]
    assert rows == [
        "Service | Error rate | Duration",
        "Public API | 71% | 47 minutes",
        "Webhooks | 12% | 30 minutes",
    ]
    items = [doc.block_text(b) for b in doc.blocks if b.kind == "list_item"]
    assert "08:12 Error rates rise above 5% and the on-call engineer is paged." in items
    assert len(items) == 8
    code = [doc.block_text(b) for b in doc.blocks if b.kind == "code"]
    assert len(code) == 1 and code[0].startswith("[gateway]\nupstream_max_conns = 512")
    assert "setting upstream_max_conns. A refactoring" in doc.text  # inline code stays inline


@pytest.mark.parametrize("name", ["ko-blog-outage.html", "ko-blog-outage.euckr.html"])
def test_korean_blog_post(page: Callable[[str], bytes], name: str) -> None:
    doc = extract_document(page(name))
    check_offsets(doc)
    assert doc.language == "ko"  # although <html lang="en">: the template's default
    assert (doc.title, doc.author, doc.site_name, doc.published) == (
        "결제 서버 장애 회고",
        "김지훈",
        "한빛 기술 블로그",
        "2023-11-02",
    )
    for junk in CLUTTER:
        assert junk not in doc.text, junk
    assert [s.role for s in doc.sections] == [
        "summary",
        "impact",
        "timeline",
        "root_cause",
        "remediation",
        "action_items",
    ]
    assert "redisTemplate.opsForValue().set(key, value)" in doc.text


def test_korean_encodings_give_the_same_document(page: Callable[[str], bytes]) -> None:
    utf8 = extract_document(page("ko-blog-outage.html"))
    legacy = extract_document(page("ko-blog-outage.euckr.html"))
    assert legacy.encoding == "cp949" and legacy.text == utf8.text and legacy.blocks == utf8.blocks


@pytest.mark.parametrize(
    ("name", "encoding"),
    [
        ("ja-blog-outage.html", "utf-8"),
        ("ja-blog-outage.sjis.html", "cp932"),
        ("ja-blog-outage.eucjp.html", "euc_jp"),
        ("ja-blog-outage.iso2022jp.html", "iso2022_jp"),
    ],
)
def test_japanese_blog_post_in_every_encoding(page: Callable[[str], bytes], name: str, encoding: str) -> None:
    doc = extract_document(page(name))
    check_offsets(doc)
    reference = extract_document(page("ja-blog-outage.html"))
    assert doc.encoding == encoding and doc.language == "ja"
    assert doc.text == reference.text and not doc.warnings
    assert doc.title == "画像配信サーバの障害報告" and doc.author == "山田 太郎"
    for junk in CLUTTER:
        assert junk not in doc.text, junk
    assert [(s.heading, s.role) for s in doc.sections] == [
        ("■ 障害概要", "summary"),
        ("(1) 影響範囲", "impact"),
        ("時系列", "timeline"),
        ("第4章 発生原因", "root_cause"),
        ("対応内容", "remediation"),
        ("再発防止策", "action_items"),
    ]


def test_iso_2022_jp_page_declared_utf8_is_still_read(page: Callable[[str], bytes]) -> None:
    data = page("ja-blog-outage.iso2022jp.html").replace(b'charset="iso-2022-jp"', b'charset="utf-8"')
    doc = extract_document(data, content_type="text/html; charset=utf-8")
    assert "キャッシュサーバのディスクが満杯" in doc.text and any("ISO-2022-JP" in w for w in doc.warnings)


def test_plain_text_report_served_in_pre_is_read_as_text() -> None:
    lines = [
        "= 障害報告",
        "",
        "サーバが停止しました。",
        "",
        "== 経緯",
        "",
        "5/1 10:00 停止",
        "5/1 11:00 復旧",
    ]
    lines += ["", "== 原因", "", "ディスクが故障しました。詳細は調査中です。"]
    report = "\n".join(lines * 3)
    html = f"<html><body><article><pre>{report}</pre></article></body></html>".encode()
    doc = extract_document(html)
    assert [b.kind for b in doc.blocks].count("code") == 0
    assert "経緯" in [s.heading for s in doc.sections]


def test_short_notice_keeps_its_list(page: Callable[[str], bytes]) -> None:
    html = (
        b"<html><body><main><article><h1>Mailing lists stopped</h1>"
        b"<p>We stopped the lists after a spam attack.</p><ul><li>ruby-core</li><li>ruby-talk</li>"
        b"<li>ruby-dev</li></ul><p>Sorry for the trouble.</p></article></main></body></html>"
    )
    doc = extract_document(html)
    assert [doc.block_text(b) for b in doc.blocks if b.kind == "list_item"] == [
        "ruby-core",
        "ruby-talk",
        "ruby-dev",
    ]


def test_link_only_list_under_a_known_heading_is_put_back() -> None:
    para = "<p>" + "The service failed because the certificate expired and nobody was paged. " * 4 + "</p>"
    html = (
        "<html><body><article><h1>Outage</h1>" + para * 3 + "<h2>References</h2><ul>"
        '<li><a href="https://a.example/1">Certificate renewal runbook</a></li>'
        '<li><a href="https://a.example/2">Paging policy</a></li></ul></article></body></html>'
    ).encode()
    doc = extract_document(html)
    items = [doc.block_text(b) for b in doc.blocks if b.kind == "list_item"]
    assert items == ["Certificate renewal runbook", "Paging policy"]
    assert doc.sections[-1].heading == "References" and doc.sections[-1].role == "skip"


SHORT_ARTICLE = (
    "<p>On May 2 the Quillmark API returned errors for 40 minutes after a bad configuration change.</p>"
    "<p>We rolled the change back at 14:40 UTC and service recovered. We are sorry for the disruption.</p>"
)
CHROME_TEMPLATES = {
    "header-and-footer": (
        '<header><ul><li><a href="/">Home</a></li><li><a href="/login">Log in</a></li></ul>'
        "<p>Notes from the people who keep Quillmark running</p></header><main><h1>API outage on May 2</h1>"
        "{body}</main><footer><p>© 2024 Quillmark. All rights reserved.</p></footer>"
    ),
    "bare-divs": (
        '<div class="top"><a href="/login">Log in</a> <span>Notes from the people who keep Quillmark '
        'running</span></div><div class="content"><h2>API outage on May 2</h2>{body}</div>'
        '<div class="bottom">© 2024 Quillmark. All rights reserved.</div>'
    ),
    "no-containers": (
        '<a href="/login">Log in</a><p class="tag">Notes from the people who keep Quillmark running</p>'
        '<h1>API outage on May 2</h1>{body}<p class="copy">© 2024 Quillmark. All rights reserved.</p>'
    ),
}


@pytest.mark.parametrize("template", sorted(CHROME_TEMPLATES))
def test_short_article_on_an_unfamiliar_template_keeps_the_chrome_out(template: str) -> None:
    html = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>API outage on May 2 | Quillmark'
        "</title></head><body>" + CHROME_TEMPLATES[template].format(body=SHORT_ARTICLE) + "</body></html>"
    )
    doc = extract_document(html.encode(), url="https://e.example/x/", content_type="text/html")
    for chrome in ("Log in", "Notes from the people", "©", "All rights reserved"):
        assert chrome not in doc.text, (template, doc.text)
    assert doc.text.startswith("On May 2") and doc.text.endswith("sorry for the disruption.")


def test_a_closing_signature_line_is_article_not_chrome() -> None:
    body = SHORT_ARTICLE + "<p>Support these efforts and more here: https://e.example/sponsors</p>"
    html = (
        "<html><head><title>API outage | Quillmark</title></head><body><article><h1>API outage</h1>"
        f"{body}</article><footer>© Quillmark</footer></body></html>"
    )
    doc = extract_document(html.encode(), url="https://e.example/x/", content_type="text/html")
    assert "Support these efforts" in doc.text and "©" not in doc.text


ISSUE_THREAD = """<!doctype html><html><head><title>Postmortem: search outage · Issue #7 · acme/site</title></head>
<body><header><a href="/">Code host</a> <a href="/login">Sign in</a></header><main>
<h1>Postmortem: search outage #7</h1>
<div class="thread"><div class="post"><div class="post-head">dana commented on Mar 3</div>
<table class="d-block"><tbody><tr><td class="comment-body markdown-body">
<h2>Summary</h2>
<p>On March 2 search returned errors for every visitor for forty minutes.</p>
<h2>Root cause</h2>
<p>A configuration change pointed the search nodes at an index that had been deleted.</p>
<h2>Resolution</h2>
<p>We restored the previous configuration at 10:40 and searches worked again.</p>
</td></tr></tbody></table></div>
<div class="post"><div class="post-head">lee commented</div>
<table><tbody><tr><td class="comment-body"><p>Thanks for the write-up.</p><p>Good luck.</p></td></tr></tbody></table>
</div></div></main><footer>Terms Privacy</footer></body></html>"""


def test_a_post_in_a_layout_table_keeps_its_headings_and_paragraphs() -> None:
    """Issue-tracker and forum threads put a post's body in one table cell: read as a table, its
    headings and paragraphs ran together ("SummaryOn March 2 ...")."""
    doc = extract_document(ISSUE_THREAD.encode(), url="https://code.example/acme/site/issues/7")
    assert [s.heading for s in doc.sections][:3] == ["Summary", "Root cause", "Resolution"]
    assert "SummaryOn" not in doc.text and "table_row" not in [b.kind for b in doc.blocks]
    paragraphs = [doc.block_text(b) for b in doc.blocks if b.kind == "paragraph"]
    assert "On March 2 search returned errors for every visitor for forty minutes." in paragraphs
    check_offsets(doc)


def test_a_data_table_with_paragraphs_in_its_cells_stays_a_table() -> None:
    rows = "".join(
        f"<tr><td><p>2024-03-02 {t}</p></td><td><p>{event}</p><p>(on call)</p></td></tr>"
        for t, event in (("10:00", "Errors began."), ("10:12", "Alert fired."), ("10:40", "Restored."))
    )
    page = (
        "<html><body><article><h1>Search outage</h1>"
        + "<p>Search failed for every visitor for forty minutes on March 2, and we are sorry.</p>" * 3
        + f"<h2>Timeline</h2><table><tr><th>Time</th><th>Event</th></tr>{rows}</table>"
        + "</article></body></html>"
    )
    doc = extract_document(page.encode())
    table_rows = [doc.block_text(b) for b in doc.blocks if b.kind == "table_row"]
    assert len(table_rows) >= 3 and any("10:12" in r and "Alert fired." in r for r in table_rows)


@pytest.mark.parametrize(
    ("first", "kept"),
    [
        ("2025年6月3日 山田 太郎", False),  # a byline: date and author
        ("2024년 3월 3일 · 김민수", False),
        ("2025年6月3日、会員サイトにログインできない障害が発生しました。", True),
        ("2025年6月3日、決済システムで障害が発生し、約2時間ご利用いただけない状態となりました。", True),
        ("2024년 3월 3일 오후 결제 시스템에 장애가 발생했습니다.", True),
    ],
)
def test_a_cjk_opening_sentence_with_a_date_is_article_not_byline(first: str, kept: bool) -> None:
    body = "<p>原因は設定の誤りでした。設定を元に戻して復旧しました。今後は変更前の確認を徹底します。</p>" * 3
    page = f"<html><head><title>障害報告</title></head><body><article><h1>障害報告</h1><p>{first}</p>{body}"
    page += "</article></body></html>"
    doc = extract_document(page.encode(), url="https://example.jp/blog/incident")
    assert (first in doc.text) is kept
