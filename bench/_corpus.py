"""The real pages of ../shared (postmortems, look-alikes), in blog chrome, for benchmarks and evaluations."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench._temp import temp_dir


def render_pages(shared: Path, kind: str = "postmortems") -> Path:
    """A temp folder with <slug>/page.html for every document of shared/corpus/<kind>; removed
    when the benchmark exits (the pages are rendered again, in about a second, next time)."""
    out = temp_dir(f"bench-{kind}-")
    subprocess.run(
        [sys.executable, str(shared / "tools" / "render_pages.py"), str(shared / "corpus" / kind), str(out)],
        check=True,
        capture_output=True,
    )
    return out


def render_postmortems(shared: Path) -> Path:
    """A temp folder with <slug>/page.html for every document of shared/corpus/postmortems."""
    return render_pages(shared, "postmortems")
