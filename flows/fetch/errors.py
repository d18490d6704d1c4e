"""Fetch failures that callers tell apart: refused addresses, HTTP statuses, link rot."""

from __future__ import annotations

from schema.errors import FetchError


class AddressRefused(FetchError):
    """The address guard refused a host before any connection was made."""


class HTTPStatusFailure(FetchError):
    """The server answered with a status we do not archive (4xx, or 5xx after retries)."""

    def __init__(self, message: str, *, url: str, status: int) -> None:
        super().__init__(message)
        self.url = url
        self.status = status


class SourceGone(FetchError):
    """Link rot: 404, 410, or a host name that no longer resolves."""

    def __init__(self, message: str, *, url: str, status: int | None) -> None:
        super().__init__(message)
        self.url = url
        self.status = status
