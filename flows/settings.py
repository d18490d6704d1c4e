"""The one settings object (environment prefix INCIDENTS_), built at the entry point and passed down."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

VERSION = "0.1.0"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="INCIDENTS_", extra="ignore")

    data_dir: Path = Field(default_factory=Path.cwd)
    # Fetching (issue "Polite fetching"): hosts the address guard lets through, politeness.
    allow_hosts: str = ""
    min_interval: float = 1.0
    user_agent_contact: str = "https://github.com/incident-ingest/incident-ingest"
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    total_timeout: float = 120.0
    max_body_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 10
    max_retries: int = 3
    max_retry_after: float = 120.0
    retry_backoff: float = 0.5  # seconds; doubled per attempt, with jitter
    ca_bundle: str = ""  # extra CA certificates (PEM file) to trust, e.g. an intranet CA
    concurrency: int = 8
    warc_max_bytes: int = 100 * 1024 * 1024
    # Extraction and drafting on a Dask cluster (tcp://host:8786) instead of local processes.
    dask_scheduler: str = ""
    # Seconds one page's extraction and drafting may take before it fails (0: no limit).
    draft_timeout: float = 120.0
    # Review and read access.
    review_token: str = ""
    library_base_url: str = "https://benchlet.com/incidentlib/app/cases/"
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
    llm_connect_timeout: float = Field(default=10.0, description="Seconds to connect to the model endpoint")
    llm_timeout: float = Field(default=180.0, description="Seconds one model answer may take to arrive")
    llm_max_retries: int = Field(default=3, description="Retries of a model request on 429, 5xx or a timeout")
    llm_retry_backoff: float = Field(
        default=1.0, description="Seconds before the first retry of a model request; doubled per attempt"
    )
    llm_max_retry_after: float = Field(
        default=60.0, description="Longest Retry-After (seconds) honoured; a longer one ends the retries"
    )
    llm_token_budget: int = Field(
        default=60000,
        description="Tokens (prompt + answer) one draft may spend; chunks beyond it are not sent",
    )
    llm_max_tokens: int = Field(default=4096, description="Most tokens one model answer may hold")
    llm_chunk_chars: int = Field(
        default=16000,
        description="Most characters of page text sent in one request; longer pages go by section",
    )
    llm_pause: float = Field(
        default=60.0,
        description="Seconds the model endpoint is not asked after it failed (down, too slow, refusing); "
        "drafts meanwhile stay rule-based",
    )
    llm_concurrency: int = Field(
        default=2, description="Model requests in flight at once, per ingest process"
    )

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
