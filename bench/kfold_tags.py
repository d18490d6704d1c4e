"""Grouped k-fold for the vocabulary cut-offs: tags.json's "threshold" and "relative" per field.

A term is tagged when its weighted mention score reaches `threshold` and `relative` x the top
term's score. Both were set by looking at labelled pages, so their in-sample figures flatter.
Here they are fitted the honest way: for each in-sample organisation, the cut-offs that give the
best F1 (must-recall and precision against must + may, summed over pages) on the OTHER in-sample
organisations' pages score the held-out organisation's pages ("k-fold" rows: a cross-validated
estimate of fitted cut-offs). The values fitted on every in-sample page are printed too, with
the held-out organisations' scores under them when they are shown at all (never used to fit).

Each field is fitted alone, the others at their shipped values. The grid: the shipped threshold
times FACTORS, and RELATIVE. Pages are drafted once per grid point from extracted Documents.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from extractors.draft import draft_document
from extractors.draft.vocab_match import settings
from schema.document import Document

FIELDS = {
    "contributing": "contributing",
    "symptoms": "symptoms",
    "components": "components",
    "domain": "domains",
}
FACTORS = (0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
RELATIVE = (0.0, 0.2, 0.3, 0.5)
NOW = "2026-01-01T00:00:00Z"


@dataclass(frozen=True)
class Page:
    org: str
    url: str
    doc: Document
    must: dict[str, frozenset[str]]  # per field
    allowed: dict[str, frozenset[str]]  # must + may


Tally = tuple[int, int, int, int]  # must found, must, good drafted, drafted


@contextmanager
def cutoffs(kind: str, threshold: float, relative: float) -> Iterator[None]:
    """tags.json's cut-offs for one kind set to these, for the drafts made inside (then restored)."""
    cfg = settings()
    saved = cfg["threshold"][kind], cfg["relative"][kind]
    cfg["threshold"][kind], cfg["relative"][kind] = threshold, relative
    try:
        yield
    finally:
        cfg["threshold"][kind], cfg["relative"][kind] = saved


def _tally(page: Page, field: str, got: set[str]) -> Tally:
    must, allowed = page.must[field], page.allowed[field]
    return len(must & got), len(must), len(got & allowed), len(got)


def _f1(rows: list[Tally]) -> tuple[float, float, float]:
    hit, must, good, got = (sum(r[i] for r in rows) for i in range(4))
    recall = hit / must if must else 1.0
    precision = good / got if got else 1.0
    return (2 * precision * recall / (precision + recall) if precision + recall else 0.0), precision, recall


def grid_tallies(pages: list[Page]) -> dict[str, dict[tuple[float, float], list[Tally]]]:
    """Per field, per (threshold, relative): each page's tally (pages in the order given)."""
    out: dict[str, dict[tuple[float, float], list[Tally]]] = {}
    for field, kind in FIELDS.items():
        shipped = settings()["threshold"][kind]
        out[field] = {}
        for factor in FACTORS:
            for relative in RELATIVE:
                point = (round(shipped * factor, 4), relative)
                with cutoffs(kind, *point):
                    drafts = [_draft(p) for p in pages]
                out[field][point] = [
                    _tally(p, field, set(d.record.model_dump(mode="json").get(field) or []))
                    for p, d in zip(pages, drafts, strict=True)
                ]
    return out


def _draft(page: Page) -> Any:
    return draft_document(page.doc, source_url=page.url, snapshot=None, snapshot_digest="bench", now=NOW)


Point = tuple[float, float]  # (threshold, relative)


def _best(points: dict[Point, list[Tally]], rows: list[int], shipped: Point) -> Point:
    """The grid point with the best F1 over `rows` (page indexes); ties go to the shipped values'
    neighbourhood (smallest change of threshold, then of relative)."""
    return max(
        points,
        key=lambda pt: (
            round(_f1([points[pt][i] for i in rows])[0], 9),
            -abs(pt[0] - shipped[0]),
            -abs(pt[1] - shipped[1]),
        ),
    )


def report(pages: list[Page], in_sample: set[str], show_out: bool) -> list[str]:
    """Printable lines: per field, shipped vs k-fold (in-sample pages), the fit on all in-sample
    pages, and (if `show_out`) the out-of-sample pages under shipped and fitted cut-offs."""
    grid = grid_tallies(pages)
    inside = [i for i, p in enumerate(pages) if p.org in in_sample]
    outside = [i for i, p in enumerate(pages) if p.org not in in_sample]
    by_org: dict[str, list[int]] = defaultdict(list)
    for i in inside:
        by_org[pages[i].org].append(i)
    lines = [
        "vocabulary cut-offs by grouped k-fold (leave one in-sample organisation out; P / R):",
        f"{'field':14} {'shipped (t, rel)':>18} {'in-sample shipped':>18} {'in-sample k-fold':>17}"
        f" {'fit on all in-sample':>21}" + (f" {'out shipped':>13} {'out fitted':>12}" if show_out else ""),
    ]
    for field, kind in FIELDS.items():
        shipped = (settings()["threshold"][kind], settings()["relative"][kind])
        points = grid[field]
        folded: list[Tally] = []
        for rows in by_org.values():
            train = [i for i in inside if i not in rows]
            cut = _best(points, train, shipped)
            folded += [points[cut][i] for i in rows]
        fitted = _best(points, inside, shipped)
        _f, p_in, r_in = _f1([points[shipped][i] for i in inside])
        _f, p_k, r_k = _f1(folded)
        line = (
            f"{field:14} {str(shipped):>18} {p_in:8.3f} / {r_in:.3f} {p_k:8.3f} / {r_k:.3f} {str(fitted):>21}"
        )
        if show_out and outside:
            _f, p_os, r_os = _f1([points[shipped][i] for i in outside])
            _f, p_of, r_of = _f1([points[fitted][i] for i in outside])
            line += f" {p_os:5.3f}/{r_os:.3f} {p_of:5.3f}/{r_of:.3f}"
        lines.append(line)
    return lines
