"""Our own labels of unlabelled corpus pages of in-sample organisations (bench/data/own_labels/*.json).

usage: python bench/own_labels.py [--shared ../shared] [--pages DIR] [--docs] [--check]
Also called by bench/eval_draft.py (without --check).

Two kinds of label file (see bench/data/own_labels/README.md):
- timeline-only labels ("tuned": true|false): timeline correct / invented, rows "own labels tuned|untuned";
- development-set labels ("split": "tune"|"check"): scored like ../shared/eval/score.py (org, date,
  root_cause, vocabulary precision / recall per field, timeline correct / invented), one column per half.
The check half is held back: it is printed only with --check (aggregates, never per page), once
before the rule work and once after it, for the report.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "bench" / "data" / "own_labels"
Tally = dict[str, list[int]]
Drafter = Callable[[Path, str], dict]


def org_of(slug: str) -> str:
    return slug.split("-")[0]


def fmt(g: int, t: int) -> tuple[str, str]:
    return (f"{g / t:.3f}" if t else "  -  "), f"{g}/{t}"


def _put(tally: Tally, metric: str, ok: bool) -> None:
    tally[metric][0] += int(ok)
    tally[metric][1] += 1


def score_timeline(sc: Any, got: dict, gold: dict, tally: Tally) -> None:
    """score.py's rule: correct within max(10 min, 10%); a value where the label has none is invented."""
    for key in ("detected_after", "resolved_after"):
        gold_s, got_s = sc.seconds(gold.get(key)), sc.seconds(got.get(key))
        if gold_s is not None:
            ok = got_s is not None and abs(got_s - gold_s) <= max(600, 0.1 * gold_s)
            _put(tally, "timeline_correct", ok)
        else:
            _put(tally, "timeline_invented", got_s is not None)


def score_vocabulary(sc: Any, rec: dict, label: dict, tally: Tally, doc: dict) -> None:
    """score.py's root cause (best or acceptable) and vocabulary precision / recall per field and
    over all ("vocab_*"), with each field's got / missed / wrong terms in `doc`."""
    rc = label.get("root_cause") or {}
    if rc.get("best") and rc["best"] != "unknown":
        _put(tally, "root_cause", rec.get("root_cause") in {rc["best"], *(rc.get("acceptable") or [])})
    doc["root_cause"] = (rec.get("root_cause"), rc.get("best"), rc.get("acceptable"))
    for f in sc.SET_FIELDS:
        gold = label.get(f) or {}
        must, may = set(gold.get("must") or []), set(gold.get("may") or [])
        got = set(rec.get(f) or [])
        for prefix in (f, "vocab"):
            tally[prefix + "_recall"][0] += len(must & got)
            tally[prefix + "_recall"][1] += len(must)
            tally[prefix + "_precision"][0] += len(got & (must | may))
            tally[prefix + "_precision"][1] += len(got)
        doc[f] = {"got": sorted(got), "missed": sorted(must - got), "wrong": sorted(got - must - may)}


def score_page(sc: Any, draft: dict, label: dict, tally: Tally) -> dict:
    """One development-set page, with score.py's definitions; returns the per-page differences."""
    rec = draft["record"]
    doc: dict = {"slug": label["slug"]}
    _put(tally, "postmortems_kept", draft["postmortem"]["verdict"] is True)
    _put(tally, "org", sc.org_match(rec, label))
    doc["org"] = (rec.get("org"), rec.get("org_slug"), label["org"])
    if label.get("date"):
        _put(tally, "date", rec.get("date") == label["date"])
    doc["date"] = (rec.get("date"), label.get("date"))
    score_vocabulary(sc, rec, label, tally, doc)
    got_t = rec.get("timeline") or {}
    score_timeline(sc, got_t, label["timeline"], tally)
    doc["timeline"] = {k: (got_t.get(k), label["timeline"][k]) for k in ("detected_after", "resolved_after")}
    return doc


def _timeline_only(sc: Any, label: dict, draft: dict, tallies: dict[str, Tally]) -> str:
    group = "tuned" if label["tuned"] else "untuned"
    got = draft["record"].get("timeline") or {}
    score_timeline(sc, got, label["timeline"], tallies[group])
    return f"  {label['slug']} ({group}): {got} gold {label['timeline']}"


def score_own_labels(
    sc: Any, pages: Path, tuned_orgs: set[str], draft: Drafter, check: bool = False
) -> tuple[list[str], list[dict]]:
    """Prints the rows; returns (timeline-only per-page lines, tune-half per-page results). The check
    half is drafted and printed only when `check` is set, and its per-page results never leave here."""
    timeline: dict[str, Tally] = {g: defaultdict(lambda: [0, 0]) for g in ("tuned", "untuned")}
    halves: dict[str, Tally] = {g: defaultdict(lambda: [0, 0]) for g in ("tune", "check")}
    lines: list[str] = []
    docs: list[dict] = []
    for lf in sorted(LABELS.glob("*.json")):
        label = json.loads(lf.read_text())
        page = pages / label["slug"] / "page.html"
        if org_of(label["slug"]) not in tuned_orgs or not page.exists():
            continue
        split = label.get("split")
        if split == "check" and not check:
            continue
        d = draft(page, label["url"])
        if split is None:
            lines.append(_timeline_only(sc, label, d, timeline))
            continue
        doc = score_page(sc, d, label, halves[split])
        if split == "tune":
            docs.append(doc)
    for group, t in timeline.items():
        for k in ("timeline_correct", "timeline_invented"):
            v, n = fmt(*t[k])
            print(f"{'own labels ' + group + ' ' + k[9:]:30} {v:>9} {n:>8}   (own labels, timeline)")
    print_halves(halves, check)
    return lines, docs


def print_halves(halves: dict[str, Tally], check: bool) -> None:
    rows = sorted({k for t in halves.values() for k in t}, key=lambda k: (not k.startswith("vocab"), k))
    head = f"{'own dev set (own labels)':30} {'tune':>9} {'n':>8}"
    print(head + (f"   {'check':>13} {'n':>8}" if check else "   (check half: held back)"))
    for k in rows:
        (vt, nt), (vc, nc) = fmt(*halves["tune"][k]), fmt(*halves["check"][k])
        print(f"{'  ' + k:30} {vt:>9} {nt:>8}" + (f"   {vc:>13} {nc:>8}" if check else ""))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--pages", help="rendered postmortems (default: render into a temp dir)")
    ap.add_argument("--docs", action="store_true", help="per-page results of the tune half")
    ap.add_argument("--check", action="store_true", help="also score the held-back check half (aggregates)")
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from bench._corpus import render_pages
    from bench.eval_draft import draft_page, load_scorer

    shared = Path(a.shared)
    pages = Path(a.pages) if a.pages else render_pages(shared, "postmortems")
    tuned = set(json.loads((ROOT / "bench" / "data" / "tuning.json").read_text())["tuned_orgs"])
    lines, docs = score_own_labels(load_scorer(shared), pages, tuned, draft_page, check=a.check)
    if a.docs:
        print("\n".join(lines))
        for doc in docs:
            print(json.dumps(doc, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
