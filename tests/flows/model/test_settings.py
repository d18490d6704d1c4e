"""The model's settings: off by default, the key never shown, every field described."""

from __future__ import annotations

import pytest

from flows.settings import Settings


def test_off_by_default_with_english_and_korean() -> None:
    settings = Settings()
    assert settings.llm_base_url == "" and settings.llm_language_list == ("en", "ko")


def test_the_key_is_read_from_the_environment_and_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INCIDENTS_LLM_API_KEY", "sk-live-abcdef")
    monkeypatch.setenv("INCIDENTS_LLM_LANGUAGES", " ko, EN ,ko,ja ")
    settings = Settings()
    assert settings.llm_api_key.get_secret_value() == "sk-live-abcdef"
    for shown in (
        repr(settings),
        str(settings),
        settings.model_dump_json(),
        str(settings.model_dump(mode="json")),
    ):
        assert "sk-live" not in shown
    assert settings.llm_language_list == ("ko", "en", "ja")


def test_every_model_setting_says_what_it_does() -> None:
    fields = {name: f for name, f in Settings.model_fields.items() if name.startswith("llm_")}
    assert len(fields) >= 12
    assert all(f.description for f in fields.values()), [n for n, f in fields.items() if not f.description]
