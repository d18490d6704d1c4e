"""Scratch folders for benchmarks, removed when the benchmark's process exits (a benchmark run
many times must not fill /tmp)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path


def temp_dir(prefix: str, parent: str | Path | None = None) -> Path:
    """A new folder under `parent` (default: the system's temp folder), deleted at exit."""
    out = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    return out
