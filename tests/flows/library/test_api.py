"""The read-only JSON API and the en/ko pages, through FastAPI's TestClient."""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient

from flows.library.app import create_library_app
from flows.settings import Settings
from flows.store.atomic import write_text


@pytest.fixture
def client(library_settings: Settings) -> TestClient:
    return TestClient(create_library_app(library_settings))


def ids_in(html: str) -> list[str]:
    return re.findall(r'<li class="incident" data-id="(IL-\d+)"', html)


def test_search_by_component_has_ids_and_sources(client: TestClient) -> None:
    response = client.get("/api/incidents", params={"component": "node-image"})
    assert response.status_code == 200
    body = response.json()
    assert [item["id"] for item in body["items"]] == ["IL-0102", "IL-0101"]
    assert body["items"][1]["sources"][0]["url"] == "https://tech.nimbus.example/ko/2024/ami-rollover"
    assert body["filters"] == {"component": ["node-image"]}
    assert {f["term"]: f["count"] for f in body["facets"]["root_cause"]} == {"upgrade-migration": 2}


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"q": "롤오버"}, ["IL-0101"]),
        ({"q": "障害"}, ["IL-0102"]),
        ({"q": "NotReady", "lang": "en"}, ["IL-0101", "IL-0103"]),
        ({"org": "harbor-bank", "since": "2023-01-01"}, ["IL-0103"]),
        ({"root_cause": "config-change"}, ["IL-0104"]),
        ({"symptom": ["nodes-not-ready", "request-timeouts"]}, ["IL-0103"]),
        ({"until": "2022-12-31"}, ["IL-0104"]),
    ],
)
def test_search_parameters(client: TestClient, params: dict[str, object], expected: list[str]) -> None:
    body = client.get("/api/incidents", params=params).json()  # type: ignore[arg-type]
    assert sorted(item["id"] for item in body["items"]) == sorted(expected)


def test_bad_parameters_are_one_clear_error(client: TestClient) -> None:
    response = client.get("/api/incidents", params={"component": "node"})
    assert response.status_code == 422
    assert "did you mean node-image" in response.json()["detail"]
    assert client.get("/api/incidents", params={"since": "yesterday"}).status_code == 422
    assert client.get("/api/incidents", params={"page": 0}).status_code == 422
    assert client.get("/api/incidents", params={"page_size": 1000}).status_code == 422


def test_one_incident_and_its_related(client: TestClient) -> None:
    body = client.get("/api/incidents/IL-0101").json()
    assert body["record"]["id"] == "IL-0101"
    assert body["record"]["title"]["ko"].startswith("회수된 노드 AMI")
    related = client.get("/api/incidents/IL-0101/related").json()
    assert [r["id"] for r in related] == ["IL-0102", "IL-0103"]
    assert related[0]["why"] == ["same root cause: upgrade-migration", "shared components: node-image"]
    assert related == body["related"]
    assert client.get("/api/incidents/IL-0999").status_code == 404
    assert client.get("/api/incidents/IL-0999/related").status_code == 404


def test_topics_newest_first(client: TestClient) -> None:
    body = client.get("/api/topics/component/kubelet").json()
    assert [item["id"] for item in body["items"]] == ["IL-0101", "IL-0103"]
    assert body["labels"]["en"] and body["labels"]["ko"]
    assert client.get("/api/topics/root_causes/upgrade-migration").json()["total"] == 2
    assert client.get("/api/topics/component/toaster").status_code == 404
    assert client.get("/api/topics/colour/red").status_code == 404


def test_vocab_with_english_and_korean_labels(client: TestClient) -> None:
    everything = client.get("/api/vocab").json()["kinds"]
    assert set(everything) == {"root_cause", "component", "contributing", "symptom", "domain", "severity"}
    components = client.get("/api/vocab/component").json()["kinds"]["component"]
    assert all(term["labels"].get("en") and term["labels"].get("ko") for term in components)
    assert client.get("/api/vocab/colour").status_code == 404


def test_json_lines_dump_of_all_records(client: TestClient) -> None:
    response = client.get("/api/incidents.jsonl")
    assert response.headers["content-type"].startswith("application/x-ndjson")
    lines = response.text.splitlines()
    assert [json.loads(line)["id"] for line in lines] == [
        "IL-0042",
        "IL-0101",
        "IL-0102",
        "IL-0103",
        "IL-0104",
    ]


