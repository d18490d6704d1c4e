"""`incidents serve`: the library app alone, as a real server on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from flows.settings import Settings
from tests.cli import run

ROOT = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_answers_read_only_on_loopback(library_settings: Settings) -> None:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [
        sys.executable,
        "-m",
        "flows",
        "serve",
        "--port",
        str(port),
        "--data-dir",
        str(library_settings.data_dir),
    ]
    server = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                response = httpx.get(f"{base}/api/incidents", params={"component": "kubelet"}, timeout=5)
                break
            except httpx.TransportError:
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                assert time.monotonic() < deadline, "incidents serve did not answer within 60 s"
                time.sleep(0.2)
        assert [item["id"] for item in response.json()["items"]] == ["IL-0101", "IL-0103"]
        assert httpx.get(f"{base}/library/ko/incidents/IL-0101", timeout=5).status_code == 200
        assert httpx.get(f"{base}/api/docs", timeout=5).status_code == 200
        assert httpx.post(f"{base}/api/incidents", timeout=5).status_code == 405
        # No review routes in the library app.
        assert httpx.get(f"{base}/queue", timeout=5).status_code == 404
    finally:
        server.terminate()
        out, _ = server.communicate(timeout=30)
    assert "library: 5 record(s)" in out
    assert f"http://127.0.0.1:{port}/library/" in out


def test_export_names_a_bad_record_and_exits_1(
    library_settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    (library_settings.records_dir / "IL-0300.json").write_text('{"id": "IL-0300"}', encoding="utf-8")
    out = library_settings.data_dir.parent / "site"
    result = run(capsys, "export", "--site", str(out), "--data-dir", str(library_settings.data_dir))
    assert result.code == 1
    assert "warning: records/IL-0300.json left out: " in result.err
    assert "exported 5 record(s)" in result.out  # the good ones are all there
    assert (out / "en" / "incidents" / "IL-0042.html").is_file()


def test_export_needs_a_folder(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "export")
    assert result.code == 2
    assert "--site" in result.err
