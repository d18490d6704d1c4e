"""The gate's triage cut-off (extractors/gate.py SKIP_BELOW): what each cut-off skips and queues.

usage: python bench/triage.py [--shared ../shared] [--pages DIR] [--negatives DIR] [--docs]

A "no" from the gate is skipped (never queued) when its score is below the cut-off, and queued as
doubtful otherwise. The cut-off must skip no real postmortem (../shared/corpus/postmortems, every
one an incident report), queue most look-alikes as doubtful (the labelled negatives of
../shared/eval/labels: a reviewer rejects them in one bulk action) and skip at least 0.97 of the
generic articles (../shared/corpus/extraction/scrapinghub: news, shops, product posts), so that a
blog's whole sitemap does not flood the queue.

The rule that picks the cut-off from a set of pages: among the cut-offs of the grid (0.01 to the
0.5 bar) that skip none of the set's postmortems, at most half of its look-alikes and at least
0.97 of its generic articles, the middle one; when none does all three, the highest that skips
no postmortem. It is judged out of sample: each organisation's postmortems and look-alikes are scored
with the cut-off picked on the other organisations (and every generic article), and each fifth of
the generic articles with the cut-off picked on the other four fifths (and every postmortem).
In-sample (picked on everything, scored on everything) is printed beside it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extractors import draft_page  # noqa: E402
from extractors.gate import SKIP_BELOW  # noqa: E402
from schema.errors import ExtractionError  # noqa: E402

# Up to the 0.5 bar: above it, a "no" the narrative score calls a "yes" would count as confident.
GRID = [round(0.01 * i, 2) for i in range(1, 51)]
GENERIC_TARGET = 0.97
GENERIC_FOLDS = 5
LOOK_ALIKES_SKIPPED = 0.5  # at most this share of the look-alikes skipped: most are queued as doubtful


@dataclass(frozen=True)
class Page:
    kind: str  # "postmortem", "look-alike", "generic"
    group: str  # the organisation (slug's first word); a generic article: its fold
    name: str
    verdict: bool
    score: float  # 0.0 for a page with no article (never drafted: always skipped)
    reason: str


def skipped(page: Page, cut: float) -> bool:
    """What the gate's skip says at this cut-off (a "no" below it)."""
    return not page.verdict and page.score < cut


def org_of(slug: str) -> str:
    return slug.split("-")[0]


def judge(kind: str, group: str, name: str, path: Path, url: str) -> Page:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    try:
        gate = draft_page(data, url=url, content_type="text/html").draft.postmortem
    except ExtractionError as exc:  # no article at all: never drafted
        return Page(kind, group, name, False, 0.0, f"no article: {exc}")
    return Page(kind, group, name, gate.verdict, gate.score, gate.reasons[0] if gate.reasons else "")


def collect(shared: Path, pages: Path, negatives: Path) -> list[Page]:
    out: list[Page] = []
    for meta in sorted((shared / "corpus" / "postmortems").glob("*/meta.json")):
        slug = meta.parent.name
        page = pages / slug / "page.html"
        if page.exists():
            url = json.loads(meta.read_text()).get("url") or f"https://example.org/{slug}/"
            out.append(judge("postmortem", org_of(slug), slug, page, url))
    for label_file in sorted((shared / "eval" / "labels").glob("*.json")):
        label = json.loads(label_file.read_text())
        page = negatives / label["slug"] / "page.html"
        if label.get("is_postmortem") is False and page.exists():
            out.append(judge("look-alike", org_of(label["slug"]), label["slug"], page, label["url"]))
    for page in sorted((shared / "corpus" / "extraction" / "scrapinghub" / "html").glob("*.html.gz")):
        fold = f"generic-{zlib.crc32(page.name.encode()) % GENERIC_FOLDS}"
        out.append(judge("generic", fold, page.name[:16], page, "https://example.org/article/"))
    return out


def own_pages() -> list[Page]:
    """Our own fixtures: postmortems and look-alikes we wrote (tests/data/postmortems), and the
    triage pair (tests/data/triage: a doubtful drill, a generic product post)."""
    out = []
    data = ROOT / "tests" / "data"
    for page in sorted((data / "postmortems").glob("*.html")) + sorted((data / "triage").glob("*.html")):
        kind = "generic" if page.stem.startswith("generic") else "postmortem"
        if page.stem.startswith(("not-", "doubtful")):
            kind = "look-alike"
        out.append(judge(kind, "own", f"own:{page.stem}", page, f"https://example.org/{page.stem}/"))
    return out


def _sizes(pages: list[Page]) -> dict[str, int]:
    return {k: sum(p.kind == k for p in pages) for k in ("postmortem", "look-alike", "generic")}


