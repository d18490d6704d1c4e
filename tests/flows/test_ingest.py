"""The ingest flow end to end: real Prefect flows (test harness), a real loopback HTTP server."""

from __future__ import annotations

import json
import pickle
import time
from itertools import pairwise
from pathlib import Path

import pytest

from flows.store.queue import QueueStore
from tests.cli import run
from tests.flows.pipeline_fixtures import POSTMORTEMS, env_for, serve_blog
from tests.httpserver import LoopbackServer, Reply

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "postmortem.html"
pytestmark = pytest.mark.usefixtures("prefect_harness")


@pytest.fixture
def blog(data_dir: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    for key, value in env_for(data_dir).items():
        monkeypatch.setenv(key, value)
    with LoopbackServer(("127.0.0.1",)) as server:
        serve_blog(server)
        yield server


def _lines(out: str) -> dict[str, list[str]]:
    by_status: dict[str, list[str]] = {}
    for line in out.splitlines():
        status, _, rest = line.partition("  ")
        by_status.setdefault(status, []).append(rest)
    return by_status


def test_sample_page_from_ingest_to_approved_record(capsys, data_dir: Path) -> None:
    first = run(capsys, "ingest", str(SAMPLE))
    assert first.code == 0, first.err
    status, draft_id, source = first.out.split()
    assert (status, source) == ("drafted", str(SAMPLE))
    draft = QueueStore(data_dir / "records" / "queue").get(draft_id)
    assert draft.record.review.written_by == "session" and draft.record.review.reviewed_by is None
    assert draft.source.snapshot and draft.record.sources[0].archived == draft.source.snapshot
    assert list((data_dir / "raw").glob("**/*.warc.gz"))

    again = run(capsys, "ingest", str(SAMPLE))
    assert again.out.split() == ["duplicate", draft_id, str(SAMPLE)]
    assert QueueStore(data_dir / "records" / "queue").ids() == [draft_id]

    approved = run(capsys, "review", "approve", draft_id, "--reviewer", "alice")
    assert approved.code == 0, approved.err
    assert (data_dir / "records" / "IL-0001.json").exists()
    assert run(capsys, "validate").code == 0


def test_each_run_publishes_a_table_of_outcomes(capsys, data_dir: Path, tmp_path: Path) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.client.schemas.sorting import ArtifactSort

    empty = tmp_path / "missing.html"  # no such file: it fails as its source, the run goes on
    result = run(capsys, "ingest", str(SAMPLE), str(empty))
    assert result.code == 0, result.err
    with get_client(sync_client=True) as client:
        [artifact] = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["ingest-report"])),
            sort=ArtifactSort.CREATED_DESC,
            limit=1,
        )
    table = json.loads(artifact.data) if isinstance(artifact.data, str) else artifact.data
    by_source = {row["source"]: row for row in table}
    assert by_source[str(SAMPLE)]["status"] == "drafted" and by_source[str(SAMPLE)]["draft"].startswith("d-")
    assert by_source[str(empty)]["status"] in ("failed", "skipped") and by_source[str(empty)]["reason"]
    assert artifact.type == "table" and "1 drafted" in (artifact.description or "")


