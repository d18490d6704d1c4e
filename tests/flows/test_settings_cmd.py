"""`incidents settings`: every setting with its value, source and help; secrets masked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.settings import Settings
from tests.cli import run


def test_every_setting_has_a_line_of_help() -> None:
    assert all(field.description for field in Settings.model_fields.values())


def test_settings_show_value_source_and_help_allow_hosts_first(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("INCIDENTS_MIN_INTERVAL=0.25\nINCIDENTS_LLM_API_KEY=sk-very-secret\n")
    monkeypatch.setenv("INCIDENTS_ALLOW_HOSTS", "127.0.0.1")
    result = run(capsys, "settings", "--json")
    assert result.code == 0, result.err
    rows = {row["name"]: row for row in json.loads(result.out)}
    assert next(iter(rows)) == "INCIDENTS_ALLOW_HOSTS"
    assert rows["INCIDENTS_ALLOW_HOSTS"] | {"help": ""} == {
        "name": "INCIDENTS_ALLOW_HOSTS",
        "value": "127.0.0.1",
        "source": "environment",
        "help": "",
    }
    assert "loopback" in rows["INCIDENTS_ALLOW_HOSTS"]["help"]
    assert (rows["INCIDENTS_MIN_INTERVAL"]["value"], rows["INCIDENTS_MIN_INTERVAL"]["source"]) == (
        "0.25",
        ".env",
    )
    assert rows["INCIDENTS_CONCURRENCY"]["source"] == "default"
    assert rows["INCIDENTS_LLM_API_KEY"]["value"] == "********"
    assert "sk-very-secret" not in result.out
    assert set(rows) == {f"INCIDENTS_{name.upper()}" for name in Settings.model_fields}
    text = run(capsys, "settings")
    assert "sk-very-secret" not in text.out
    assert text.out.splitlines()[0] == "INCIDENTS_ALLOW_HOSTS=127.0.0.1  (environment)"


def test_help_names_the_settings_a_curator_needs_first(capsys) -> None:
    result = run(capsys, "--help")
    words = " ".join(result.out.split())  # rich wraps the text to the terminal
    assert "INCIDENTS_ALLOW_HOSTS (loopback and intranet hosts are refused unless listed" in words
    assert "incidents settings" in words


def test_the_library_base_url_is_unset_by_default() -> None:
    assert Settings().library_base_url == ""


def test_secrets_are_masked_where_settings_are_serialised() -> None:
    # Prefect stores a flow run's parameters, Settings among them, in its database as JSON.
    settings = Settings(review_token="s3cret-token", llm_api_key="k3y-value")
    dumped = settings.model_dump_json()
    assert "s3cret-token" not in dumped and "k3y-value" not in dumped
    assert settings.review_token.get_secret_value() == "s3cret-token"
