"""Fixtures for archive tests: the loopback server and fast Settings of the fetch tests."""

from __future__ import annotations

from tests.flows.fetch.conftest import loopback, settings  # noqa: F401 - pytest fixtures
