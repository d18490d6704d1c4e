"""The README's first command and its tour, run verbatim from the README itself, in a fresh folder
holding only examples/: the README cannot drift from what the commands do."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _sh_blocks_after(heading: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README.split(heading, 1)[1], re.S)


def _first_command() -> str:
    """Command 1 without its set-up: the `incidents ...` it ends with, as the README gives it."""
    block = _sh_blocks_after("# incident-ingest")[0]
    line = next(x for x in block.splitlines() if "incidents ingest" in x)
    return line.split("&&")[-1].strip().removeprefix(".venv/bin/")


@pytest.fixture
def fresh(tmp_path: Path, prefect_harness: None) -> tuple[Path, dict[str, str]]:
    """A folder like a fresh clone's (examples/ only), and an environment whose `incidents` runs
    this checkout, against the test session's Prefect server (an ephemeral one per command would
    add about 10 s each)."""
    from prefect.settings import get_current_settings

    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "incidents"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m flows "$@"\n')
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("INCIDENTS_")}
    env |= {
        "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "PREFECT_API_URL": str(get_current_settings().api.url),
    }
    return tmp_path, env


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_first_command_and_the_tour_run_verbatim(fresh: tuple[Path, dict[str, str]]) -> None:
    folder, env = fresh
    first = _bash(_first_command(), folder, env)
    assert first.returncode == 0, first.stderr
    printed = re.search(r"The first command prints one line per source:\s+`([^`]+)`", README)
    assert printed and first.stdout.strip() == printed.group(1)  # what the README says it prints

    tour = _sh_blocks_after("## A short tour")[0]
    done = _bash(tour, folder, env)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    out = done.stdout
    pm, lookalike = "d-9e3de32a9f4d2314", "d-1a13680cc5631b2a"
    assert f"duplicate  {pm}  examples/postmortem.html" in out
    assert f"drafted  {lookalike}  examples/game-day.html  (doubtful: look-alike (drill or game day)" in out
    assert f"{lookalike}  pending   doubtful  " in out
    assert "approved d-9e3d as IL-0001" in out and f"rejected {lookalike}" in out
    record = (folder / "records" / "IL-0001.json").read_text()
    assert '"root_cause": "expired-certificate"' in record and record in out
    assert '"symptoms": [\n    "elevated-error-rate"\n  ]' in record  # the reviewer's edit
    approval, rejection = (folder / "records" / "audit.jsonl").read_text().splitlines()[-2:]
    assert '"action": "approved"' in approval and '"to": ["elevated-error-rate"]' in approval
    assert '"action": "rejected"' in rejection and approval in out and rejection in out


def test_a_skip_for_the_evaluation_kit_says_what_is_missing_in_plain_words(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import tests.conftest as conftest

    monkeypatch.setattr(conftest, "SHARED", tmp_path / "shared")
    with pytest.raises(pytest.skip.Exception) as skipped:
        conftest.shared.__wrapped__()  # type: ignore[attr-defined]
    assert "evaluation kit" in str(skipped.value) and str(tmp_path / "shared") in str(skipped.value)
