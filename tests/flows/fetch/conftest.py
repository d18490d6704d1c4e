"""Fixtures for fetch and archive tests: a loopback server and Settings with tiny bounds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.settings import Settings
from tests.httpserver import LoopbackServer

HOSTS = ("127.0.0.1", "127.0.0.2", "127.0.0.3")


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    """A running LoopbackServer answering on 127.0.0.1, .2 and .3 (same port)."""
    with LoopbackServer(HOSTS) as server:
        yield server


def fast_settings(data_dir: Path, **overrides: object) -> Settings:
    """Settings for tests: the loopback hosts allowed by name, tiny intervals and timeouts."""
    values: dict[str, object] = {
        "data_dir": data_dir,
        "allow_hosts": ",".join(HOSTS),
        "min_interval": 0.0,
        "retry_backoff": 0.01,
        "connect_timeout": 2.0,
        "read_timeout": 1.0,
        "total_timeout": 10.0,
        "max_retries": 3,
        "max_retry_after": 5.0,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
def settings(data_dir: Path) -> Settings:
    return fast_settings(data_dir)
