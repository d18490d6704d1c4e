"""raw/ledger.sqlite: per source URL, the bytes drafted and the draft made from them."""

from __future__ import annotations

from pathlib import Path

import pytest

import flows.store.database as sqlite_module
from flows.store.ledger import Entry, Ledger


def test_get_many_answers_as_get_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_module, "MAX_VARIABLES", 11)  # 2 URLs a query: several queries
    ledger = Ledger(tmp_path / "ledger.sqlite")
    urls = [f"https://blog.example.org/{n}" for n in range(5)]
    for n, url in enumerate(urls[:4]):
        ledger.put(Entry(url, f"sha256:{n}", f"d-{n}", None, skipped="not a postmortem" if n == 2 else None))
    ledger.put(Entry(urls[0], "sha256:new", "d-new", "c-1"))  # replaced, not added
    asked = [*urls, urls[1]]
    many = ledger.get_many(asked)
    assert sorted(many) == urls[:4]
    assert all(many[url] == ledger.get(url) for url in urls[:4])
    assert many[urls[0]].draft_id == "d-new" and many[urls[2]].skipped == "not a postmortem"
    ledger.close()
