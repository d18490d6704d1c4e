"""The shared corpora (../shared, skipped when absent): every page extracts, languages are right."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from extractors import extract_document


def test_rendered_postmortems(shared: Path, tmp_path: Path) -> None:
    corpus = shared / "corpus" / "postmortems"
    subprocess.run(
        [sys.executable, str(shared / "tools" / "render_pages.py"), str(corpus), str(tmp_path)], check=True
    )
    wrong = []
    for doc_dir in sorted(p for p in corpus.iterdir() if (p / "meta.json").is_file()):
        meta = json.loads((doc_dir / "meta.json").read_text())
        doc = extract_document((tmp_path / doc_dir.name / "page.html").read_bytes(), url=meta["url"])
        assert doc.text and doc.title, doc_dir.name
        assert "Comments are closed" not in doc.text and "We use cookies" not in doc.text
        if doc.language != meta["language"]:
            wrong.append(doc_dir.name)
    assert len(wrong) <= 1, wrong  # the bar: right on at least 41 of 42


def test_postmortem_sources(shared: Path) -> None:
    corpus = shared / "corpus" / "postmortems"
    for doc_dir in sorted(p for p in corpus.iterdir() if (p / "meta.json").is_file()):
        meta = json.loads((doc_dir / "meta.json").read_text())
        src = next(doc_dir.glob("source.*"))
        doc = extract_document(src.read_bytes(), url=src.name)
        assert doc.language == meta["language"], doc_dir.name
        if meta.get("encoding"):
            assert doc.encoding.replace("_", "").startswith(meta["encoding"].lower().replace("-", "")), (
                doc.encoding
            )


def test_scrapinghub_pages_never_crash(shared: Path) -> None:
    pages = sorted((shared / "corpus" / "extraction" / "scrapinghub" / "html").glob("*.html.gz"))[:30]
    for path in pages:
        doc = extract_document(gzip.decompress(path.read_bytes()))
        assert doc.text and all(doc.text[b.start : b.end] for b in doc.blocks)
