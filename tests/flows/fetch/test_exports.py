"""The public surface the ingest flow relies on: names exported, and where they come from."""

from __future__ import annotations

import inspect

import flows.archive
import flows.fetch


def test_fetch_exports() -> None:
    assert set(flows.fetch.__all__) >= {"Fetcher", "FetchResult", "canonicalize_url", "SourceGone"}
    for name in flows.fetch.__all__:
        value = getattr(flows.fetch, name)
        if inspect.isclass(value) or inspect.isfunction(value):  # Resolver is a type alias
            assert value.__module__.startswith("flows.fetch."), name


def test_archive_exports() -> None:
    assert set(flows.archive.__all__) >= {"Archive", "Capture"}
    methods = {"record_fetch", "store_resource", "import_warc", "read_payload", "latest", "get"}
    assert methods <= {name for name, _ in inspect.getmembers(flows.archive.Archive, inspect.isfunction)}


def test_capture_fields() -> None:
    fields = set(flows.archive.Capture.__dataclass_fields__)
    assert fields >= {
        "id", "url", "canonical_url", "captured_at", "status", "mime", "payload_sha256",
        "payload_digest", "warc_file", "offset", "length", "revisit_of",
    }  # fmt: skip


def test_fetch_result_fields() -> None:
    fields = set(flows.fetch.FetchResult.__dataclass_fields__)
    assert fields >= {
        "url", "final_url", "canonical_url", "rel_canonical", "status", "headers", "content_type",
        "body_path", "request_headers", "redirects", "timings", "robots", "outcome",
    }  # fmt: skip
