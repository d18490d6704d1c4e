"""The one settings object (environment prefix INCIDENTS_, or a .env file), built at the entry
point and passed down. Every field carries a one-line description: `incidents settings` shows them."""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

VERSION = "0.1.0"
PREFIX = "INCIDENTS_"
ENV_FILE = ".env"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=PREFIX, extra="ignore", env_file=ENV_FILE, env_file_encoding="utf-8"
    )

    data_dir: Path = Field(
        default_factory=Path.cwd,
        description="The data directory: raw/ (the archive) and records/ (queue, records, audit log).",
    )
    # Fetching (issue "Polite fetching"): hosts the address guard lets through, politeness.
    allow_hosts: str = Field(
        default="",
        description="Hosts, IPs or CIDRs to fetch although they are loopback or private "
        "(e.g. 127.0.0.1,wiki.corp.example,10.20.0.0/16); all others of that kind are refused.",
    )
    min_interval: float = Field(default=1.0, ge=0, description="Seconds between two requests to one host.")
    user_agent_contact: str = Field(
        default="https://github.com/incident-ingest/incident-ingest",
        description="The contact URL sent in the User-Agent: set it to your own page or address.",
    )
    connect_timeout: float = Field(default=10.0, gt=0, description="Seconds to connect to a host.")
    read_timeout: float = Field(
        default=30.0, gt=0, description="Seconds to wait for the next bytes of a reply."
    )
    total_timeout: float = Field(
        default=120.0, gt=0, description="Seconds one URL may take in all, retries included."
    )
    max_body_bytes: int = Field(
        default=10 * 1024 * 1024, ge=1, description="Largest page kept, in bytes (received and decompressed)."
    )
    max_redirects: int = Field(default=10, ge=0, description="Redirects followed per URL.")
    max_retries: int = Field(
        default=3, ge=0, description="Retries after a connection error, timeout, 429 or 5xx."
    )
    max_retry_after: float = Field(
        default=120.0, ge=0, description="Longest Retry-After obeyed, in seconds; longer fails the source."
    )
    retry_backoff: float = Field(
        default=0.5, ge=0, description="Seconds before the first retry, doubled each time (with jitter)."
    )
    ca_bundle: str = Field(
        default="", description="A PEM file of extra CA certificates to trust (e.g. an intranet CA)."
    )
    concurrency: int = Field(default=8, ge=1, description="Requests in flight at once, over all hosts.")
    warc_max_bytes: int = Field(
        default=100 * 1024 * 1024,
        ge=1,
        description="Size at which a WARC file of raw/ is closed for a new one.",
    )
    # Who runs the archive, named in the warcinfo record at the start of every run's writing.
    archive_operator: str = Field(
        default="",
        description="Person or organisation operating this archive (warcinfo `operator`).",
    )
    archive_contact: str = Field(
        default="",
        description="How to reach the operator (e-mail or URL; warcinfo `contact`); "
        "INCIDENTS_USER_AGENT_CONTACT when empty.",
    )
    # A SecretStr, as review_token: the URL may hold a password, and Prefect stores a flow run's
    # parameters (Settings among them) in its database.
    database_url: SecretStr = Field(
        default=SecretStr(""),
        description="PostgreSQL URL (postgresql://user@host/db) several workers share for the archive index, "
        "ledger, discovery state, queue index and record ids; empty: SQLite files in raw/ (one machine)",
    )
    dask_scheduler: str = Field(
        default="",
        description="A Dask scheduler (tcp://host:8786) to extract and draft on, instead of local processes.",
    )
    draft_timeout: float = Field(
        default=120.0, ge=0, description="Seconds one page's extraction and drafting may take (0: no limit)."
    )
    # Review and read access.
    # A SecretStr: Prefect stores a flow run's parameters (Settings among them) in its database.
    review_token: SecretStr = Field(
        default=SecretStr(""), description="Token the review web app asks for (never printed)."
    )
    library_base_url: str = Field(
        default="",
        description="Base URL of your incident library's pages; a record's url is BASE/IL-NNNN "
        "(empty: records get no url).",
    )
    # Model-assisted drafting (optional; off unless llm_base_url is set). See flows/model/.
    llm_base_url: str = Field(
        default="",
        description="OpenAI-compatible endpoint for model-assisted drafting, e.g. http://127.0.0.1:8080/v1 "
        "(llama.cpp server, vLLM, Ollama); empty: drafts are rule-based only",
    )
    llm_model: str = Field(default="", description="Model name sent to the endpoint (as the server knows it)")
    llm_api_key: SecretStr = Field(
        default=SecretStr(""), description="Bearer token for the endpoint; never logged, printed or written"
    )
    llm_languages: str = Field(
        default="en,ko",
        description="Comma-separated languages the model writes and translates text fields into",
    )
    llm_connect_timeout: float = Field(
        default=10.0, gt=0, description="Seconds to connect to the model endpoint"
    )
    llm_timeout: float = Field(default=180.0, gt=0, description="Seconds one model answer may take to arrive")
    llm_max_retries: int = Field(
        default=3, ge=0, description="Retries of a model request on 429, 5xx or a timeout"
    )
    llm_retry_backoff: float = Field(
        default=1.0,
        ge=0,
        description="Seconds before the first retry of a model request; doubled per attempt",
    )
    llm_max_retry_after: float = Field(
        default=60.0,
        ge=0,
        description="Longest Retry-After (seconds) honoured; a longer one ends the retries",
    )
    llm_token_budget: int = Field(
        default=60000,
        ge=1,
        description="Tokens (prompt + answer) one draft may spend; chunks beyond it are not sent",
    )
    llm_max_tokens: int = Field(default=4096, ge=1, description="Most tokens one model answer may hold")
    llm_chunk_chars: int = Field(
        default=16000,
        ge=1,
        description="Most characters of page text sent in one request; longer pages go by section",
    )
    llm_pause: float = Field(
        default=60.0,
        ge=0,
        description="Seconds the model endpoint is not asked after it failed (down, too slow, refusing); "
        "drafts meanwhile stay rule-based",
    )
    llm_concurrency: int = Field(
        default=2, ge=1, description="Model requests in flight at once, per ingest process"
    )
    # The library (issue 37): browsers on other sites may read the JSON API only when allowed here.
    library_cors_origins: str = Field(
        default="",
        description="Comma-separated origins (https://example.org) whose pages may read the library's "
        "JSON API from a browser (CORS); * for any; empty: none",
    )

    # Values checked when read, so a typo is one line naming the variable, not a failure later.
    @field_validator("allow_hosts")
    @classmethod
    def _hosts(cls, value: str) -> str:
        import ipaddress

        for item in (part.strip() for part in value.split(",")):
            # A host name has no "/" or ":" and is not all digits and dots: the rest are IPs/CIDRs.
            if "/" in item or ":" in item or (item and set(item) <= set("0123456789.")):
                try:
                    ipaddress.ip_network(item, strict=False)
                except ValueError as exc:
                    raise ValueError(f"{item!r} is not a valid IP address or CIDR range ({exc})") from exc
        return value

    @field_validator("ca_bundle")
    @classmethod
    def _pem_file(cls, value: str) -> str:
        if value and not Path(value).is_file():
            raise ValueError(f"{value}: no such file (give the path of a PEM file of CA certificates)")
        return value

    @field_validator("data_dir")
    @classmethod
    def _directory(cls, value: Path) -> Path:
        if value.exists() and not value.is_dir():
            raise ValueError(f"{value} is a file, not a directory")
        return value

    @field_validator("llm_base_url", "library_base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if value and not value.lower().startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http or https URL")
        return value

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: SecretStr) -> SecretStr:
        url = value.get_secret_value()
        if url and not url.lower().startswith(("postgresql://", "postgres://")):
            from flows.store.database import shown_url

            raise ValueError(
                f"{shown_url(url)!r}: give a postgresql://user@host/database URL "
                "(empty: SQLite files in raw/)"
            )
        return value

    @field_validator("dask_scheduler")
    @classmethod
    def _scheduler(cls, value: str) -> str:
        if value and "://" not in value:
            raise ValueError(f"{value!r}: give the scheduler's address as tcp://host:8786")
        return value

    @property
    def database(self) -> str:
        """INCIDENTS_DATABASE_URL as given ("" for SQLite files in raw/), for the stores to open."""
        return self.database_url.get_secret_value()

    @property
    def raw_dir(self) -> Path:
        return self.data_dir / "raw"

    @property
    def records_dir(self) -> Path:
        return self.data_dir / "records"

    @property
    def queue_dir(self) -> Path:
        return self.records_dir / "queue"

    @property
    def audit_path(self) -> Path:
        return self.records_dir / "audit.jsonl"

    @property
    def llm_language_list(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(x.strip().lower() for x in self.llm_languages.split(",") if x.strip()))

    @property
    def user_agent(self) -> str:
        return f"incident-ingest/{VERSION} (+{self.user_agent_contact})"


