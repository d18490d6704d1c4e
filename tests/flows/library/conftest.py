from __future__ import annotations

from pathlib import Path

import pytest

from flows.settings import Settings
from tests.flows.library.records import write_records


@pytest.fixture
def library_settings(data_dir: Path) -> Settings:
    """A data directory holding the test records."""
    write_records(data_dir / "records")
    return Settings(data_dir=data_dir)
