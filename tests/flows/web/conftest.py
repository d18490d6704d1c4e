"""Fixtures for the web app: a data directory of real drafts, the app, a TestClient."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from flows.settings import Settings
from flows.web.app import create_app
from schema.draft import Draft
from tests.flows.web.drafts import build_queue


@pytest.fixture
def drafts(data_dir: Path) -> list[Draft]:
    """Ten drafts (en, ko, ja) and the script-in-title one, by the real drafter, archived in raw/."""
    return build_queue(data_dir)


@pytest.fixture
def settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir)


@pytest.fixture
def client(settings: Settings, drafts: list[Draft]) -> Iterator[TestClient]:
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as c:
        c.cookies.set("incidents_reviewer", "tess")  # the name this browser gave (the Reviewer box)
        yield c


def by_lang(drafts: list[Draft], lang: str) -> Draft:
    return next(d for d in drafts if d.source.language == lang)