# Shown first by `incidents settings`, and named in `incidents --help`: what a curator sets first.
FIRST = ("allow_hosts", "data_dir", "user_agent_contact", "min_interval")
SECRET_WORDS = ("key", "token", "password", "secret")


def is_set(name: str) -> bool:
    """Whether setting `name` has a non-empty value, looked up as Settings looks it up (the
    environment first, then ./.env) without building Settings, so an unrelated bad value does not
    stop a command that only needs to know this one."""
    variable = f"{PREFIX}{name.upper()}"
    for key, value in os.environ.items():
        if key.upper() == variable:
            return bool(value)
    if not Path(ENV_FILE).is_file():
        return False
    from dotenv import dotenv_values

    return any(k.upper() == variable and v for k, v in dotenv_values(ENV_FILE).items())


def read_settings(**overrides: Any) -> tuple[Settings, dict[str, str]]:
    """Settings even when some values are bad: each bad one at its default, and why it is bad
    (by field name). For `incidents settings`, which shows every setting and marks the bad."""
    try:
        return Settings(**overrides), {}
    except ValidationError as exc:
        from schema.validation import problems_of

        bad = {field.split(".")[0]: why for field, why in problems_of(exc)}
    defaults = {
        name: Settings.model_fields[name].get_default(call_default_factory=True)
        for name in bad
        if name in Settings.model_fields
    }
    return Settings(**{**defaults, **overrides}), bad


