"""sources.toml: a curator's named sources (URL lists, feeds, sitemaps, index pages) and options."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from schema.errors import InputError
from schema.validation import problems_of

Kind = Literal["urls", "feed", "sitemap", "index"]


class SourceGroup(BaseModel):
    """One named source: exactly one of urls / feed / sitemap / index, with per-source options."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    urls: list[str] = Field(default_factory=list)
    feed: str | None = None
    sitemap: str | None = None
    index: str | None = None
    link_pattern: str | None = None  # for index pages: which links are posts
    language: str | None = None  # a hint when the page does not say
    org: str | None = None  # overrides what the drafter finds
    include: list[str] = Field(default_factory=list)  # URL regexes; when given, one must match
    exclude: list[str] = Field(default_factory=list)
    schedule: str | None = None  # cron, e.g. "0 6 * * *"
    group: str = "default"  # sources with the same group share one scheduled deployment
    max_entries: int = Field(default=500, ge=1)

    @property
    def kind(self) -> Kind:
        if self.urls:
            return "urls"
        if self.feed:
            return "feed"
        if self.sitemap:
            return "sitemap"
        return "index"

    @model_validator(mode="after")
    def _one_kind(self) -> SourceGroup:
        given = [k for k in ("urls", "feed", "sitemap", "index") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one of urls, feed, sitemap, index (got {', '.join(given) or 'none'})"
            )
        if self.index and not self.link_pattern:
            raise ValueError("an index source needs link_pattern, a regex for the post links")
        return self

    @field_validator("include", "exclude", "link_pattern")
    @classmethod
    def _regexes(cls, value: list[str] | str | None) -> list[str] | str | None:
        for pattern in [value] if isinstance(value, str) else value or []:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a valid regular expression: {exc}") from exc
        return value

    def wants(self, url: str) -> bool:
        if self.include and not any(re.search(p, url) for p in self.include):
            return False
        return not any(re.search(p, url) for p in self.exclude)


class SourcesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: list[SourceGroup] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_names(self) -> SourcesFile:
        names = [s.name for s in self.source]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"source names must be unique: {', '.join(dupes)}")
        return self


def load_sources(path: Path) -> SourcesFile:
    """Read and check sources.toml; InputError names the file, the source and the field."""
    if not path.is_file():
        raise InputError(f"{path}: no such sources file")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path} is not valid TOML: {exc}") from exc
    try:
        parsed = SourcesFile.model_validate(data)
    except ValidationError as exc:
        listing = "; ".join(f"{field}: {why}" for field, why in problems_of(exc))
        raise InputError(f"{path}: {listing}") from exc
    if not parsed.source:
        raise InputError(f"{path} names no [[source]] tables")
    return parsed
