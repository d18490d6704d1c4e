"""On a terminal `incidents ingest` draws a progress bar; piped, it prints plain lines only."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "postmortem.html"


def test_progress_bar_on_a_terminal_and_plain_lines_otherwise(data_dir: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env |= {"INCIDENTS_DATA_DIR": str(data_dir), "COLUMNS": "100", "TERM": "xterm"}
    other = tmp_path / "other.html"
    other.write_text(SAMPLE.read_text().replace("2 hours and 5 minutes", "3 hours"))
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "flows", "ingest", str(SAMPLE), str(other)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    screen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
    out, _ = proc.communicate(timeout=300)
    os.close(master)
    assert proc.returncode == 0
    assert "━" in screen.decode("utf-8", "replace")  # rich's bar
    assert b"2/2" in screen
    lines = out.decode().splitlines()
    assert [line.split()[0] for line in lines] == ["drafted", "drafted"]
    assert "\x1b" not in out.decode()  # stdout stays plain for scripts
