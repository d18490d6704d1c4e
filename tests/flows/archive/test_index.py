"""The archive index answers its per-source lookups from indexes, never by scanning every capture."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from flows.archive.index import Index


@pytest.fixture
def plans(tmp_path: Path):  # type: ignore[no-untyped-def]
    """The index, and the query plan of every statement it runs."""
    index = Index(tmp_path / "index.sqlite")
    seen: list[str] = []
    index._db.set_trace_callback(seen.append)  # noqa: SLF001 - to see the SQL the methods run

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
    ],
    ids=["latest", "get", "by_record_id", "with_digest", "link_check"],
)
def test_lookups_use_an_index(plans, lookup) -> None:  # type: ignore[no-untyped-def]
    index, plan_of_last = plans
    lookup(index)
    plan = plan_of_last()
    assert "SCAN captures" not in plan and "SCAN link_checks" not in plan, plan
