"""The archive index answers its per-source lookups from indexes, never by scanning every capture."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import flows.store.database as sqlite_module
from flows.archive.capture import Capture
from flows.archive.index import Index

KINDS = ("response", "resource", "imported")


@pytest.fixture
def plans(tmp_path: Path):  # type: ignore[no-untyped-def]
    """The index, and the query plan of every statement it runs."""
    index = Index(tmp_path / "index.sqlite")
    seen: list[str] = []
    index.database.connection.set_trace_callback(seen.append)  # to see the SQL the methods run

    def plan_of_last() -> str:
        probe = sqlite3.connect(tmp_path / "index.sqlite")
        # Traced SQL has its parameters inlined; the plan is the same for literals.
        rows = probe.execute("EXPLAIN QUERY PLAN " + seen[-1]).fetchall()
        probe.close()
        return " | ".join(row[-1] for row in rows)

    yield index, plan_of_last
    index.close()


@pytest.mark.parametrize(
    "lookup",
    [
        lambda ix: ix.latest("https://blog.example.org/p", kinds=("response", "resource", "imported")),
        lambda ix: ix.get("c-0123456789abcdef0123"),
        lambda ix: ix.by_record_id("<urn:uuid:0>"),
        lambda ix: ix.with_digest("https://blog.example.org/p", "sha1:X"),
        lambda ix: ix.link_check("https://blog.example.org/p"),
        lambda ix: ix.latest_many(["https://blog.example.org/p", "https://blog.example.org/q"], kinds=KINDS),
    ],
    ids=["latest", "get", "by_record_id", "with_digest", "link_check", "latest_many"],
)
def test_lookups_use_an_index(plans, lookup) -> None:  # type: ignore[no-untyped-def]
    index, plan_of_last = plans
    lookup(index)
    plan = plan_of_last()
    assert "SCAN captures" not in plan and "SCAN link_checks" not in plan, plan


def _capture(
    n: int, url: str, canonical: str, at: str, kind: str = "response", requested: str | None = None
) -> Capture:
    return Capture(
        id=f"c-{n:020d}",
        url=url,
        canonical_url=canonical,
        captured_at=at,
        status=200,
        mime="text/html",
        payload_sha256=None,
        payload_digest=None,
        warc_file="warcs/a.warc.gz",
        offset=n,
        length=1,
        revisit_of=None,
        kind=kind,  # type: ignore[arg-type]
        record_id=f"<urn:uuid:{n}>",
        requested_url=requested,
    )


def test_latest_many_answers_as_latest_does_for_each_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 2 URLs a query (three lists of them): several chunks, and a URL's rows in more than one
    monkeypatch.setattr(sqlite_module, "MAX_VARIABLES", 15)
    a, b, c, d = (f"https://blog.example.org/{x}" for x in "abcd")
    captures = [
        _capture(1, a + "?utm=1", a, "2026-01-01T00:00:00Z"),
        _capture(2, a, a, "2026-01-02T00:00:00Z"),
        _capture(3, a, a, "2026-01-02T00:00:00Z"),  # same time: the later row wins
        _capture(4, a, a, "2026-01-03T00:00:00Z", kind="request"),  # not a payload kind
        _capture(5, c, c, "2026-01-01T00:00:00Z", requested=b),  # b redirected to c
        _capture(6, d + "/", d, "2026-01-05T00:00:00Z", kind="imported"),
        _capture(7, b, b, "2025-12-31T00:00:00Z"),
    ]
    index = Index(tmp_path / "index.sqlite")
    with index.transaction() as db:
        for capture in captures:
            Index.insert(db, capture)
    asked = [a, a + "?utm=1", b, c, d, d + "/", "https://blog.example.org/none"]
    many = index.latest_many(asked, kinds=KINDS)
    for url in asked:
        assert many.get(url) == index.latest(url, kinds=KINDS), url
    assert many[a].id == "c-00000000000000000003" and many[b].id == "c-00000000000000000005"
    assert "https://blog.example.org/none" not in many
    index.close()
