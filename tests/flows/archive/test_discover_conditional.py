"""Feeds, sitemaps and index pages are fetched conditionally: a 304 adds a revisit, not a payload."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.archive import Archive
from flows.settings import Settings
from tests.cli import run
from tests.flows.pipeline_fixtures import PAGES, env_for, rss
from tests.httpserver import LoopbackServer, Reply, Request

pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_a_feed_is_fetched_conditionally_on_every_run(
    capsys, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    for key, value in env_for(data_dir).items():
        monkeypatch.setenv(key, value)
    with LoopbackServer(("127.0.0.1",)) as server:
        feed = rss(server, ["/posts/queue-backlog.html"])

        def answer(request: Request) -> Reply:
            if request.headers.get("If-None-Match") == '"feed-1"':
                return Reply(304, headers={"ETag": '"feed-1"'})
            headers = {"Content-Type": "application/rss+xml", "ETag": '"feed-1"'}
            return Reply(body=feed, headers=headers)

        server.route("/robots.txt", Reply(404))
        server.route("/feed.xml", answer)
        page = (PAGES / "en-queue-outage.html").read_bytes()
        server.route("/posts/queue-backlog.html", Reply(body=page, headers={"Content-Type": "text/html"}))
        url = server.url("/feed.xml")
        first = run(capsys, "ingest", "--feed", url)
        assert first.code == 0 and first.out.startswith("drafted"), first.out
        second = run(capsys, "ingest", "--feed", url)
        assert second.code == 0 and second.out.startswith("unchanged"), second.out
        hits = server.hits("/feed.xml")
    assert [h.headers.get("If-None-Match") for h in hits] == [None, '"feed-1"']
    with Archive(Settings(data_dir=data_dir)) as archive:
        kinds = [c.kind for c in archive.captures(url_prefix=url)]
        assert kinds == ["response", "unchanged"]  # one payload, then a server-not-modified revisit
        latest = archive.captures(url_prefix=url)[-1]
        assert archive.read_payload(latest.id) == feed
