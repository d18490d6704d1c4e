"""Test isolation: Prefect in a temporary home with a real (test-harness) server, data dirs in tmp."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# Before anything imports prefect: its settings are read at import time.
_PREFECT_HOME = tempfile.mkdtemp(prefix="incidents-prefect-")
os.environ["PREFECT_HOME"] = _PREFECT_HOME
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ["PREFECT_LOGGING_LEVEL"] = "WARNING"
os.environ["PREFECT_SERVER_LOGGING_LEVEL"] = "CRITICAL"
os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "120"
os.environ.pop("PREFECT_API_URL", None)
for _key in [k for k in os.environ if k.startswith("INCIDENTS_")]:
    del os.environ[_key]

import pytest  # noqa: E402

DATA = Path(__file__).parent / "data"
SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture(scope="session")
def prefect_harness():
    """A real Prefect API for flow tests; started once, only by tests that ask for it."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty data directory, also exported as INCIDENTS_DATA_DIR for subprocesses."""
    root = tmp_path / "data"
    root.mkdir()
    monkeypatch.setenv("INCIDENTS_DATA_DIR", str(root))
    return root


@pytest.fixture
def shared() -> Path:
    """../shared, or skip: third-party material is for evaluations, never committed here."""
    if not SHARED.is_dir():
        pytest.skip(
            f"needs the third-party pages and gold labels of the evaluation kit, a folder `shared` "
            f"next to this checkout ({SHARED}); they are not in the repository, so this evaluation "
            "is skipped"
        )
    return SHARED


# A real PostgreSQL (tests/postgres.py): postgres_server, postgres_url, postgres_upgraded_url, and
# database_url (both backends).
from tests.postgres import database_url, postgres_server, postgres_upgraded_url, postgres_url  # noqa: E402, F401