def test_read_only(client: TestClient) -> None:
    assert client.post("/api/incidents", json={}).status_code == 405
    assert client.delete("/api/incidents/IL-0101").status_code == 405
    methods = {m for route in client.app.routes for m in getattr(route, "methods", set())}  # type: ignore[attr-defined]
    assert methods <= {"GET", "HEAD"}


def test_an_edit_shows_on_the_next_request(client: TestClient, library_settings: Settings) -> None:
    path = library_settings.records_dir / "IL-0104.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["components"] = ["dns", "kubelet"]
    write_text(path, json.dumps(data, indent=2) + "\n")  # by rename, as git and editors write
    body = client.get("/api/incidents", params={"component": "kubelet"}).json()
    assert sorted(item["id"] for item in body["items"]) == ["IL-0101", "IL-0103", "IL-0104"]


def test_pages_show_the_same_records_in_english_and_korean(client: TestClient) -> None:
    assert client.get("/", follow_redirects=False).headers["location"] == "/library/"
    to_ko = client.get(
        "/library/", headers={"Accept-Language": "ko-KR,ko;q=0.9,en;q=0.5"}, follow_redirects=False
    )
    assert to_ko.headers["location"] == "/library/ko/"
    assert client.get("/library/", follow_redirects=False).headers["location"] == "/library/en/"

    api_ids = [
        i["id"] for i in client.get("/api/incidents", params={"component": "node-image"}).json()["items"]
    ]
    for ui, heading in (("en", "Incident library"), ("ko", "장애 사례 라이브러리")):
        page = client.get(f"/library/{ui}/", params={"component": "node-image"})
        assert page.status_code == 200
        assert f'<html lang="{ui}">' in page.text and heading in page.text
        assert ids_in(page.text) == api_ids
    assert ids_in(client.get("/library/ko/", params={"q": "커널"}).text) == ["IL-0101"]
    narrowed = client.get("/library/en/", params={"q": "zone", "org": "harbor-bank"}).text
    assert ids_in(narrowed) == ["IL-0104"]
    assert '<input type="hidden" name="org" value="harbor-bank">' in narrowed  # kept when the words change
    everything = client.get("/library/en/").text
    assert "since=2024-01-01&amp;until=2024-12-31" in everything  # the year facet narrows by date

    ko = client.get("/library/ko/incidents/IL-0101").text
    assert '<h1 lang="ko">회수된 노드 AMI' in ko
    assert "근본 원인" in ko  # Korean interface
    assert 'lang="en"' in ko and "daily node rollover" in ko  # the record's English text too
    assert "https://tech.nimbus.example/ko/2024/ami-rollover" in ko
    assert 'href="/library/ko/incidents/IL-0102"' in ko  # related, linked
    assert 'href="/library/ko/topics/component/node-image"' in ko
    assert "같은 원인" in ko  # why it is related, in the interface language
    en = client.get("/library/en/incidents/IL-0101").text
    assert "Root cause" in en and '<h1 lang="ko">' in en  # only Korean title: shown in Korean
    assert 'href="/library/ko/incidents/IL-0101"' in en  # the switch to the other language

    topic = client.get("/library/ko/topics/component/kubelet")
    assert ids_in(topic.text) == ["IL-0101", "IL-0103"]
    assert client.get("/library/en/incidents/IL-0999").status_code == 404
    assert client.get("/library/fr/").status_code == 404  # no such pages: an HTML page says where they are
    assert client.get("/library/static/library.css").headers["content-type"].startswith("text/css")


def test_pages_escape_record_text(client: TestClient, library_settings: Settings) -> None:
    path = library_settings.records_dir / "IL-0104.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["title"] = {"en": "<script>alert(1)</script> zone change"}
    write_text(path, json.dumps(data) + "\n")
    html = client.get("/library/en/incidents/IL-0104").text
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html


def test_pages_mark_the_match_and_count_in_the_singular(client: TestClient) -> None:
    page = client.get("/library/en/", params={"q": "leaks"}).text
    assert "<mark>leak</mark>" in page
    assert ">1 incident<" in page
    assert ">1 incident<" in client.get("/library/en/topics/root_cause/config-change").text
    assert "사례 1건" in client.get("/library/ko/", params={"q": "leak"}).text
    assert ">2 incidents<" in client.get("/library/en/", params={"q": "NotReady"}).text
