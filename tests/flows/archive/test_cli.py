"""`incidents archive list|show|refresh|export` in-process, against a loopback server."""

from __future__ import annotations

import gzip
import hashlib
import json
import socket
import zipfile
from pathlib import Path

import pytest

from flows.archive import Archive
from flows.archive.refresh import refresh_one
from flows.fetch import Fetcher
from flows.settings import Settings
from tests.cli import run
from tests.flows.archive.helpers import archive_page
from tests.flows.fetch.conftest import HOSTS, fast_settings
from tests.httpserver import LoopbackServer, Reply

KOREAN = "<html><body>장애 보고서</body></html>".encode("euc-kr")


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> Path:
    """The CLI builds Settings from the environment, as in production."""
    monkeypatch.setenv("INCIDENTS_ALLOW_HOSTS", ",".join(HOSTS))
    monkeypatch.setenv("INCIDENTS_MIN_INTERVAL", "0")
    monkeypatch.setenv("INCIDENTS_RETRY_BACKOFF", "0.01")
    return data_dir


def test_list_and_show(settings: Settings, loopback: LoopbackServer, env: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        capture = archive_page(fetcher, archive, loopback, "/ko", KOREAN, "text/html; charset=EUC-KR")
        archive.store_resource(b"# notes\n", url="file:///tmp/notes.md", content_type="text/markdown")
    listed = run(capsys, "archive", "list")
    assert listed.code == 0 and len(listed.out.splitlines()) == 2 and capture.id in listed.out
    as_json = json.loads(run(capsys, "archive", "list", "--json", "--url", loopback.url("/")).out)
    assert [c["id"] for c in as_json] == [capture.id]
    shown = run(capsys, "archive", "show", capture.id)
    assert shown.code == 0 and "장애 보고서" in shown.out and "text/html; charset=EUC-KR" in shown.out
    by_url = run(capsys, "archive", "show", loopback.url("/ko"))
    assert by_url.out == shown.out
    missing = run(capsys, "archive", "show", "c-nothing")
    assert missing.code == 1 and "archive list" in missing.err


def test_show_raw_prints_the_exact_bytes(
    settings: Settings, loopback: LoopbackServer, env: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    from flows.cli import main

    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        capture = archive_page(fetcher, archive, loopback, "/ko", KOREAN, "text/html; charset=EUC-KR")
    capfdbinary.readouterr()
    assert main(["archive", "show", capture.id, "--raw"]) == 0
    assert capfdbinary.readouterr().out == KOREAN


def test_refresh_unchanged_changed_gone(
    settings: Settings, loopback: LoopbackServer, env: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    loopback.route(
        "/same", [Reply(body=b"<p>s</p>", headers={"Content-Type": "text/html", "ETag": '"1"'}), Reply(304)]
    )
    loopback.route(
        "/edit",
        [
            Reply(body=b"<p>v1</p>", headers={"Content-Type": "text/html"}),
            Reply(body=b"<p>v2</p>", headers={"Content-Type": "text/html"}),
        ],
    )
    loopback.route("/rot", [Reply(body=b"<p>r</p>", headers={"Content-Type": "text/html"}), Reply(410)])
    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        for path in ("/same", "/edit", "/rot"):
            result = fetcher.fetch(loopback.url(path))
            archive.record_fetch(result)
            result.discard()
        before = archive.latest(loopback.url("/edit"))
    out = run(capsys, "archive", "refresh", "--all")
    assert out.code == 1  # something changed or is gone: a person should look
    lines = sorted(out.out.splitlines())
    assert lines[0].startswith(f"changed {loopback.url('/edit')} c-") and f"(was {before.id})" in lines[0]
    assert lines[1].startswith(f"gone {loopback.url('/rot')} (HTTP 410; first seen gone 20")
    assert lines[2] == f"unchanged {loopback.url('/same')} (304 Not Modified)"
    assert loopback.hits("/same")[1].headers["If-None-Match"] == '"1"'
    with Archive(settings) as archive:
        assert archive.read_payload(archive.latest(loopback.url("/edit")).id) == b"<p>v2</p>"  # type: ignore[union-attr]
        first_gone = archive.index.link_check(loopback.url("/rot"))["first_gone_at"]  # type: ignore[index]
    again = run(capsys, "archive", "refresh", loopback.url("/rot"), "--json")
    (item,) = json.loads(again.out)
    assert item["result"] == "gone" and item["first_gone_at"] == first_gone  # the first date is kept


def test_refresh_reports_dns_failure_as_gone(
    settings: Settings, loopback: LoopbackServer, data_dir: Path
) -> None:
    with Archive(settings) as archive:
        archive.store_resource(b"<p>x</p>", url="https://vanished.example/post", content_type="text/html")

    def resolver(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with Archive(settings) as archive, Fetcher(fast_settings(data_dir), resolver=resolver) as fetcher:
        item = refresh_one(archive, fetcher, "https://vanished.example/post")
    assert item.result == "gone" and item.detail == "host name does not resolve" and item.first_gone_at


def test_refresh_needs_urls_or_all(env: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert run(capsys, "archive", "refresh").code == 2


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Fail any connection or name lookup beyond loopback (py-wacz and frictionless must not)."""
    attempts: list[object] = []
    real_connect, real_lookup = socket.socket.connect, socket.getaddrinfo

    def connect(self: socket.socket, address: object) -> None:
        if isinstance(address, tuple) and not str(address[0]).startswith("127."):
            attempts.append(address)
            raise OSError(f"test is offline: connect to {address}")
        real_connect(self, address)  # type: ignore[arg-type]

    def lookup(host: object, *args: object, **kwargs: object) -> object:
        if host not in (None, "localhost") and not str(host).startswith("127."):
            attempts.append(host)
            raise socket.gaierror(f"test is offline: lookup of {host}")
        return real_lookup(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    return attempts


def test_export_wacz(
    settings: Settings, loopback: LoopbackServer, env: Path, tmp_path: Path, capsys, offline: list[object]
) -> None:  # type: ignore[no-untyped-def]
    page = b"<html><head><title>Queue outage | Tidewater Blog</title></head><body><h1>Queue outage</h1></body></html>"
    saved = tmp_path / "saved.html"
    saved.write_bytes(b"<html><title>Saved</title><p>saved</p></html>")
    with Fetcher(settings) as fetcher, Archive(settings) as archive:
        archive_page(fetcher, archive, loopback, "/p", page)
        archive.store_resource(
            saved.read_bytes(), url=saved.as_uri(), content_type="text/html", source_path=str(saved)
        )
    out = tmp_path / "export" / "raw.wacz"
    result = run(capsys, "archive", "export", "--wacz", str(out))
    assert result.code == 0, result.err
    with zipfile.ZipFile(out) as wacz:
        names = set(wacz.namelist())
        pages = wacz.read("pages/pages.jsonl").decode().splitlines()
        package = json.loads(wacz.read("datapackage.json"))
        digest = json.loads(wacz.read("datapackage-digest.json"))
        everything = b"".join(wacz.read(name) for name in names)
        indexes = {n: wacz.read(n) for n in names if n.startswith("indexes/") and "cdx" in n}
    assert {"datapackage.json", "datapackage-digest.json", "pages/pages.jsonl"} <= names
    assert any(n.startswith("archive/") and n.endswith(".warc.gz") for n in names)
    listed = [json.loads(line) for line in pages[1:]]
    assert [(p["url"], p["title"]) for p in listed] == [(loopback.url("/p"), "Queue outage")]  # no urn:
    assert package["title"] == "Incident postmortems" and "1 web pages" in package["description"]
    assert package["software"].startswith("incident-ingest ") and "py-wacz" in package["software"]
    with zipfile.ZipFile(out) as wacz:
        assert digest["hash"] == "sha256:" + hashlib.sha256(wacz.read("datapackage.json")).hexdigest()
    assert str(tmp_path).encode() not in everything and b"file://" not in everything  # no local paths
    index_text = "".join(
        (gzip.decompress(v) if n.endswith(".gz") else v).decode() for n, v in indexes.items()
    )
    assert ")/p " in index_text  # the page's capture is indexed (cdxj: urlkey, timestamp, fields)
    assert "application/json" not in index_text and "warc-fields" not in index_text  # no metadata capture
    from wacz.main import main as wacz_main

    assert wacz_main(["validate", "-f", str(out)]) == 0
    assert offline == []  # nothing tried to reach the network


def test_export_needs_a_target(env: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    result = run(capsys, "archive", "export")
    assert result.code == 2 and "--wacz OUT.wacz" in result.err
