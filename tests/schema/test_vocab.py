from __future__ import annotations

import json
from pathlib import Path

import pytest

from schema.vocab import KINDS, vocabulary

REFERENCE_KINDS = {
    "root_cause": "root_causes",
    "contributing": "contributing",
    "symptoms": "symptoms",
    "components": "components",
    "domains": "domains",
    "source_kinds": "source_kinds",
}


@pytest.mark.parametrize("kind", KINDS)
def test_every_term_is_kebab_case_with_english_and_korean_labels(kind: str) -> None:
    vocab = vocabulary(kind)  # type: ignore[arg-type]
    assert vocab.terms
    for term, entry in vocab.terms.items():
        assert term == term.lower() and " " not in term and "_" not in term, term
        assert entry.labels.get("en") and entry.labels.get("ko"), term
        assert entry.definition, term


def test_aliases_come_in_several_languages() -> None:
    languages = {lang for entry in vocabulary("root_causes").terms.values() for lang in entry.aliases}
    assert {"en", "ko", "ja"} <= languages


def test_every_reference_term_exists_in_ours(shared: Path) -> None:
    reference = json.loads((shared / "reference" / "vocab-reference.json").read_text(encoding="utf-8"))
    missing = []
    for ref_kind, ours in REFERENCE_KINDS.items():
        missing += [f"{ours}:{t}" for t in reference[ref_kind] if t not in vocabulary(ours).terms]  # type: ignore[arg-type]
    missing += [
        f"severity:{t}" for t in reference["severity"]["levels"] if t not in vocabulary("severity").terms
    ]
    assert not missing