def pick(pages: list[Page]) -> float:
    """The cut-off the rule picks on these pages (see the module's doc)."""
    pms = [p for p in pages if p.kind == "postmortem"]
    generic = [p for p in pages if p.kind == "generic"]
    looks = [p for p in pages if p.kind == "look-alike"]
    safe = [c for c in GRID if not any(skipped(p, c) for p in pms)]
    both = [
        c
        for c in safe
        if share(generic, c) >= GENERIC_TARGET and (not looks or share(looks, c) <= LOOK_ALIKES_SKIPPED)
    ]
    if both:
        return both[len(both) // 2]
    return max(safe, default=GRID[0])


def share(pages: list[Page], cut: float) -> float:
    return sum(skipped(p, cut) for p in pages) / len(pages) if pages else 0.0


def counts(pages: list[Page], cuts: dict[str, float]) -> dict[str, tuple[int, int, int]]:
    """Per kind: (skipped, queued as doubtful, queued as a postmortem), each page at its own cut."""
    out: dict[str, tuple[int, int, int]] = {}
    for kind in ("postmortem", "look-alike", "generic"):
        mine = [p for p in pages if p.kind == kind]
        skip = sum(skipped(p, cuts[p.name]) for p in mine)
        yes = sum(p.verdict for p in mine)
        out[kind] = (skip, len(mine) - skip - yes, yes)
    return out


def out_of_fold(pages: list[Page]) -> tuple[dict[str, float], list[float]]:
    """Each page's cut-off, picked without its organisation (or its fifth of the generic articles)."""
    cuts: dict[str, float] = {}
    picked = []
    for group in sorted({p.group for p in pages}):
        cut = pick([p for p in pages if p.group != group])
        picked.append(cut)
        cuts.update({p.name: cut for p in pages if p.group == group})
    return cuts, picked


def row(label: str, c: dict[str, tuple[int, int, int]], n: dict[str, int]) -> str:
    pm, look, gen = c["postmortem"], c["look-alike"], c["generic"]
    return (
        f"{label:>22}  {pm[0]:>3}/{n['postmortem']:<3} skipped  "
        f"{look[1]:>2} doubtful {look[0]:>2} skipped {look[2]:>2} yes /{n['look-alike']:<2}  "
        f"{gen[0]:>3}/{n['generic']} = {gen[0] / max(1, n['generic']):.3f} skipped ({gen[1]} doubtful)"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--pages", help="rendered postmortems (default: render into a temp dir)")
    ap.add_argument("--negatives", help="rendered look-alikes (default: render into a temp dir)")
    ap.add_argument("--docs", action="store_true", help="print every page's verdict")
    a = ap.parse_args()
    shared = Path(a.shared)
    if not (shared / "corpus" / "postmortems").is_dir():
        print(f"no evaluation kit at {shared} (corpus/postmortems): give --shared", file=sys.stderr)
        return 2
    from bench._corpus import render_pages

    pm_dir = Path(a.pages) if a.pages else render_pages(shared, "postmortems")
    neg_dir = Path(a.negatives) if a.negatives else render_pages(shared, "negatives")
    pages = collect(shared, pm_dir, neg_dir)
    n = _sizes(pages)

    from extractors.draft.linear import shipped

    model = shipped().verdict
    print(
        "verdict decided by: "
        + (
            f"the fitted model (weights.json verdict: skip below {model.skip_below:g}); the rows below "
            "are the gate's probabilities at each cut-off, 'shipped' marks the rules' SKIP_BELOW"
            if model
            else "the rules (weights.json verdict is null: the fit was worse out of fold; bench/train.py)"
        )
    )
    print("cut-off: postmortems skipped | look-alikes doubtful, skipped, said yes | generic skipped")
    for cut in GRID:
        marks = " <- SKIP_BELOW" if cut == SKIP_BELOW else ""
        print(row(f"{cut:.2f}", counts(pages, {p.name: cut for p in pages}), n) + marks)
    lowest = min((p.score for p in pages if p.kind == "postmortem"), default=1.0)
    top = sorted(p.score for p in pages if p.kind == "generic" and not p.verdict)[-6:]
    print(f"lowest postmortem score {lowest:.3f}; highest generic 'no' scores {top}")

    in_cut = pick(pages)
    print()
    print(row(f"in-sample ({in_cut:.2f})", counts(pages, {p.name: in_cut for p in pages}), n))
    oof, picked = out_of_fold(pages)
    print(row("out-of-fold", counts(pages, oof), n))
    print(f"{'':>22}  cut-off picked per fold: {min(picked):.2f} .. {max(picked):.2f} ({len(picked)} folds)")
    print(row(f"shipped ({SKIP_BELOW:.2f})", counts(pages, {p.name: SKIP_BELOW for p in pages}), n))
    own = own_pages()
    print(
        row(f"own fixtures ({SKIP_BELOW:.2f})", counts(own, {p.name: SKIP_BELOW for p in own}), _sizes(own))
    )
    print(f"{'':>22}  (tests/data: postmortems and not-*.html look-alikes we wrote; in-sample by definition)")
    if a.docs:
        for p in pages + own:
            if p.kind != "generic" or p.verdict or p.score >= SKIP_BELOW:
                state = "yes" if p.verdict else "skipped" if skipped(p, SKIP_BELOW) else "doubtful"
                print(f"{p.kind:10} {state:8} {p.score:.3f}  {p.name}  {p.reason[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
