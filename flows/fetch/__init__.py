"""Polite fetching: the Fetcher, its result, URL canonicalisation and the address guard."""

from __future__ import annotations

from flows.fetch.client import Fetcher
from flows.fetch.errors import AddressRefused, HTTPStatusFailure, SourceGone
from flows.fetch.guard import AddressGuard, Resolver
from flows.fetch.result import FetchResult, Hop
from flows.fetch.robots import RobotsDecision
from flows.fetch.urls import canonicalize_url, find_rel_canonical

__all__ = [
    "AddressGuard",
    "AddressRefused",
    "FetchResult",
    "Fetcher",
    "HTTPStatusFailure",
    "Hop",
    "Resolver",
    "RobotsDecision",
    "SourceGone",
    "canonicalize_url",
    "find_rel_canonical",
]
