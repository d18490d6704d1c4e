"""The real postmortems of ../shared, wrapped in blog chrome, for benchmarks and evaluations."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path


def render_postmortems(shared: Path) -> Path:
    """A temp folder with <slug>/page.html for every document of shared/corpus/postmortems."""
    out = Path(tempfile.mkdtemp(prefix="bench-pages-"))
    subprocess.run(
        [
            sys.executable,
            str(shared / "tools" / "render_pages.py"),
            str(shared / "corpus" / "postmortems"),
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    return out
