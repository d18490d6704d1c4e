"""The real pages of ../shared (postmortems, look-alikes), in blog chrome, for benchmarks and evaluations."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path


def render_pages(shared: Path, kind: str = "postmortems") -> Path:
    """A temp folder with <slug>/page.html for every document of shared/corpus/<kind>."""
    out = Path(tempfile.mkdtemp(prefix=f"bench-{kind}-"))
    subprocess.run(
        [sys.executable, str(shared / "tools" / "render_pages.py"), str(shared / "corpus" / kind), str(out)],
        check=True,
        capture_output=True,
    )
    return out


def render_postmortems(shared: Path) -> Path:
    """A temp folder with <slug>/page.html for every document of shared/corpus/postmortems."""
    return render_pages(shared, "postmortems")
