"""Our top-level names also exist on PyPI: prove they import from this repository, in one direction."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"schema": set(), "extractors": {"schema"}, "flows": {"schema", "extractors"}}


@pytest.mark.parametrize("name", ["schema", "extractors", "flows"])
def test_package_resolves_to_this_repository(name: str) -> None:
    module = importlib.import_module(name)
    assert Path(module.__file__).resolve().parent == ROOT / name


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_imports_flow_one_way(layer: str) -> None:
    allowed = LAYERS[layer] | {layer}
    offenders = []
    for path in (ROOT / layer).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top in LAYERS and top not in allowed:
                    offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not offenders


def test_schema_imports_no_third_party_but_pydantic() -> None:
    import sys

    std = sys.stdlib_module_names
    for path in (ROOT / "schema").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                top = node.module.split(".")[0]
                assert top in std or top in {"schema", "pydantic", "__future__"}, (path, top)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    assert top in std or top in {"schema", "pydantic"}, (path, top)


def test_version_command(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.cli import run

    result = run(capsys, "--version")
    assert result.code == 0
    assert result.out.strip() == "incidents 0.1.0"
