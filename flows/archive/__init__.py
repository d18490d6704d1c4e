"""raw/: the WARC archive, its index, import of foreign WARCs, verification and refresh."""

from __future__ import annotations

from flows.archive.capture import Capture
from flows.archive.store import Archive
from flows.archive.verify import Problem, Report, verify

__all__ = ["Archive", "Capture", "Problem", "Report", "verify"]
