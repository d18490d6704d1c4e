"""The public names others build on import from this repository and keep their shape."""

from __future__ import annotations

import inspect
from pathlib import Path

import extractors
import schema
from extractors import ExtractOptions, extract_document
from extractors.decode import decode_bytes
from extractors.sentences import split_sentences
from schema.headings import heading_role

ROOT = Path(__file__).resolve().parents[2]


def test_packages_are_ours_not_pypi_namesakes() -> None:
    assert Path(extractors.__file__).resolve().is_relative_to(ROOT)
    assert Path(schema.__file__).resolve().is_relative_to(ROOT)


def test_exported_names() -> None:
    assert {"extract_document", "ExtractOptions"} <= set(extractors.__all__)
    params = inspect.signature(extract_document).parameters
    assert list(params) == ["data", "url", "content_type", "options"]
    keyword_only = inspect.Parameter.KEYWORD_ONLY
    assert all(params[name].kind is keyword_only for name in ("url", "content_type", "options"))
    assert list(inspect.signature(decode_bytes).parameters) == ["data", "content_type"]
    assert list(inspect.signature(split_sentences).parameters) == ["text", "lang", "start", "end"]
    assert list(inspect.signature(heading_role).parameters) == ["heading", "lang"]


def test_options_are_frozen() -> None:
    options = ExtractOptions()
    try:
        options.fast = False  # type: ignore[misc]
    except AttributeError:
        return
    raise AssertionError("ExtractOptions must be frozen")


def test_extractors_do_no_io_and_import_nothing_upward() -> None:
    import ast

    banned = {"flows", "prefect", "httpx", "requests", "urllib.request", "socket", "subprocess"}
    for path in (ROOT / "extractors").rglob("*.py"):
        if "draft" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                bad = any(name == b or name.startswith(b + ".") for b in banned)
                assert not bad, f"{path}: imports {name}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id != "open", f"{path}: open()"


def test_draft_page_is_one_call_and_deterministic() -> None:
    from datetime import UTC, datetime

    from extractors import DraftResult, draft_page

    params = inspect.signature(draft_page).parameters
    assert list(params)[:4] == ["data", "url", "content_type", "now"]
    assert all(params[name].kind is inspect.Parameter.KEYWORD_ONLY for name in list(params)[1:])
    data = (ROOT / "examples" / "postmortem.html").read_bytes()
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    first = draft_page(data, url="https://example.org/postmortem/", content_type="text/html", now=now)
    again = draft_page(data, url="https://example.org/postmortem/", content_type="text/html", now=now)
    assert isinstance(first, DraftResult)
    assert first.draft == again.draft
    assert first.draft.history[0].at == "2026-01-02T03:04:05.000000Z"
    for items in first.draft.evidence.values():
        for ev in items:
            assert first.document.text[ev.start : ev.end] == ev.quote
    # A different page body is a different snapshot: a different draft id.
    other = draft_page(data + b"<!-- x -->", url="https://example.org/postmortem/", now=now)
    assert other.draft.draft_id != first.draft.draft_id
