from __future__ import annotations

from pathlib import Path

import pytest

from flows.schedule import deployments, schedules
from schema.errors import InputError
from tests.cli import run

SOURCES = """
[[source]]
name = "rust"
feed = "http://127.0.0.1:1/rust.xml"
schedule = "0 6 * * *"
group = "daily"

[[source]]
name = "kr"
sitemap = "http://127.0.0.1:1/sitemap.xml"
schedule = "0 6 * * *"
group = "daily"

[[source]]
name = "weekly-digest"
index = "http://127.0.0.1:1/blog/"
link_pattern = "/20\\\\d\\\\d/"
schedule = "0 7 * * 1"
group = "weekly"

[[source]]
name = "by-hand"
urls = ["http://127.0.0.1:1/post.html"]
"""


def test_one_deployment_per_scheduled_group(tmp_path: Path) -> None:
    path = tmp_path / "sources.toml"
    path.write_text(SOURCES)
    assert schedules(path) == {"daily": "0 6 * * *", "weekly": "0 7 * * 1"}
    built = {d.name: d for d in deployments(path, tmp_path / "data")}
    assert sorted(built) == ["ingest-daily", "ingest-weekly"]
    daily = built["ingest-daily"]
    assert daily.schedules[0].schedule.cron == "0 6 * * *"
    assert daily.parameters["request"]["groups"] == ["daily"]
    assert daily.parameters["data_dir"] == str((tmp_path / "data").resolve())


def test_a_group_with_two_crons_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sources.toml"
    path.write_text(
        SOURCES.replace('schedule = "0 7 * * 1"\ngroup = "weekly"', 'schedule = "0 7 * * 1"\ngroup = "daily"')
    )
    with pytest.raises(InputError, match="must share a schedule"):
        schedules(path)


def test_dry_run_lists_deployments(capsys, tmp_path: Path) -> None:
    path = tmp_path / "sources.toml"
    path.write_text(SOURCES)
    result = run(capsys, "schedule", "--sources", str(path), "--dry-run")
    assert result.code == 0, result.err
    assert result.out.splitlines()[0].startswith("ingest-daily  0 6 * * *")
    missing = run(capsys, "schedule", "--sources", str(tmp_path / "nope.toml"), "--dry-run")
    assert missing.code == 2 and "no such sources file" in missing.err  # a config error


def test_a_finished_run_is_one_line_with_its_counts() -> None:
    import json

    from flows.jobs import IngestRequest, Outcome
    from flows.pipeline import run_line

    request = IngestRequest(sources_file="sources.toml", groups=["daily"])
    outcomes = [
        Outcome(source="https://a.example/1", status="drafted", draft_id="d-1"),
        Outcome(source="https://a.example/2", status="drafted", draft_id="d-2"),
        Outcome(source="https://a.example/3", status="failed", reason="HTTP 500"),
    ]
    line = run_line(request, outcomes, 12.34)
    assert line.endswith("  ingest-daily  3 source(s): 2 drafted, 1 failed (12.3 s)"), line
    data = json.loads(run_line(request, outcomes, 12.34, as_json=True))
    assert data["deployment"] == "ingest-daily" and data["sources"] == 3
    assert data["counts"] == {"drafted": 2, "failed": 1} and data["seconds"] == 12.3
    assert run_line(request, [], 1.0).endswith("0 source(s): nothing new (1.0 s)")


def test_deployments_announce_their_runs(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    path = tmp_path / "sources.toml"
    path.write_text(SOURCES)
    built = {d.name: d for d in deployments(path, tmp_path / "data", announce="json")}
    assert built["ingest-daily"].parameters["announce"] == "json"
    result = run(capsys, "schedule", "--sources", str(path), "--dry-run", "--json")
    assert [json.loads(line)["deployment"] for line in result.out.splitlines()] == [
        "ingest-daily",
        "ingest-weekly",
    ]
