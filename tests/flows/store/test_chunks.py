"""Bulk lookups cut their URLs into statements SQLite accepts."""

from __future__ import annotations

import sqlite3

import pytest

from flows.store.database import MAX_VARIABLES, in_chunks


@pytest.mark.parametrize("lists", [1, 3])
def test_chunks_cover_every_distinct_value_once_within_the_variable_limit(lists: int) -> None:
    values = [f"https://blog.example.org/{n}" for n in range(2500)] + ["https://blog.example.org/7"]
    chunks = list(in_chunks(values, lists=lists))
    assert len(chunks) > 1
    seen = [v for chunk, _marks in chunks for v in chunk]
    assert sorted(seen) == sorted(set(values))
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (u TEXT, k TEXT)")
    for chunk, marks in chunks:
        assert marks.count("?") == len(chunk)
        others = ("a", "b", "c")  # the statement's own variables besides the lists
        params = (*others, *chunk * lists)
        assert len(params) <= MAX_VARIABLES
        ins = " OR ".join(f"u IN ({marks})" for _ in range(lists))
        db.execute(f"SELECT * FROM t WHERE k IN (?, ?, ?) AND ({ins})", params)


def test_no_values_no_statement() -> None:
    assert list(in_chunks([])) == []
