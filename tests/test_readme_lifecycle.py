"""README's "When a source changes" and "Correcting a record", run verbatim in a fresh folder."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_readme_tour import _bash, _sh_blocks_after, fresh  # noqa: F401 (a fixture)


def test_when_a_source_changes_and_correcting_a_record_run_verbatim(
    fresh: tuple[Path, dict[str, str]],  # noqa: F811
) -> None:
    folder, env = fresh
    changes = _sh_blocks_after("### When a source changes")[0]
    done = _bash(changes, folder, env)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    out = done.stdout
    assert "changed  d-d8ba" in out and "(was IL-0001)" in out, out
    assert "kept     title" in out and "proposed summary" in out and "2 hours and 7 minutes" in out, out
    assert "approved d-d8ba" in out and "as IL-0001 (updated" in out, out
    record = json.loads((folder / "records" / "IL-0001.json").read_text())
    assert record["title"] == {"en": "API outage: an internal certificate expired"}
    assert "2 hours and 7 minutes" in record["summary"]["en"]
    assert sorted(p.name for p in (folder / "records").glob("IL-*.json")) == ["IL-0001.json"]
    assert "1 record(s) valid" in out

    correcting = _sh_blocks_after("### Correcting a record")[0]
    fixed = _bash(correcting, folder, env)
    assert fixed.returncode == 0, f"{fixed.stdout}\n{fixed.stderr}"
    assert "corrected IL-0001" in fixed.stdout and "refused: it changes nothing" in fixed.stdout
    assert "change nothing" in fixed.stderr and "1.json\n2.json" in fixed.stdout
    record = json.loads((folder / "records" / "IL-0001.json").read_text())
    assert record["trigger"] == {} and record["impact"]["users"] == "most API clients"
    assert '"action": "corrected"' in fixed.stdout and "1 record(s) valid" in fixed.stdout