def test_the_flows_tasks_share_one_api_client(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each sync task run would otherwise build its own client, and a TLS context with it (~60 ms)."""
    import asyncio
    import traceback

    from prefect.client.orchestration import SyncPrefectClient, get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    import flows.pipeline as pipeline
    from flows.settings import Settings

    pages = []
    for i in range(3):
        pages.append(tmp_path / f"p{i}.html")
        pages[-1].write_bytes(SAMPLE.read_bytes().replace(b"</h1>", f"</h1><p>Copy {i}.</p>".encode(), 1))
    built = []
    original = SyncPrefectClient.__init__

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        built.append("".join(traceback.format_stack()))
        original(self, *args, **kwargs)

    monkeypatch.setattr(SyncPrefectClient, "__init__", counting)
    monkeypatch.setattr(pipeline, "BATCH_SIZE", 1)
    request = pipeline.IngestRequest(sources=[str(p) for p in pages], workers=1)
    state = asyncio.run(pipeline.ingest_flow(request, Settings(data_dir=data_dir), return_state=True))
    assert [o.status for o in state.result().unquote()] == ["drafted"] * 3
    assert repr(state.result()) == "Outcomes(<3 outcomes>)"  # asyncio.run repr()s it, twice
    assert pickle.loads(pickle.dumps(state.result())).unquote() == state.result().unquote()  # persisted
    # discovery and three batches are four task runs; none builds a client of its own
    assert built and not [stack for stack in built if "task_engine.py" in stack]
    monkeypatch.setattr(SyncPrefectClient, "__init__", original)
    flow_run = FlowRunFilter(id=FlowRunFilterId(any_=[state.state_details.flow_run_id]))
    with get_client(sync_client=True) as client:
        for _ in range(100):  # the server records task runs from events, a moment later
            runs = client.read_task_runs(flow_run_filter=flow_run)
            if len(runs) == 4 and all(r.state and r.state.is_completed() for r in runs):
                break
            time.sleep(0.1)
    assert sorted(r.task_key.split("-")[0] for r in runs) == ["discover_task"] + ["ingest_batch"] * 3


def test_run_ingest_builds_one_sync_client_for_the_engine_and_the_tasks(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine looks up the default result storage with a sync client of its own unless one is
    open before the flow starts; each costs a TLS context (~30 ms) and a round trip."""
    from prefect.client.orchestration import SyncPrefectClient

    import flows.pipeline as pipeline
    from flows.settings import Settings

    page = tmp_path / "p.html"
    page.write_bytes(SAMPLE.read_bytes())
    built = []
    original = SyncPrefectClient.__init__

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(SyncPrefectClient, "__init__", counting)
    request = pipeline.IngestRequest(sources=[str(page)], workers=1)
    assert [o.status for o in pipeline.run_ingest(request, Settings(data_dir=data_dir))] == ["drafted"]
    assert len(built) == 1


def test_bad_sources_fail_with_reasons_and_the_run_goes_on(capsys, data_dir: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"")
    binary = tmp_path / "image.html"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    folder = tmp_path / "folder"
    folder.mkdir()
    # A file that is there but empty or binary is the wrong file named: a usage error before any run.
    for named in (empty, binary):
        refused = run(capsys, "ingest", str(named), str(SAMPLE))
        assert refused.code == 2 and refused.out == "" and str(named) in refused.err
    args = [str(folder), str(tmp_path / "missing.html"), str(SAMPLE)]
    result = run(capsys, "ingest", *args)
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("failed") and "is a directory" in lines[0]
    assert lines[1].startswith("failed") and "no such file" in lines[1]
    assert lines[2].startswith("drafted")
    assert len(QueueStore(data_dir / "records" / "queue").ids()) == 1
    strict = run(capsys, "ingest", "--strict", str(folder), str(SAMPLE))
    assert strict.code == 1


def test_url_ingest_fetches_archives_drafts_and_reports_duplicate(
    capsys, blog: LoopbackServer, data_dir: Path
) -> None:
    url = blog.url("/posts/queue-backlog.html")
    first = run(capsys, "ingest", url, "--json")
    assert first.code == 0, first.err
    (outcome,) = json.loads(first.out)
    assert outcome["status"] == "drafted", outcome
    draft = QueueStore(data_dir / "records" / "queue").get(outcome["draft_id"])
    assert draft.record.title == {"en": "Incident report: message queue backlog delayed notifications"}
    assert draft.source.snapshot == outcome["snapshot"]
    again = run(capsys, "ingest", url)
    assert again.out.split()[:2] == ["duplicate", outcome["draft_id"]]
    verify = run(capsys, "archive", "verify")
    assert verify.code == 0, verify.err + verify.out


HOSTS = ("127.0.0.1", "127.0.0.2")
IN_TURN = ["/1-0.html", "/2-0.html", "/1-1.html", "/2-1.html"]


def _two_blogs(server: LoopbackServer) -> list[str]:
    """Two posts on each of two hosts, listed host by host (as feeds list them)."""
    urls = []
    for host in HOSTS:
        for n in range(2):
            path = f"/{host[-1]}-{n}.html"
            body = SAMPLE.read_bytes().replace(b"</h1>", f"</h1><p>Post {path}.</p>".encode(), 1)
            server.route(path, Reply(body=body, headers={"Content-Type": "text/html"}), host=host)
            urls.append(server.url(path, host=host))
    return urls


def _fetched(server: LoopbackServer) -> list[str]:
    return [hit.path for hit in server.hits() if hit.path.endswith(".html")]


def _one_thread(data_dir: Path):  # type: ignore[no-untyped-def]
    from flows.settings import Settings

    # one fetch thread, so the order of requests is the order of fetching
    return Settings(data_dir=data_dir, allow_hosts=",".join(HOSTS), min_interval=0, concurrency=1)


def test_a_batch_fetches_its_hosts_in_turn(data_dir: Path) -> None:
    """Otherwise every fetch thread queues on the first host while the others sit idle."""
    from flows.ingest import ingest_jobs, job_for

    with LoopbackServer(HOSTS) as server:
        urls = _two_blogs(server)
        outcomes = ingest_jobs([job_for(u) for u in urls], settings=_one_thread(data_dir))
        assert _fetched(server) == IN_TURN
    assert [o.source for o in outcomes] == urls and {o.status for o in outcomes} == {"drafted"}


def test_a_batch_runs_a_fetch_thread_per_host_not_per_allowed_request(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One request is in flight per host: with two hosts, a third thread would only wait."""
    import threading

    from flows.ingest import Ingestor, ingest_jobs, job_for
    from flows.settings import Settings

    seen: set[str] = set()
    prepare = Ingestor.prepare

    def spy(self: Ingestor, job):  # type: ignore[no-untyped-def]
        seen.add(threading.current_thread().name)
        time.sleep(0.05)  # long enough that idle threads would pick up the next jobs
        return prepare(self, job)

    monkeypatch.setattr(Ingestor, "prepare", spy)
    settings = Settings(data_dir=data_dir, allow_hosts=",".join(HOSTS), min_interval=0, concurrency=8)
    with LoopbackServer(HOSTS) as server:
        urls = _two_blogs(server)
        outcomes = ingest_jobs([job_for(u) for u in urls], settings=settings)
    assert {o.status for o in outcomes} == {"drafted"}
    assert len(seen) == 2, seen


def test_lanes_are_the_hosts_plus_every_local_source() -> None:
    from flows.ingest import Job, lanes

    urls = ["http://127.0.0.2/a", "http://127.0.0.2/b", "https://127.0.0.3/c"]
    local = [Job(source="a.html", kind="page"), Job(source="b.warc.gz", kind="warc")]
    assert lanes([Job(source=u, kind="url") for u in urls]) == 2
    assert lanes([Job(source=u, kind="url") for u in urls] + local) == 4


def test_batches_are_cut_with_hosts_in_turn_and_the_report_keeps_the_sources_order(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import flows.pipeline as pipeline

    monkeypatch.setattr(pipeline, "BATCH_SIZE", 2)  # a batch cut from the list would be one host
    with LoopbackServer(HOSTS) as server:
        urls = _two_blogs(server)
        request = pipeline.IngestRequest(sources=urls, workers=1)
        outcomes = pipeline.run_ingest(request, _one_thread(data_dir))
        assert _fetched(server) == IN_TURN
    assert [o.source for o in outcomes] == urls and {o.status for o in outcomes} == {"drafted"}


def test_a_rerun_of_304s_asks_sqlite_once_a_batch_not_once_a_source(data_dir: Path) -> None:
    """Each query lets another fetch thread take the GIL: two a source were a fifth of a re-run."""
    from flows.ingest import Ingestor, Scheduler, job_for
    from tests.httpserver import Request

    def page(request: Request) -> Reply:
        if request.headers.get("If-None-Match") == '"v1"':
            return Reply(304, headers={"ETag": '"v1"'})
        body = SAMPLE.read_bytes().replace(
            b"</h1>", f"</h1><p>Post {request.host}{request.path}.</p>".encode(), 1
        )
        return Reply(body=body, headers={"Content-Type": "text/html", "ETag": '"v1"'})

    with LoopbackServer(HOSTS) as server:
        urls = []
        for host in HOSTS:
            for n in range(6):
                server.route(f"/{n}.html", page, host=host)
                urls.append(server.url(f"/{n}.html", host=host))
        jobs = [job_for(u) for u in urls]
        settings = _one_thread(data_dir).model_copy(update={"concurrency": 4})
        first = Ingestor(settings)
        assert {o.status for done in Scheduler(first, jobs).run() for o in done} == {"drafted"}
        first.close()
        again = Ingestor(settings)
        queries: list[str] = []
        for db in (
            again.archive.index.database.connection,
            again.ledger.database.connection,
        ):  # count queries
            db.set_trace_callback(
                lambda sql: queries.append(sql) if sql.lstrip().startswith("SELECT") else None
            )
        outcomes = [o for done in Scheduler(again, jobs).run() for o in done]
        again.close()
    assert [o.status for o in outcomes] == ["unchanged"] * 12
    assert all(o.draft_id for o in outcomes)  # the ledger's answer still reaches the report
    assert len(queries) == 2, queries


def test_politeness_and_robots_hold_across_discovery_and_batches(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One host's feed and posts, in two batches: every request to it waits the interval after
    the one before, at the seams between discovery and the batches too, and robots.txt is
    fetched once a run."""
    import flows.pipeline as pipeline
    from flows.settings import Settings
    from tests.flows.pipeline_fixtures import rss

    monkeypatch.setattr(pipeline, "BATCH_SIZE", 2)
    interval = 0.3
    with LoopbackServer(("127.0.0.1",)) as server:
        paths = []
        for n in range(4):
            path = f"/posts/{n}.html"
            body = SAMPLE.read_bytes().replace(b"</h1>", f"</h1><p>Post {n}.</p>".encode(), 1)
            server.route(path, Reply(body=body, headers={"Content-Type": "text/html"}))
            paths.append(path)
        server.route(
            "/feed.xml", Reply(body=rss(server, paths), headers={"Content-Type": "application/rss+xml"})
        )
        settings = Settings(data_dir=data_dir, allow_hosts="127.0.0.1", min_interval=interval, concurrency=4)
        request = pipeline.IngestRequest(feeds=[server.url("/feed.xml")], workers=1, gate=False)
        outcomes = pipeline.run_ingest(request, settings)
        hits = server.hits()
    assert sorted(o.status for o in outcomes) == ["drafted"] * 4
    assert [h.path for h in hits].count("/robots.txt") == 1
    gaps = [(b.path, round(b.at - a.at, 3)) for a, b in pairwise(hits)]
    assert len(hits) == 6 and min(g for _, g in gaps) >= interval - 0.05, gaps


def test_a_changed_page_gets_a_new_draft_linked_to_the_old(
    capsys, blog: LoopbackServer, data_dir: Path
) -> None:
    url = blog.url("/posts/queue-backlog.html")
    first = json.loads(run(capsys, "ingest", url, "--json").out)[0]
    page = (Path(__file__).parents[1] / "data" / "pipeline" / "en-queue-outage.html").read_text()
    changed = page.replace("delayed by up to 3 hours", "delayed by up to 4 hours")
    changed = changed.replace(
        "Incident report: message queue backlog delayed notifications", "Update: queue backlog"
    )
    blog.route(
        "/posts/queue-backlog.html", Reply(body=changed.encode(), headers={"Content-Type": "text/html"})
    )
    second = json.loads(run(capsys, "ingest", url, "--json").out)[0]
    assert second["status"] == "changed", second
    assert second["previous"] == first["draft_id"]
    new = QueueStore(data_dir / "records" / "queue").get(second["draft_id"])
    assert new.supersedes == first["draft_id"]
    assert any(c["field"] == "title.en" for c in new.changes)


def test_feed_discovery_gates_and_rerun_drafts_nothing(capsys, blog: LoopbackServer, data_dir: Path) -> None:
    result = run(capsys, "ingest", "--feed", blog.url("/feed.xml"))
    assert result.code == 0, result.err
    lines = _lines(result.out)
    assert len(lines["drafted"]) == 3, result.out
    assert {line.split()[1] for line in lines["drafted"]} == {blog.url(p) for p in POSTMORTEMS}
    skipped = "\n".join(lines["skipped"])
    assert "tidewater-4-2.html: not a postmortem" in skipped  # by its title, before fetching
    assert "join-us.html: not a postmortem" in skipped  # by the drafter's verdict
    failed = "\n".join(lines["failed"])
    assert "missing-outage.html: HTTP 404" in failed
    assert "slow-outage.html" in failed and "timed out" in failed.lower()
    assert blog.count("/posts/tidewater-4-2.html") == 0

    rerun = run(capsys, "ingest", "--feed", blog.url("/feed.xml"))
    again = _lines(rerun.out)
    assert "drafted" not in again and "changed" not in again, rerun.out
    assert len(again["unchanged"]) == 5  # the three postmortems and the two skipped, all seen
    assert "None" not in rerun.out, rerun.out  # a source with no draft says why instead
    unchanged = "\n".join(again["unchanged"])
    assert "join-us.html: seen before in feed-1, skipped then: not a postmortem" in unchanged, unchanged
    assert "tidewater-4-2.html: seen before in feed-1" in unchanged, unchanged
    assert blog.count("/posts/queue-backlog.html") == 1
    assert len(QueueStore(data_dir / "records" / "queue").ids()) == 3


def test_sitemap_index_with_gzipped_child(capsys, blog: LoopbackServer, data_dir: Path) -> None:
    result = run(capsys, "ingest", "--sitemap", blog.url("/sitemap.xml"))
    assert result.code == 0, result.err
    assert len(_lines(result.out)["drafted"]) == 3, result.out


def test_sources_toml_with_three_feeds(capsys, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in env_for(data_dir).items():
        monkeypatch.setenv(key, value)
    with LoopbackServer(("127.0.0.1", "127.0.0.2", "127.0.0.3")) as server:
        hosts = ("127.0.0.1", "127.0.0.2", "127.0.0.3")
        for host in hosts:
            serve_blog(server, host=host)
        toml = data_dir / "sources.toml"
        toml.write_text(
            "".join(
                f'[[source]]\nname = "blog-{i}"\nfeed = "{server.url("/feed.xml", host=h)}"\n'
                f'exclude = ["slow-outage", "missing-outage"]\nschedule = "0 6 * * *"\ngroup = "daily"\n\n'
                for i, h in enumerate(hosts)
            )
        )
        first = run(capsys, "ingest", "--sources", str(toml))
        assert first.code == 0, first.err
        assert len(_lines(first.out)["drafted"]) == 9, first.out
        rerun = _lines(run(capsys, "ingest", "--sources", str(toml)).out)
        assert set(rerun) <= {"unchanged", "skipped"}, rerun


def test_bad_sources_file_is_one_clear_failure(capsys, data_dir: Path) -> None:
    toml = data_dir / "sources.toml"
    toml.write_text('[[source]]\nname = "x"\nfeed = "http://127.0.0.1/f"\nsitemap = "http://127.0.0.1/s"\n')
    result = run(capsys, "ingest", "--sources", str(toml))
    # a config error: exit 2 before any flow, so that a cron job running it is not green
    assert result.code == 2 and not result.out
    assert "exactly one of urls, feed, sitemap, index" in result.err and len(result.err.splitlines()) == 1


def _foreign_warc(path: Path) -> None:
    """A WARC as wget --warc-file writes one: warcinfo, then request/response pairs."""
    from io import BytesIO

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    pages = {
        "https://blog.tidewater.example/posts/queue-backlog.html": "en-queue-outage.html",
        "https://blog.tidewater.example/posts/db-failover.html": "ko-db-failover.html",
    }
    with path.open("wb") as out:
        writer = WARCWriter(out, gzip=True)
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "Wget/1.21.3"}))
        for url, name in pages.items():
            body = (Path(__file__).parents[1] / "data" / "pipeline" / name).read_bytes()
            headers = StatusAndHeaders(
                "200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1"
            )
            writer.write_record(
                writer.create_warc_record(url, "response", payload=BytesIO(body), http_headers=headers)
            )
        image = StatusAndHeaders("200 OK", [("Content-Type", "image/png")], protocol="HTTP/1.1")
        writer.write_record(
            writer.create_warc_record(
                "https://blog.tidewater.example/logo.png",
                "response",
                payload=BytesIO(b"\x89PNG..."),
                http_headers=image,
            )
        )


