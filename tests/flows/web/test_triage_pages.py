"""The gate's triage on the web, through TestClient: the doubtful badge and lane filter of the
queue, the skipped pages and drafting them, the alternatives under a field."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from flows.settings import Settings
from flows.store.ledger import Entry, Ledger
from flows.web.app import create_app
from tests.flows.web.triage_data import Triage, build_triage

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture
def triage(data_dir: Path) -> Triage:
    return build_triage(data_dir)


@pytest.fixture
def client(data_dir: Path, triage: Triage) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(data_dir=data_dir)), base_url="http://127.0.0.1") as c:
        yield c


def _rows(html: str) -> list[str]:
    return re.findall(r'<tr data-href="/drafts/(d-[0-9a-f]{16})"', html)


def test_queue_badges_the_doubtful_draft_and_filters_its_lane(client: TestClient, triage: Triage) -> None:
    html = client.get("/queue").text
    assert len(_rows(html)) == len(triage.drafts) + 1
    assert html.count('class="badge doubtful"') == 1
    row = html.split(f'data-href="/drafts/{triage.doubtful.draft_id}"')[1].split("</tr>")[0]
    assert (
        'class="badge doubtful"' in row and "look-alike (drill or game day)" in row
    )  # the reason, as a title
    assert _rows(client.get("/queue?lane=doubtful").text) == [triage.doubtful.draft_id]
    others = _rows(client.get("/queue?lane=postmortem").text)
    assert len(others) == len(triage.drafts) and triage.doubtful.draft_id not in others
    assert len(_rows(client.get("/queue?lane=bogus").text)) == len(triage.drafts) + 1  # unknown: both


def test_skipped_page_lists_why_and_drafts_it_in_one_action(
    client: TestClient, triage: Triage, data_dir: Path
) -> None:
    html = client.get("/skipped").text
    assert triage.skipped_url in html and "states no impact, cause or fix" in html
    token = CSRF.search(html).group(1)  # type: ignore[union-attr]
    stale = client.post(
        "/skipped/draft", data={"csrf": "forged", "url": triage.skipped_url}, follow_redirects=False
    )
    assert (
        stale.status_code >= 400
        and Ledger(data_dir / "raw" / "ledger.sqlite").get(triage.skipped_url).skipped
    )  # type: ignore[union-attr]
    client.cookies.set("incidents_reviewer", "bob")
    done = client.post(
        "/skipped/draft", data={"csrf": token, "url": triage.skipped_url}, follow_redirects=False
    )
    assert done.status_code == 303, done.text
    target = done.headers["location"]
    draft_id = re.search(r"/drafts/(d-[0-9a-f]{16})", target).group(1)  # type: ignore[union-attr]
    page = client.get(target).text
    assert f"Drafted {draft_id} from the skipped pages" in page
    assert "No skipped pages." in client.get("/skipped").text
    assert draft_id in _rows(client.get("/queue?lane=doubtful").text)
    audit = [json.loads(line) for line in (data_dir / "records" / "audit.jsonl").read_text().splitlines()]
    assert (audit[-1]["action"], audit[-1]["by"], audit[-1]["url"]) == (
        "unskipped",
        "bob",
        triage.skipped_url,
    )
    again = client.post(
        "/skipped/draft", data={"csrf": token, "url": triage.skipped_url}, follow_redirects=False
    )
    assert again.status_code == 400 and "is not a skipped page" in again.text


def test_draft_all_skipped_pages_lands_on_the_doubtful_lane(client: TestClient, triage: Triage) -> None:
    token = CSRF.search(client.get("/skipped").text).group(1)  # type: ignore[union-attr]
    nameless = client.post("/skipped/draft", data={"csrf": token, "all": "1"}, follow_redirects=False)
    assert nameless.status_code == 400 and "say who you are first" in nameless.text  # no default name
    client.cookies.set("incidents_reviewer", "bob")
    done = client.post("/skipped/draft", data={"csrf": token, "all": "1"}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"].startswith("/queue?lane=doubtful")
    assert "Drafted 1 skipped page into the doubtful lane" in client.get(done.headers["location"]).text


def test_draft_page_offers_the_alternatives_as_one_click_choices(client: TestClient, triage: Triage) -> None:
    html = client.get(f"/drafts/{triage.with_alternatives.draft_id}").text
    field = html.split('id="field-root_cause"')[1].split('id="field-')[0]
    assert f'data-alt-term="{triage.alternative}"' in field and "0.31" in field
    assert 'class="quote alt-quote" data-start=' in field  # its quote, located in the extracted text
    symptoms = html.split('id="field-symptoms"')[1].split('id="field-')[0]
    assert "data-alt-term=" in symptoms and "0.22" in symptoms
    assert html.count('src="/static/alternatives.js"') >= 1
    assert 'class="gate-note"' not in html  # a postmortem: no doubt shown
    plain = client.get(f"/drafts/{triage.doubtful.draft_id}").text
    # as many alternative buttons as the drafter offered runners-up, none when it offered none
    offered = sum(len(alts) for alts in triage.doubtful.alternatives.values())
    assert plain.count("data-alt-term=") == offered
    note = plain.split('class="gate-note"')[1].split("</p>")[0]
    assert "not a postmortem: look-alike (drill or game day)" in note
    assert client.get("/static/alternatives.js").status_code == 200


def test_a_skipped_page_with_no_article_is_listed_but_not_offered(client: TestClient, data_dir: Path) -> None:
    ledger = Ledger(data_dir / "raw" / "ledger.sqlite")
    why = "not a postmortem: no article: 12 words (fewer than 30, no incident wording)"
    ledger.put(Entry("https://example.org/stub/", "sha256:00", "d-0000000000000000", "urn:x", skipped=why))
    ledger.close()
    html = client.get("/skipped").text
    row = html.split("https://example.org/stub/")[1].split("</tr>")[0]
    assert "no article: 12 words" in row and "nothing to review" in row and "data-unskip" not in row
    assert "Draft all (1)" in html  # the other skipped page only
