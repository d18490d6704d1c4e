from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli import run
from tests.conftest import DATA

OURS = DATA / "records" / "IL-0042.json"


def test_valid_records_pass(capsys, data_dir: Path) -> None:
    records = data_dir / "records"
    records.mkdir()
    shutil.copy(OURS, records / "IL-0042.json")
    result = run(capsys, "validate")
    assert result.code == 0 and "1 record(s) valid" in result.out


def test_seed_passes(capsys, shared: Path) -> None:
    assert run(capsys, "validate", str(shared / "seeds" / "000_86759986fefc91a4.txt")).code == 0


def test_every_bad_file_and_field_is_named(capsys, data_dir: Path) -> None:
    records = data_dir / "records"
    records.mkdir()
    good = json.loads(OURS.read_text())
    (records / "IL-0001.json").write_text(json.dumps(good | {"id": "IL-0001", "root_cause": "gremlins"}))
    (records / "IL-0002.json").write_text(json.dumps(good | {"id": "IL-0003"}))
    (records / "IL-0003.json").write_text(json.dumps(good | {"id": "IL-0003"}))
    (records / "IL-0004.json").write_text("{oops")
    (records / "IL-0005.json").write_text(json.dumps(good | {"id": "IL-5"}))
    result = run(capsys, "validate")
    assert result.code == 1
    err = result.err
    assert "IL-0001.json: root_cause: 'gremlins' is not a term" in err
    assert "IL-0002.json: id: file name says IL-0002 but the record is IL-0003" in err
    assert "IL-0003.json: id: IL-0003 is also the id in" in err
    assert "IL-0004.json: (file): not JSON" in err
    assert "IL-0005.json: id:" in err
    assert "5 of 5 file(s) invalid" in err


def test_missing_path(capsys, tmp_path: Path) -> None:
    result = run(capsys, "validate", str(tmp_path / "nope.json"))
    assert result.code == 1 and "no such file" in result.err