def test_a_warc_made_elsewhere_is_indexed_and_its_pages_drafted(
    capsys, data_dir: Path, tmp_path: Path
) -> None:
    warc = tmp_path / "crawl.warc.gz"
    _foreign_warc(warc)
    result = run(capsys, "ingest", str(warc))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert [line.split()[0] for line in lines] == ["drafted", "drafted"], result.out
    drafts = list(QueueStore(data_dir / "records" / "queue").drafts())
    assert {d.source.url for d in drafts} == {
        "https://blog.tidewater.example/posts/queue-backlog.html",
        "https://blog.tidewater.example/posts/db-failover.html",
    }
    assert all(d.source.snapshot for d in drafts)
    again = run(capsys, "ingest", str(warc))
    assert [line.split()[0] for line in again.out.splitlines()] == ["duplicate", "duplicate"], again.out


def test_index_page_with_link_pattern_and_org_override(capsys, blog: LoopbackServer, data_dir: Path) -> None:
    links = "".join(f'<li><a href="{p}">post</a></li>' for p in POSTMORTEMS)
    index = f'<html><body><ul>{links}<li><a href="/about.html">About</a></li></ul></body></html>'
    blog.route("/blog/", Reply(body=index.encode(), headers={"Content-Type": "text/html"}))
    toml = data_dir / "sources.toml"
    toml.write_text(
        f'[[source]]\nname = "index"\nindex = "{blog.url("/blog/")}"\n'
        'link_pattern = "/posts/"\norg = "Tidewater Inc."\n'
    )
    result = run(capsys, "ingest", "--sources", str(toml), "--json")
    assert result.code == 0, result.err
    outcomes = json.loads(result.out)
    assert [o["status"] for o in outcomes] == ["drafted"] * 3, outcomes
    assert blog.count("/about.html") == 0
    drafts = list(QueueStore(data_dir / "records" / "queue").drafts())
    assert {(d.record.org, d.record.org_slug) for d in drafts} == {("Tidewater Inc.", "tidewater-inc")}
    assert drafts[0].confidence["org"].method == "curator"
    assert "org" not in drafts[0].evidence


