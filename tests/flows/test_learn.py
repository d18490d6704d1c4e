"""`incidents learn`: weights refitted on reviewers' approvals change later drafts; without
approvals the shipped weights stay. Real archive (WARC in raw/), real queue, real approvals."""

from __future__ import annotations

import json
from pathlib import Path

from extractors import draft_page
from extractors.draft.linear import shipped
from flows.archive import Archive
from flows.learn import active_weights_file, learned
from flows.review import Reviews
from flows.settings import Settings
from flows.store.queue import QueueStore
from tests.cli import run

# A page whose contributing factors state two lacks; the shipped weights keep one of them and
# offer the other (no-progressive-rollout) as an alternative.
BODY = (
    "<p>On May {n} the API of {org} was down for an hour after a config change.</p>"
    "<h2>Contributing factors</h2>"
    "<p>There was no canary: the change had no gradual rollout. Staging did not have the production config.</p>"
)


def page(n: int, org: str) -> bytes:
    title = f"Outage of the {org} API on May {n}"
    body = BODY.format(n=n, org=org)
    return (
        f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>{body}</article></body></html>"
    ).encode()


def approve_pages(settings: Settings, count: int) -> None:
    """Archive, draft, queue and approve `count` pages of as many organisations, each approval
    naming both lacks as the contributing factors (the reviewer's edit)."""
    archive = Archive(settings)
    queue = QueueStore(settings.queue_dir)
    reviews = Reviews(settings)
    for n in range(1, count + 1):
        org = f"org{n}"
        url = f"https://{org}.example/blog/outage-{n}/"
        data = page(n, org)
        capture = archive.store_resource(data, url=url, content_type="text/html")
        draft = draft_page(
            data, url=url, content_type="text/html", now="2026-01-01T00:00:00Z", snapshot=capture.id
        )
        queue.add(draft.draft)
        edits = {"contributing": ["no-progressive-rollout", "staging-parity-gap"], "org": org}
        reviews.approve(draft.draft.draft_id, reviewer="alice", edits=edits, now=f"2026-01-{n:02d}T00:00:00Z")


def later_draft(weights_file: str | None) -> list[str]:
    data = page(30, "newcorp")
    got = draft_page(
        data, url="https://newcorp.example/outage/", now="2026-02-01T00:00:00Z", weights=learned(weights_file)
    )
    return list(got.draft.record.contributing or [])


def test_no_approvals_means_the_shipped_weights(capsys, data_dir: Path) -> None:
    result = run(capsys, "learn")
    assert result.code == 0, result.err
    assert "no approvals" in result.out and shipped().version in result.out
    settings = Settings(data_dir=data_dir)
    assert active_weights_file(settings) is None and not (data_dir / "weights.json").exists()
    data = page(30, "newcorp")
    drafted = draft_page(data, url="https://newcorp.example/outage/", now="2026-02-01T00:00:00Z").draft
    assert drafted.source.drafter.endswith("weights " + shipped().version)


def test_weights_fitted_on_approvals_change_a_later_draft(capsys, data_dir: Path) -> None:
    settings = Settings(data_dir=data_dir)
    before = later_draft(None)
    assert "no-progressive-rollout" not in before  # the shipped weights' call
    approve_pages(settings, 8)
    result = run(capsys, "learn")
    assert result.code == 0, result.err
    assert "learned from 8 approval(s)" in result.out
    path = active_weights_file(settings)
    assert path is not None
    weights = json.loads(Path(path).read_text())
    assert weights["version"].startswith("learned-") and weights["version"] != shipped().version
    after = later_draft(path)
    assert "no-progressive-rollout" in after
    data = page(30, "newcorp")
    drafted = draft_page(
        data, url="https://newcorp.example/x/", now="2026-02-01T00:00:00Z", weights=learned(path)
    )
    assert drafted.draft.source.drafter.endswith("weights " + weights["version"])


def test_evaluate_prints_a_learning_curve_and_writes_nothing(capsys, data_dir: Path) -> None:
    approve_pages(Settings(data_dir=data_dir), 4)
    result = run(capsys, "learn", "--evaluate", "--steps", "2")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].split()[0] == "approvals"
    assert [line.split()[0] for line in lines[1:]] == ["1-2", "3-4"]
    assert not (data_dir / "weights.json").exists()


def test_no_data_directory_is_a_usage_error(capsys, tmp_path: Path) -> None:
    result = run(capsys, "learn", "--data-dir", str(tmp_path / "missing"))
    assert result.code == 2
    assert "no data directory here" in result.err and "Traceback" not in result.err
