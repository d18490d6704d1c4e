"""impact.users counts people, customers, requests or organisations, with the unit; never another count."""

from __future__ import annotations

import pytest

from extractors import draft_page


def users(body: str) -> str:
    html = f"<html><head><title>Login outage</title></head><body><article><h1>Login outage</h1>{body}</article></body></html>"
    return draft_page(html.encode(), url="https://e.example/u/").draft.record.impact.users


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "<p>On May 2 every build failed for an hour.</p><h2>Timeline</h2><ul><li>14:05 PR #2 merged, "
            "builds fail</li><li>15:00 PR #3 builds green again</li></ul><h2>Impact</h2><p>Builds of "
            "v2 users and 10:00 users were queued.</p>",
            "unknown",
        ),
        (
            "<p>On May 2 logins failed for two hours. We saw about 20 different error types in the logs.</p>"
            "<h2>Impact</h2><p>About 900 users could not log in.</p>",
            "About 900 users",
        ),
        (
            "<p>On May 2 logins failed for two hours after a deploy to 20 servers.</p>"
            "<h2>Impact</h2><p>No customers were affected; 1,200 requests failed and were retried.</p>",
            "1,200 requests",
        ),
        (
            "<p>On May 2 about 70% of API requests failed for two hours.</p>"
            "<h2>Impact</h2><p>Roughly 3,400 customer accounts saw failed webhook deliveries.</p>",
            "Roughly 3,400 customer accounts",
        ),
        (
            "<p>On May 2 the build farm was down for two hours; 40 packages could not be published.</p>"
            "<h2>Impact</h2><p>Publishing was delayed.</p>",
            "unknown",
        ),
        (
            "<p>5월 2일 로그인 장애가 2시간 동안 발생했습니다.</p><h2>영향</h2><p>약 900명의 사용자가 로그인하지 못했습니다.</p>",
            "약 900명의 사용자",
        ),
    ],
)
def test_users_count_who_was_affected(body: str, expected: str) -> None:
    assert users(body) == expected