def test_fetch_failures_are_lines_with_reasons_and_the_run_goes_on(
    capsys, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in env_for(data_dir).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("INCIDENTS_MAX_BODY_BYTES", "20000")
    with LoopbackServer(("127.0.0.1", "127.0.0.2")) as server:
        serve_blog(server)
        robots = Reply(body=b"User-agent: *\nDisallow: /private/\n", headers={"Content-Type": "text/plain"})
        server.route("/robots.txt", robots)
        server.route(
            "/private/outage.html", Reply(body=b"<html>secret</html>", headers={"Content-Type": "text/html"})
        )
        server.route(
            "/big.html",
            Reply(body=b"<html>" + b"x" * 50000 + b"</html>", headers={"Content-Type": "text/html"}),
        )
        server.route("/report.pdf", Reply(body=b"%PDF-1.7 ...", headers={"Content-Type": "application/pdf"}))
        server.route(
            "/to-metadata", Reply(302, headers={"Location": "http://169.254.169.254/latest/meta-data/"})
        )
        server.route(
            "/not-allowed",
            Reply(302, headers={"Location": server.url("/posts/db-failover.html", host="127.0.0.2")}),
        )
        monkeypatch.setenv("INCIDENTS_ALLOW_HOSTS", "127.0.0.1")
        sources = [
            server.url("/private/outage.html"),
            server.url("/big.html"),
            server.url("/report.pdf"),
            server.url("/to-metadata"),
            server.url("/not-allowed"),
            server.url("/posts/queue-backlog.html"),
        ]
        result = run(capsys, "ingest", *sources)
        assert result.code == 0, result.err
        lines = result.out.splitlines()
        assert len(lines) == 6, result.out
        assert lines[0].startswith("skipped") and "robots.txt disallows /private/outage.html" in lines[0]
        assert lines[1].startswith("failed") and "20000" in lines[1]
        assert lines[2].startswith("skipped") and "application/pdf" in lines[2]
        assert lines[3].startswith("failed") and "169.254.169.254" in lines[3]
        assert lines[4].startswith("failed") and "127.0.0.2" in lines[4]
        assert lines[5].startswith("drafted")
        assert run(capsys, "ingest", "--strict", sources[3]).code == 1
        assert run(capsys, "archive", "verify").code == 0


def test_a_worker_hands_back_the_drafts_queue_file_text(tmp_path: Path) -> None:
    from flows.ingest import DraftTask, Job, draft_for_queue, draft_payload
    from flows.store.queue import draft_text
    from tests.conftest import DATA

    url = "https://blog.example.org/posts/queue-outage.html"
    body = (DATA / "pipeline" / "en-queue-outage.html").read_bytes()
    task = DraftTask(
        Job(source=url, kind="url"), body, url, url, "text/html", "c-1", "sha256:x", "2026-01-05T00:00:00Z"
    )
    drafted = pickle.loads(
        pickle.dumps(draft_for_queue(pickle.loads(pickle.dumps(task))))
    )  # as a worker does
    draft = draft_payload(task)
    assert drafted.text == draft_text(draft)
    assert drafted.draft() == draft
    assert (drafted.draft_id, drafted.verdict, list(drafted.reasons)) == (
        draft.draft_id,
        draft.postmortem.verdict,
        draft.postmortem.reasons,
    )
    queue = QueueStore(tmp_path / "queue")
    assert queue.add_text(drafted.draft_id, drafted.text)
    assert queue.get(draft.draft_id) == draft
    assert not queue.add(draft)  # the same draft, however it comes, is queued once
