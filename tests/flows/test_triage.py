"""The gate's triage: a doubtful page is queued in the doubtful lane, a confident "no" is skipped
and listed with its reasons, and a skipped page is drafted in one action."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractors import draft_page
from extractors.gate import SKIP_BELOW
from flows.settings import Settings
from flows.store.ledger import Entry, Ledger
from flows.store.queue import QueueStore
from schema.draft import Alternative, Evidence
from tests.cli import run

TRIAGE = Path(__file__).resolve().parents[1] / "data" / "triage"
DOUBTFUL = TRIAGE / "doubtful-game-day.html"  # a drill told like an outage: the gate doubts it
GENERIC = TRIAGE / "generic-product-news.html"  # a product post: a confident "no"
MARGIN = 0.2  # the fixtures' scores are this far from the cut-off at least: no outcome by a hair


def _gate(path: Path):  # type: ignore[no-untyped-def]
    return draft_page(path.read_bytes(), url=f"https://example.org/{path.stem}/").draft.postmortem


def test_the_fixtures_are_a_doubtful_page_and_a_confident_no_far_from_the_cut_off() -> None:
    doubtful, generic = _gate(DOUBTFUL), _gate(GENERIC)
    assert doubtful.verdict is False and doubtful.skip is False, doubtful
    assert doubtful.reasons[0].startswith("look-alike (drill or game day)")
    assert generic.verdict is False and generic.skip is True, generic
    assert doubtful.score >= SKIP_BELOW + MARGIN and generic.score <= SKIP_BELOW - MARGIN


def test_draft_json_says_verdict_and_skip(capsys: pytest.CaptureFixture[str]) -> None:
    shown = run(capsys, "draft", str(DOUBTFUL), "--format", "json")
    assert shown.code == 0, shown.err
    gate = json.loads(shown.out)["postmortem"]
    assert (gate["verdict"], gate["skip"]) == (False, False)


@pytest.mark.usefixtures("prefect_harness")
def test_doubtful_queued_in_its_lane_generic_skipped_listed_and_drafted_on_request(
    capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    ingested = run(capsys, "ingest", str(DOUBTFUL), str(GENERIC))
    assert ingested.code == 0, ingested.err
    lines = {line.split()[0]: line for line in ingested.out.splitlines() if line.strip()}
    assert "(doubtful: look-alike (drill or game day)" in lines["drafted"], ingested.out
    assert "generic-product-news.html: not a postmortem" in lines["skipped"], ingested.out
    doubtful_id = lines["drafted"].split()[1]

    lane = run(capsys, "review", "list", "--lane", "doubtful")
    assert lane.code == 0 and doubtful_id in lane.out and "  doubtful  " in lane.out
    assert "no postmortem drafts" in run(capsys, "review", "list", "--lane", "postmortem").out
    rows = json.loads(run(capsys, "review", "list", "--json").out)
    assert [(r["draft_id"], r["lane"]) for r in rows] == [(doubtful_id, "doubtful")]
    assert run(capsys, "review", "list", "--lane", "maybe").code == 2

    listed = run(capsys, "review", "skipped", "--json")
    (page,) = json.loads(listed.out)
    assert page["url"].endswith("generic-product-news.html") and page["snapshot"]
    assert page["reason"].startswith("states no impact, cause or fix")
    assert page["url"] in run(capsys, "review", "skipped").out

    drafted = run(capsys, "review", "unskip", page["url"], "--reviewer", "alice")
    assert drafted.code == 0, drafted.err
    assert drafted.out.startswith("drafted  d-") and drafted.out.rstrip().endswith("(doubtful)")
    new_id = drafted.out.split()[1]
    draft = QueueStore(Settings(data_dir=data_dir).queue_dir).get(new_id)
    assert draft.status == "pending" and draft.source.snapshot == page["snapshot"]
    assert draft.history[-1].by == "alice" and "skipped pages" in (draft.history[-1].reason or "")
    assert "no skipped pages" in run(capsys, "review", "skipped").out
    audit = (data_dir / "records" / "audit.jsonl").read_text().splitlines()
    last = json.loads(audit[-1])
    assert (last["action"], last["by"], last["draft_id"], last["url"]) == (
        "unskipped",
        "alice",
        new_id,
        page["url"],
    )

    again = run(capsys, "ingest", str(GENERIC))  # no longer skipped: the draft is there
    assert again.out.startswith("duplicate  " + new_id), again.out


def test_unskip_refuses_what_is_not_skipped_in_one_line(
    capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    bad = run(capsys, "review", "unskip", "https://example.org/never-seen/", "--reviewer", "alice")
    assert bad.code != 0 and "is not a skipped page" in bad.err and bad.err.count("\n") == 1
    assert "Traceback" not in bad.err
    both = run(capsys, "review", "unskip", "https://example.org/x/", "--all", "--reviewer", "alice")
    assert both.code == 2
    assert (
        run(capsys, "review", "unskip", "--all", "--reviewer", "alice").out.strip()
        == "no skipped pages to draft"
    )
    # A page that is no article at all is listed, never drafted: there is nothing to review.
    ledger = Ledger(Settings(data_dir=data_dir).raw_dir / "ledger.sqlite")
    why = "not a postmortem: no article: 12 words (fewer than 30, no incident wording)"
    ledger.put(Entry("https://example.org/stub/", "sha256:00", "d-0000000000000000", "urn:x", skipped=why))
    ledger.close()
    assert "https://example.org/stub/  no article: 12 words" in run(capsys, "review", "skipped").out
    stub = run(capsys, "review", "unskip", "https://example.org/stub/", "--reviewer", "alice")
    assert stub.code != 0 and "is no article at all" in stub.err and stub.err.count("\n") == 1
    assert (
        run(capsys, "review", "unskip", "--all", "--reviewer", "alice").out.strip()
        == "no skipped pages to draft"
    )


def test_review_show_lists_the_alternatives(capsys: pytest.CaptureFixture[str], data_dir: Path) -> None:
    draft = draft_page(DOUBTFUL.read_bytes(), url="https://example.org/game-day/").draft
    text = "The automatic promotion was disabled by a configuration change last year"
    alternatives = {
        "root_cause": [
            Alternative(
                term="config-change", score=0.41, evidence=[Evidence(quote=text, start=0, end=len(text))]
            ),
            Alternative(term="software-bug", score=0.12),
        ]
    }
    QueueStore(Settings(data_dir=data_dir).queue_dir).add(
        draft.model_copy(update={"alternatives": alternatives})
    )
    shown = run(capsys, "review", "show", draft.draft_id)
    assert shown.code == 0, shown.err
    assert "\nlane: doubtful (the gate says no" in shown.out
    block = shown.out.split("alternatives (runners-up, best first)\n", 1)[1]
    assert block.startswith('root_cause\n    config-change  0.41  < "The automatic promotion')
    assert "\n    software-bug  0.12\n" in block
