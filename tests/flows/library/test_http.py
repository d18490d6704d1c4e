"""The library app over real HTTP (uvicorn on 127.0.0.1): HEAD, ETag and 304, Cache-Control, CORS by
setting, the OpenAPI schema where the README says, HTML error pages, and one search on every front."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
import uvicorn

from flows.library.app import create_library_app
from flows.settings import Settings


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(settings: Settings) -> Iterator[str]:
    port = _free_port()
    config = uvicorn.Config(create_library_app(settings), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def base(library_settings: Settings) -> Iterator[str]:
    with serving(library_settings) as url:
        yield url


ROUTES = [
    "/api/incidents?q=kubelet",
    "/api/incidents/IL-0101",
    "/api/incidents/IL-0101/related",
    "/api/topics/component/kubelet",
    "/api/vocab",
    "/api/vocab/component",
    "/api/incidents.jsonl",
    "/openapi.json",
    "/api/openapi.json",
    "/api/docs",
    "/library/en/",
    "/library/ko/?q=커널",
    "/library/en/incidents/IL-0101",
    "/library/ko/topics/component/kubelet",
    "/library/static/library.css",
]


@pytest.mark.parametrize("path", ROUTES)
def test_head_answers_like_get_without_a_body(base: str, path: str) -> None:
    got = httpx.get(base + path)
    head = httpx.head(base + path)
    assert got.status_code == head.status_code == 200, path
    assert head.content == b""
    assert head.headers.get("content-type") == got.headers.get("content-type")
    assert head.headers.get("etag") == got.headers.get("etag")


@pytest.mark.parametrize("path", [p for p in ROUTES if not p.endswith(".jsonl")])
def test_etag_and_cache_control_and_304(base: str, path: str) -> None:
    first = httpx.get(base + path)
    etag = first.headers["etag"]
    assert etag.startswith('"') and first.headers["cache-control"]
    again = httpx.get(base + path, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag
    assert httpx.get(base + path, headers={"If-None-Match": '"other"'}).status_code == 200


def test_an_approved_record_changes_the_etag(base: str, library_settings: Settings) -> None:
    import json

    first = httpx.get(base + "/api/incidents")
    record = json.loads((library_settings.records_dir / "IL-0104.json").read_text(encoding="utf-8"))
    record["id"] = "IL-0105"
    (library_settings.records_dir / "IL-0105.json").write_text(json.dumps(record), encoding="utf-8")
    second = httpx.get(base + "/api/incidents", headers={"If-None-Match": first.headers["etag"]})
    assert second.status_code == 200 and second.json()["total"] == 6


def test_cache_control_keeps_the_stylesheet_longer(base: str) -> None:
    assert httpx.get(base + "/api/incidents").headers["cache-control"] == "public, no-cache"
    assert "max-age=86400" in httpx.get(base + "/library/static/library.css").headers["cache-control"]


def test_no_cors_unless_a_setting_allows_an_origin(base: str, library_settings: Settings) -> None:
    origin = {"Origin": "https://reader.example"}
    assert "access-control-allow-origin" not in httpx.get(base + "/api/incidents", headers=origin).headers
    allowed = Settings(data_dir=library_settings.data_dir, library_cors_origins="https://reader.example")
    with serving(allowed) as other:
        answer = httpx.get(other + "/api/incidents", headers=origin)
        assert answer.headers["access-control-allow-origin"] == "https://reader.example"
        preflight = httpx.options(
            other + "/api/incidents",
            headers={
                **origin,
                "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "If-None-Match",
            },
        )
        assert preflight.status_code == 200 and "GET" in preflight.headers["access-control-allow-methods"]
        stranger = httpx.get(other + "/api/incidents", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in stranger.headers


def test_the_openapi_schema_is_where_the_readme_says(base: str) -> None:
    schema = httpx.get(base + "/openapi.json").json()
    assert "/api/incidents" in schema["paths"]
    assert httpx.get(base + "/api/openapi.json").json() == schema
    assert "href=/openapi.json" in httpx.get(base + "/api/docs").text


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/library/en/?component=node", 422, "did you mean node-image"),
        ("/library/ko/?page=first", 422, "page must be a whole number"),
        ("/library/en/topics/component/toaster", 404, "toaster"),
        ("/library/fr/", 404, "/library/en/"),
    ],
)
def test_a_bad_filter_on_a_page_is_an_html_page(base: str, path: str, status: int, words: str) -> None:
    answer = httpx.get(base + path)
    assert answer.status_code == status
    assert answer.headers["content-type"].startswith("text/html")
    assert words in answer.text and "<!doctype html>" in answer.text
    # The API keeps its JSON errors.
    api = httpx.get(base + "/api/incidents", params={"component": "node"})
    assert api.status_code == 422 and "did you mean node-image" in api.json()["detail"]


@pytest.mark.parametrize(
    ("q", "expected"),
    [("인증서", ["IL-0042"]), ("証明書", ["IL-0042"]), ("certificates", ["IL-0042"]), ("cert*", ["IL-0042"])],
)
def test_labels_stems_and_prefixes_on_the_api_and_the_pages(base: str, q: str, expected: list[str]) -> None:
    import re

    api = httpx.get(base + "/api/incidents", params={"q": q}).json()
    assert [item["id"] for item in api["items"]] == expected
    assert api["items"][0]["snippet"] and "<mark>" in api["items"][0]["snippet"]
    page = httpx.get(base + "/library/en/", params={"q": q}).text
    assert re.findall(r'data-id="(IL-\d+)"', page) == expected
    assert ">1 incident<" in page
