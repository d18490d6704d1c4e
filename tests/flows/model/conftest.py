from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.flows.model.stub import Stub, running


@pytest.fixture
def stub() -> Iterator[Stub]:
    with running() as server:
        yield server
