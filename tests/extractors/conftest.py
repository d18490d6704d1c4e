"""Fixture pages for the extractor tests (tests/data/pages, written for these tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

PAGES = Path(__file__).resolve().parents[1] / "data" / "pages"


@pytest.fixture
def page() -> object:
    """page(name) -> the fixture's bytes."""

    def read(name: str) -> bytes:
        return (PAGES / name).read_bytes()

    return read
