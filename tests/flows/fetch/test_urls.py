"""URL canonicalisation and rel=canonical detection."""

from __future__ import annotations

import pytest

from flows.fetch import canonicalize_url, find_rel_canonical


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("HTTP://Example.COM/a", "http://example.com/a"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("https://example.com:8443/a", "https://example.com:8443/a"),
        ("https://example.com", "https://example.com/"),
        ("https://example.com/a#section-2", "https://example.com/a"),
        ("https://example.com/a?utm_source=x&utm_medium=y&id=7", "https://example.com/a?id=7"),
        ("https://example.com/a?fbclid=abc", "https://example.com/a"),
        ("https://example.com/a?gclid=1&b=2&a=1", "https://example.com/a?b=2&a=1"),
        ("https://example.com/a?UTM_Campaign=z&q=", "https://example.com/a?q="),
        ("https://example.com./a", "https://example.com/a"),
    ],
)
def test_canonicalize(given: str, expected: str) -> None:
    assert canonicalize_url(given) == expected


def test_canonicalize_is_idempotent() -> None:
    once = canonicalize_url("HTTPS://Blog.Example.com:443/post?utm_source=feed&p=1#top")
    assert canonicalize_url(once) == once == "https://blog.example.com/post?p=1"


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'<head><link rel="canonical" href="/posts/1"></head>', "https://example.com/posts/1"),
        (b"<head><LINK HREF='https://other.example/p' REL=canonical></head>", "https://other.example/p"),
        (
            b'<link rel="alternate" href="/feed"><link rel="canonical" href="/c?a=1&amp;b=2">',
            "https://example.com/c?a=1&b=2",
        ),
        (b'<link rel="stylesheet" href="/s.css">', None),
        (b"no html at all", None),
    ],
)
def test_rel_canonical(head: bytes, expected: str | None) -> None:
    assert find_rel_canonical(head, "https://example.com/page") == expected
