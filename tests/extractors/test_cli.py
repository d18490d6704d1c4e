"""`incidents extract PAGE`: json, text and markdown output; bad input exits 1 with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import run
from tests.extractors.conftest import PAGES


def test_json_is_the_document(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(
        capsys, "extract", str(PAGES / "en-blog-outage.html"), "--url", "https://eng.northwind.example/x"
    )
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["url"] == "https://eng.northwind.example/x" and doc["language"] == "en"
    assert doc["extractor"]["name"] == "trafilatura" and doc["sections"][0]["role"] == "summary"
    text = doc["text"]
    assert all(text[b["start"] : b["end"]] for b in doc["blocks"])


def test_text_format(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "extract", str(PAGES / "ko-blog-outage.euckr.html"), "--format", "text")
    assert result.code == 0 and result.out.startswith("2023년 10월 30일 오후")
    assert "\n1. 장애 개요\n" in result.out and "## " not in result.out


def test_markdown_format(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "extract", str(PAGES / "ja-blog-outage.sjis.html"), "--format", "markdown")
    assert result.code == 0
    lines = result.out.splitlines()
    assert "## 時系列" in lines and "- 13:05 画像の表示エラーに関する問い合わせを受け付けました。" in lines


def test_markdown_and_text_sources(capsys: pytest.CaptureFixture[str]) -> None:
    md = json.loads(run(capsys, "extract", str(PAGES / "en-incident-log.md")).out)
    txt = json.loads(run(capsys, "extract", str(PAGES / "ja-mail-report.signed.iso2022jp.txt")).out)
    assert md["extractor"]["name"] == "markdown" and md["author"] == "Priya Raman"
    assert txt["extractor"]["name"] == "plain" and txt["language"] == "ja"


def test_bad_input_exits_1_with_reason(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"")
    binary = tmp_path / "image.html"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    assert run(capsys, "extract", str(empty)).err.strip() == "error: empty page"
    result = run(capsys, "extract", str(binary))
    assert result.code == 1 and result.err.strip() == "error: binary content"
    missing = run(capsys, "extract", str(tmp_path / "nope.html"))
    assert missing.code == 1 and "no such file" in missing.err


def test_bad_format_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "extract", str(PAGES / "en-blog-outage.html"), "--format", "pdf").code == 2


def test_cli_module_does_not_import_prefect() -> None:
    source = (Path(__file__).resolve().parents[2] / "flows" / "cli" / "extract.py").read_text()
    assert "prefect" not in source