def _raw_value(name: str, in_file: dict[str, str | None]) -> str:
    variable = f"{PREFIX}{name.upper()}"
    for key, value in os.environ.items():
        if key.upper() == variable:
            return value
    return in_file.get(variable) or ""


def describe(
    settings: Settings, overridden: Collection[str] = (), bad: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Every setting: its variable name, value (secrets masked), where the value came from
    (default, environment, .env, or an option such as --data-dir) and its one line of help.
    A bad value (`bad`, from read_settings) is shown as given, with `problem` saying why.
    Generic over Settings.model_fields, so a field added later is listed with no change here."""
    bad = bad or {}
    from dotenv import dotenv_values

    in_file = {k.upper(): v for k, v in dotenv_values(ENV_FILE).items()} if Path(ENV_FILE).is_file() else {}
    in_env = {k.upper() for k in os.environ}
    names = [*FIRST, *(n for n in Settings.model_fields if n not in FIRST)]
    rows = []
    for name in names:
        field = Settings.model_fields[name]
        variable = f"{PREFIX}{name.upper()}"
        source = (
            "option"
            if name in overridden
            else "environment"
            if variable in in_env
            else ENV_FILE
            if variable in in_file
            else "default"
        )
        value = getattr(settings, name)
        # A secret is a SecretStr (or a text setting named like one); a number never is, though
        # its name may say "token" (llm_token_budget, llm_max_tokens).
        secret = isinstance(value, SecretStr) or (
            isinstance(value, str) and any(w in name for w in SECRET_WORDS)
        )
        if name in bad:
            value = _raw_value(name, in_file)
        elif isinstance(value, SecretStr):
            value = value.get_secret_value()
        shown = ("********" if value else "") if secret else str(value)
        if name == "database_url" and value:
            from flows.store.database import shown_url

            shown = shown_url(str(value))  # never its password
        row = {"name": variable, "value": shown, "source": source, "help": field.description or ""}
        if name in bad:
            row["problem"] = bad[name]
        rows.append(row)
    return rows
