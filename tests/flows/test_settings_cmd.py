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


@pytest.mark.parametrize(
    ("variable", "value", "why"),
    [
        (
            "INCIDENTS_ALLOW_HOSTS",
            "127.0.0.1,10.0.0.0/33",
            "'10.0.0.0/33' is not a valid IP address or CIDR range",
        ),
        ("INCIDENTS_CONCURRENCY", "-1", "greater than or equal to 1"),
        ("INCIDENTS_DRAFT_TIMEOUT", "-5", "greater than or equal to 0"),
        ("INCIDENTS_CA_BUNDLE", "/nowhere/ca.pem", "/nowhere/ca.pem: no such file"),
        ("INCIDENTS_LLM_BASE_URL", "ftp://model.example/v1", "is not an http or https URL"),
    ],
)
def test_a_bad_value_is_refused_when_read_and_marked_by_settings(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, why: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(variable, value)
    # any command that reads settings: one line naming the variable, exit 2
    result = run(capsys, "archive", "list", "--data-dir", str(tmp_path))
    assert result.code == 2 and variable in result.err and why in result.err
    # `settings` still prints every setting, the bad one as given and marked
    result = run(capsys, "settings")
    assert result.code == 2
    lines = result.out.splitlines()
    at = lines.index(f"{variable}={value}  (environment)")
    assert lines[at + 1].startswith("    bad: ") and why in lines[at + 1]
    assert sum(line.startswith("INCIDENTS_") for line in lines) == len(Settings.model_fields)
    assert variable in result.err and "bad" in result.err
    rows = {row["name"]: row for row in json.loads(run(capsys, "settings", "--json").out)}
    assert rows[variable]["value"] == value and why in rows[variable]["problem"]
    assert all("problem" not in row for name, row in rows.items() if name != variable)


def test_plain_numbers_are_not_masked_as_secrets(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    rows = {row["name"]: row for row in json.loads(run(capsys, "settings", "--json").out)}
    assert rows["INCIDENTS_LLM_TOKEN_BUDGET"]["value"] == "60000"
    assert rows["INCIDENTS_LLM_MAX_TOKENS"]["value"] == "4096"


def test_host_names_and_ranges_in_allow_hosts_are_accepted() -> None:
    settings = Settings(allow_hosts="127.0.0.1, wiki.corp.example,10.20.0.0/16,::1,localhost")
    assert "wiki.corp.example" in settings.allow_hosts
