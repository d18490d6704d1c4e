"""The one settings object (environment prefix INCIDENTS_), built at the entry point and passed down."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
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
    # Extraction and drafting on a Dask cluster (tcp://host:8786) instead of local processes.
    dask_scheduler: str = ""
    # Seconds one page's extraction and drafting may take before it fails (0: no limit).
    draft_timeout: float = 120.0
    # Review and read access.
    review_token: str = ""
    library_base_url: str = "https://benchlet.com/incidentlib/app/cases/"
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""

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
    def user_agent(self) -> str:
        return f"incident-ingest/{VERSION} (+{self.user_agent_contact})"
