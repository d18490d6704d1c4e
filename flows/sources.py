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
    # Re-check entries seen before (a conditional fetch) once this long has passed since the last
    # check: "0" every run, "12h", "7d"; unset: an entry is fetched once (feeds and sitemaps).
    recheck: str | None = None

    @field_validator("recheck")
    @classmethod
    def _recheck(cls, value: str | None) -> str | None:
        if value is not None:
            recheck_seconds(value)
        return value

    @property
    def recheck_after(self) -> int | None:
        return None if self.recheck is None else recheck_seconds(self.recheck)

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

    @field_validator("urls", "feed", "sitemap", "index")
    @classmethod
    def _http(cls, value: list[str] | str | None) -> list[str] | str | None:
        for url in [value] if isinstance(value, str) else value or []:
            scheme = url.split(":", 1)[0].lower() if ":" in url else ""
            if scheme not in ("http", "https") or not url.split("://", 1)[-1]:
                raise ValueError(f"{url!r}: only http and https URLs are fetched")
        return value

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        if value is not None:
            why = cron_problem(value)
            if why:
                raise ValueError(why)
        return value

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


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def recheck_seconds(text: str) -> int:
    """ "0", "90s", "30m", "12h", "7d", "2w" as seconds; ValueError otherwise."""
    match = re.fullmatch(r"\s*(\d+)\s*([smhdw]?)\s*", text)
    if not match or (match.group(1) != "0" and not match.group(2)):
        raise ValueError(
            f'{text!r} is not a duration: give "0" (every run) or a number and a unit, e.g. "12h", "7d"'
        )
    return int(match.group(1)) * _UNITS.get(match.group(2) or "s", 1)


def cron_problem(expression: str) -> str | None:
    """Why `expression` is not a cron expression Prefect can schedule, checked by a real parser
    (cronsim, what Prefect's own scheduling brings along); None when it is one."""
    from datetime import UTC, datetime

    from cronsim import CronSim, CronSimError

    form = 'minute hour day month weekday, e.g. "0 6 * * *" (UTC)'
    if len(expression.split()) != 5:
        return f"{expression!r} is not a cron expression: give 5 fields, {form}"
    try:
        CronSim(expression, datetime.now(UTC))
    except CronSimError as exc:
        return f"{expression!r} is not a valid cron expression: {exc}; give {form}"
    return None


def _table_lines(text: str) -> list[int]:
    """The line number of each [[source]] table, in order."""
    return [n for n, line in enumerate(text.splitlines(), 1) if re.match(r"\s*\[\[\s*source\s*\]\]", line)]


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


def _located(path: Path, text: str, data: dict, problems: list[tuple[str, str]]) -> str:
    """`path:LINE: source NAME: field: why` for each problem, LINE being its [[source]] table's."""
    lines = _table_lines(text)
    listed = data.get("source")
    tables: list = listed if isinstance(listed, list) else []
    out = []
    for field, why in problems:
        parts = field.split(".")
        if len(parts) >= 2 and parts[0] == "source" and parts[1].isdigit():
            n = int(parts[1])
            line = f":{lines[n]}" if n < len(lines) else ""
            name = tables[n].get("name") if n < len(tables) and isinstance(tables[n], dict) else None
            where = f"source {name!r}" if name else f"source {n + 1}"
            rest = ".".join(parts[2:])
            out.append(f"{path}{line}: {where}: {rest + ': ' if rest else ''}{why}")
        else:
            out.append(f"{path}: {field}: {why}")
    return "; ".join(out)


def load_sources(path: Path) -> SourcesFile:
    """Read and check sources.toml; InputError names the file, the source and the field."""
    if not path.is_file():
        raise InputError(f'{path}: no such sources file (see the README\'s "For curators" for its format)')
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:  # its message ends with "(at line L, column C)"
        raise InputError(f"{path} is not valid TOML: {exc}") from exc
    try:
        parsed = SourcesFile.model_validate(data)
    except ValidationError as exc:
        raise InputError(_located(path, text, data, problems_of(exc))) from exc
    if not parsed.source:
        raise InputError(f"{path} names no [[source]] tables")
    return parsed
