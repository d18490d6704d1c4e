"""Refresh and ingest agree: a page whose newest capture is not the one drafted is drafted `changed`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.store.queue import QueueStore
from tests.cli import run
from tests.flows.pipeline_fixtures import PAGES, env_for
from tests.httpserver import LoopbackServer, Reply, Request

pytestmark = pytest.mark.usefixtures("prefect_harness")
ORIGINAL = (PAGES / "en-queue-outage.html").read_bytes()
EDITS = [
    (b"delayed by up to 3 hours", b"delayed by up to 4 hours"),
    (
        b"message queue backlog delayed notifications",
        b"message queue backlog delayed notifications and e-mail",
    ),
]


class Post:
    """A post served with an ETag of its version; a matching If-None-Match gets a 304."""

    def __init__(self) -> None:
        self.version = 1

    def body(self) -> bytes:
        body = ORIGINAL
        for old, new in EDITS[: self.version - 1]:
            body = body.replace(old, new)
        return body

    def __call__(self, request: Request) -> Reply:
        etag = f'"v{self.version}"'
        if request.headers.get("If-None-Match") == etag:
            return Reply(304, headers={"ETag": etag})
        return Reply(body=self.body(), headers={"Content-Type": "text/html; charset=utf-8", "ETag": etag})


@pytest.fixture
def post(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LoopbackServer, Post]]:
    for key, value in env_for(data_dir).items():
        monkeypatch.setenv(key, value)
    served = Post()
    with LoopbackServer(("127.0.0.1",)) as server:
        server.route("/robots.txt", Reply(404))
        server.route("/posts/queue-backlog.html", served)
        yield server, served


def _ingest(capsys: pytest.CaptureFixture[str], url: str) -> dict[str, str]:
    result = run(capsys, "ingest", url, "--json")
    assert result.code == 0, result.err
    (outcome,) = json.loads(result.out)
    return outcome  # type: ignore[no-any-return]


def test_refresh_then_ingest_drafts_changed(post, capsys, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    server, served = post
    url = server.url("/posts/queue-backlog.html")
    first = _ingest(capsys, url)
    assert first["status"] == "drafted", first
    served.version = 2
    refreshed = run(capsys, "archive", "refresh", url)
    assert refreshed.code == 1 and refreshed.out.startswith(f"changed {url} c-"), refreshed.out
    second = _ingest(capsys, url)  # the server answers 304: the new capture is the refresh's
    assert server.hits("/posts/queue-backlog.html")[-1].headers.get("If-None-Match") == '"v2"'
    assert second["status"] == "changed" and second["previous"] == first["draft_id"], second
    queue = QueueStore(data_dir / "records" / "queue")
    draft = queue.get(second["draft_id"])
    assert draft.supersedes == first["draft_id"] and draft.changes
    assert draft.source.snapshot == second["snapshot"] != first["snapshot"]
    assert "4 hours" in json.dumps(draft.model_dump(mode="json"))
    third = _ingest(capsys, url)
    assert third["status"] == "unchanged" and third["draft_id"] == second["draft_id"], third


def test_refresh_draft_drafts_changed_at_once(post, capsys, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    server, served = post
    url = server.url("/posts/queue-backlog.html")
    first = _ingest(capsys, url)
    served.version = 3
    refreshed = run(capsys, "archive", "refresh", url, "--draft", "--json")
    assert refreshed.code == 1, refreshed.err
    (item,) = json.loads(refreshed.out)
    assert item["result"] == "changed" and item["draft"]["status"] == "changed", item
    assert item["draft"]["previous"] == first["draft_id"] and item["draft"]["snapshot"] == item["capture"]
    draft = QueueStore(data_dir / "records" / "queue").get(item["draft"]["draft_id"])
    assert draft.supersedes == first["draft_id"] and draft.changes
    again = _ingest(capsys, url)
    assert again["status"] == "unchanged", again
