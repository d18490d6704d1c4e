"""A record's life after approval: a changed source updates it (three ways, the reviewer's edits
kept), one open draft per source, corrections, several write-ups of one incident, and validate.
Real Prefect flows, a real loopback HTTP server, real files."""

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
POST = "/posts/queue-backlog.html"


class Post:
    """A post served with an ETag of its version (a matching If-None-Match gets a 304); version 0
    is gone (410)."""

    def __init__(self) -> None:
        self.version = 1

    def body(self) -> bytes:
        body = ORIGINAL
        for old, new in EDITS[: self.version - 1]:
            body = body.replace(old, new)
        return body

    def __call__(self, request: Request) -> Reply:
        if self.version == 0:
            return Reply(410, body=b"gone")
        etag = f'"v{self.version}"'
        if request.headers.get("If-None-Match") == etag:
            return Reply(304, headers={"ETag": etag})
        return Reply(body=self.body(), headers={"Content-Type": "text/html; charset=utf-8", "ETag": etag})


@pytest.fixture
def blog(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LoopbackServer, Post, Path]]:
    for key, value in env_for(data_dir).items():
        monkeypatch.setenv(key, value)
    served = Post()
    with LoopbackServer(("127.0.0.1",)) as server:
        server.route("/robots.txt", Reply(404))
        server.route(POST, served)
        feed = (
            '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Blog</title>'
            f"<link>{server.url('/')}</link><item><title>Queue backlog</title>"
            f"<link>{server.url(POST)}</link></item></channel></rss>"
        )
        server.route("/feed.xml", Reply(body=feed.encode(), headers={"Content-Type": "application/rss+xml"}))
        toml = data_dir / "sources.toml"
        toml.write_text(f'[[source]]\nname = "blog"\nfeed = "{server.url("/feed.xml")}"\nrecheck = "0"\n')
        yield server, served, toml


def _ingest(capsys: pytest.CaptureFixture[str], toml: Path) -> list[dict]:
    result = run(capsys, "ingest", "--sources", str(toml), "--json")
    assert result.code == 0, result.err
    return json.loads(result.out)  # type: ignore[no-any-return]


def _validate_clean(capsys: pytest.CaptureFixture[str]) -> None:
    checked = run(capsys, "validate")
    assert checked.code == 0, checked.err


def test_changed_source_updates_its_record_on_the_schedule(blog, capsys, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    server, served, toml = blog
    url = server.url(POST)
    records = data_dir / "records"
    queue = QueueStore(records / "queue")
    (first,) = _ingest(capsys, toml)
    assert first["status"] == "drafted", first
    edits = data_dir / "edits.json"
    edits.write_text(
        json.dumps({"title": {"en": "Notifications delayed by a queue backlog"}, "severity": "sev3"})
    )
    approved = run(
        capsys, "review", "approve", first["draft_id"], "--reviewer", "alice", "--edits", str(edits)
    )
    assert approved.out.strip() == f"approved {first['draft_id']} as IL-0001", approved.err
    before = json.loads((records / "IL-0001.json").read_text())
    _validate_clean(capsys)

    # The page changes: the scheduled path (a feed entry seen before, re-checked) drafts it `changed`
    served.version = 3
    (second,) = _ingest(capsys, toml)
    assert second["status"] == "changed" and second["previous"] == "IL-0001", second
    draft = queue.get(second["draft_id"])
    changes = {c["field"]: c for c in draft.changes}
    # the source changed the title too, but the reviewer had edited it: kept, the new text beside it
    assert changes["title"]["action"] == "kept"
    assert changes["title"]["to"] == {"en": "Notifications delayed by a queue backlog"}
    assert "and e-mail" in changes["title"]["source"]["en"]
    # a field only the source changed is proposed; one neither changed is not listed
    assert changes["summary"]["action"] == "proposed" and "4 hours" in changes["summary"]["to"]["en"]
    assert "severity" not in changes and draft.record.severity == "sev3"
    shown = run(capsys, "review", "show", second["draft_id"])
    assert "approving updates IL-0001" in shown.out and "kept     title" in shown.out, shown.out
    assert "the source now says" in shown.out
    _validate_clean(capsys)

    # unchanged on the next run: a 304
    (again,) = _ingest(capsys, toml)
    assert again["status"] == "unchanged", again

    done = run(capsys, "review", "approve", second["draft_id"], "--reviewer", "bob")
    assert done.code == 0 and "as IL-0001 (updated" in done.out, done.err
    after = json.loads((records / "IL-0001.json").read_text())
    assert after["id"] == "IL-0001" and after["updated_at"] > before["updated_at"]
    assert (
        after["title"] == {"en": "Notifications delayed by a queue backlog"} and after["severity"] == "sev3"
    )
    assert "4 hours" in after["summary"]["en"] and after["review"]["reviewed_by"] == "bob"
    assert json.loads((records / "history" / "IL-0001" / "1.json").read_text()) == before
    assert sorted(p.name for p in records.glob("IL-*.json")) == ["IL-0001.json"]
    assert [s["url"] for s in after["sources"]] == [url]
    audit = [json.loads(line) for line in (records / "audit.jsonl").read_text().splitlines()]
    assert all({"action", "at", "by", "version"} <= set(line) for line in audit)
    update = [a for a in audit if a.get("record_version") == 2]
    assert len(update) == 1 and update[0]["action"] == "approved" and update[0]["record_id"] == "IL-0001"
    assert "summary" in update[0]["source_changes"] and update[0]["changes"] == []
    _validate_clean(capsys)


def test_a_newer_draft_supersedes_the_pending_one_and_a_gone_page_is_marked(  # type: ignore[no-untyped-def]
    blog, capsys, data_dir: Path
) -> None:
    server, served, toml = blog
    records = data_dir / "records"
    queue = QueueStore(records / "queue")
    (first,) = _ingest(capsys, toml)
    assert run(capsys, "review", "approve", first["draft_id"], "--reviewer", "alice").code == 0
    served.version = 2
    (second,) = _ingest(capsys, toml)
    served.version = 3
    (third,) = _ingest(capsys, toml)
    assert second["status"] == third["status"] == "changed" and third["previous"] == "IL-0001"
    older = queue.get(second["draft_id"])
    assert older.status == "superseded" and older.history[-1].reason == third["draft_id"]
    assert [d.draft_id for d in queue.drafts("pending")] == [third["draft_id"]]
    refused = run(capsys, "review", "approve", second["draft_id"], "--reviewer", "bob")
    assert refused.code == 1 and f"superseded by {third['draft_id']}" in refused.err, refused.err
    assert run(capsys, "review", "approve", third["draft_id"], "--reviewer", "bob").code == 0
    _validate_clean(capsys)

    served.version = 0  # the page is gone: reported, its record marked, nothing deleted
    (gone,) = _ingest(capsys, toml)
    assert gone["status"] == "gone" and "IL-0001 marked gone" in gone["reason"], gone
    marks = json.loads((records / "marks" / "gone.json").read_text())
    assert marks[server.url(POST)]["records"] == ["IL-0001"]
    assert (records / "IL-0001.json").exists()
    _validate_clean(capsys)
