"""Fit the drafter's candidate weights on labelled pages; write extractors/draft/data/weights.json.

usage: python bench/train.py [--shared ../shared] [--pages DIR] [--folds 5] [--inner 3] [--check]
                              [--approvals DATA_DIR]

Labelled pages: every postmortem of ../shared/eval/labels (LABELS.md shape) and our own
development-set labels of other corpus pages (bench/data/own_labels, the "split" ones). Each page
is extracted and its candidates drawn (extractors.draft.candidates_of, with the rules' own weights
so the fit never depends on the weights it replaces). extractors/draft/training.py fits one
logistic model per field (root cause, contributing, symptoms, components, domain): outer folds
grouped by organisation give the out-of-fold figures written beside the weights, inner grouped
folds choose the L2 strength and the keep threshold. Prints in-sample and out-of-fold figures.
With --approvals DATA_DIR, a data directory's approved drafts (the review page as the labelling
tool: the approved record, with the reviewer's edits, is the label) join the labelled pages.
With --check, writes nothing and exits 1 when the file on disk differs from a fresh fit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extractors import extract_document  # noqa: E402
from extractors.draft import DraftOptions, candidates_of, text_candidates_of  # noqa: E402
from extractors.draft.linear import FIELDS, SHIPPED, dump, hand  # noqa: E402
from extractors.draft.training import (  # noqa: E402
    TRAINING_SET,
    Labelled,
    Tally,
    TextLabelled,
    dump_set,
    from_label,
    train,
    train_text,
    within,
)

OWN = ROOT / "bench" / "data" / "own_labels"


def org_of(slug: str) -> str:
    return slug.split("-")[0]


def labelled_pages(shared: Path, pages: Path) -> list[Labelled]:
    """The shipped labels with the candidates of their pages (postmortems only: look-alikes have
    no vocabulary to learn from)."""
    labels = {}
    for lf in sorted((shared / "eval" / "labels").glob("*.json")):
        label = json.loads(lf.read_text())
        if label.get("is_postmortem") is not False:
            labels[label["slug"]] = label
    for lf in sorted(OWN.glob("*.json")):
        label = json.loads(lf.read_text())
        if "split" in label and label["slug"] not in labels and label.get("is_postmortem") is not False:
            labels[label["slug"]] = label
    out = []
    options = DraftOptions(weights=hand())
    for slug, label in sorted(labels.items()):
        page = pages / slug / "page.html"
        if not page.exists():
            continue
        doc = extract_document(page.read_bytes(), url=label["url"], content_type="text/html")
        cands = candidates_of(doc, source_url=label["url"], options=options)
        out.append(from_label(org_of(slug), slug, cands, label))
    return out


# --- page decisions: the postmortem verdict and the org (extractors/draft/page_fit.py) ------------

GENERIC_FOLDS = 5  # the scrapinghub articles (no organisation) in this many fixed groups


def page_examples(shared: Path, pages: Path, negatives: Path) -> tuple[list, list]:
    """Verdict examples: every corpus postmortem, the labelled look-alikes, the scrapinghub
    articles and our own fixtures (tests/data/postmortems, tests/data/triage: group "own"); org
    examples: the labelled postmortems, each candidate marked whether the reference scorer accepts it."""
    import gzip
    import zlib

    from bench.eval_draft import load_scorer
    from extractors.draft import page_decisions_of
    from extractors.draft.page_fit import OrgExample, PageExample
    from schema.errors import ExtractionError

    sc = load_scorer(shared)
    labels = {}
    for lf in sorted((shared / "eval" / "labels").glob("*.json")):
        label = json.loads(lf.read_text())
        labels[label["slug"]] = label
    verdict: list[PageExample] = []
    org: list[OrgExample] = []

    def add(kind: str, group: str, key: str, data: bytes, url: str, label: dict | None = None) -> None:
        try:
            doc = extract_document(data, url=url, content_type="text/html")
        except ExtractionError:
            return  # no article at all: never drafted, always skipped
        got = page_decisions_of(doc, source_url=url)
        if got.verdict_features:  # a page with no article is no decision to learn
            verdict.append(
                PageExample(group, key, kind, got.verdict_features, got.rules.verdict, got.rules.skip)
            )
        if label is None or not label.get("org"):
            return
        # Each labelled page twice: as published, and without its site name (a page kept in git,
        # or a blog without the metadata: where the other sources must decide).
        bare = page_decisions_of(doc.model_copy(update={"site_name": None}), source_url=url)
        # What the fit learns: the name a curator writes (the label's org or an alias, whole), so
        # that "Acme Cloud" beats "acme" where both are accepted.
        names = {sc.squash(n) for n in [label["org"], *(label.get("org_aliases") or [])] if n}
        for suffix, decided in (("", got), (" (no site name)", bare)):
            cands = [
                (
                    c.features,
                    bool(sc.org_match({"org": c.name, "org_slug": c.slug}, label)),
                    "src_domain" in c.features,
                    sc.squash(c.name) in names,
                )
                for c in decided.org_candidates
            ]
            org.append(OrgExample(group, key + suffix, cands))

    for meta in sorted((shared / "corpus" / "postmortems").glob("*/meta.json")):
        slug = meta.parent.name
        page = pages / slug / "page.html"
        if page.exists():
            url = json.loads(meta.read_text()).get("url") or f"https://example.org/{slug}/"
            label = labels.get(slug)
            add("postmortem", org_of(slug), slug, page.read_bytes(), (label or {}).get("url") or url, label)
    for slug, label in sorted(labels.items()):
        page = negatives / slug / "page.html"
        if label.get("is_postmortem") is False and page.exists():
            add("look-alike", org_of(slug), slug, page.read_bytes(), label["url"])
    for page in sorted((shared / "corpus" / "extraction" / "scrapinghub" / "html").glob("*.html.gz")):
        group = f"generic-{zlib.crc32(page.name.encode()) % GENERIC_FOLDS}"
        add(
            "generic",
            group,
            page.name[:16],
            gzip.decompress(page.read_bytes()),
            "https://example.org/article/",
        )
    data = ROOT / "tests" / "data"
    for page in sorted((data / "postmortems").glob("*.html")) + sorted((data / "triage").glob("*.html")):
        kind = "generic" if page.stem.startswith("generic") else "postmortem"
        if page.stem.startswith(("not-", "doubtful")):
            kind = "look-alike"
        add(kind, "own", f"own:{page.stem}", page.read_bytes(), f"https://example.org/{page.stem}/")
    return verdict, org


def fit_pages(
    verdict: list, org: list, k: int, inner: int
) -> tuple[dict, dict[str, dict[str, float]], list[str]]:
    """The verdict and org models (None where the rules stay), their fold figures, printed lines."""
    from extractors.draft.page_fit import OrgTally, VerdictTally, decide_org, decide_verdict

    v, o = decide_verdict(verdict, k, inner), decide_org(org, k, inner)

    def vrow(name: str, t: VerdictTally | OrgTally) -> str:
        assert isinstance(t, VerdictTally)
        f = t.figures()
        return (
            f"{name:20} postmortems skipped {f['postmortem_skipped']:.0f}/{f['postmortem_pages']:.0f} "
            f"said yes {f['postmortem_yes']:.0f}   look-alikes verdict false "
            f"{f['look_alike_pages'] - f['look_alike_yes']:.0f}/{f['look_alike_pages']:.0f} "
            f"skipped {f['look_alike_skipped']:.0f}   generic skipped "
            f"{f['generic_skipped']:.0f}/{f['generic_pages']:.0f} = {t.share('skip', 'generic'):.3f}"
        )

    def orow(name: str, t: VerdictTally | OrgTally) -> str:
        assert isinstance(t, OrgTally)
        share = t.right / max(1, t.pages)
        return (
            f"{name:20} right {t.right}/{t.pages} = {share:.3f}, wrong {t.wrong}, unknown {t.unknown}, "
            f"the curator's own name {t.named}"
        )

    def shipped(d: object) -> str:
        m = getattr(d, "model", None)
        if m is None:
            return "shipped: the rules (the fit is worse out of fold)"
        cut = f"skip below {m.skip_below:g}" if hasattr(m, "skip_below") else f"threshold {m.threshold:g}"
        return f"shipped: the fit (out of fold no worse than the rules), l2 {m.l2:g}, {cut}"

    lines = [
        "",
        f"postmortem verdict ({len(verdict)} pages; folds grouped by organisation, generic articles in "
        f"{GENERIC_FOLDS} fixed groups, own fixtures one group)",
        vrow("rules", v.rules),
        vrow("fit in-sample", v.in_sample),
        vrow("fit out-of-fold", v.out_of_fold),
        shipped(v),
        "",
        f"org ({len(org)} labelled postmortems, each also without its site name; "
        "folds grouped by organisation)",
        orow("rules", o.rules),
        orow("fit in-sample", o.in_sample),
        orow("fit out-of-fold", o.out_of_fold),
        shipped(o),
    ]
    folds = {
        name: {
            **{"oof_" + n: x for n, x in d.out_of_fold.figures().items()},
            **{"in_" + n: x for n, x in d.in_sample.figures().items()},
            **{"rules_" + n: x for n, x in d.rules.figures().items()},
            "landed": float(d.landed),
        }
        for name, d in (("verdict", v), ("org", o))
    }
    return {"verdict": v.model, "org": o.model}, folds, lines


def _seconds(value: object) -> float | None:
    """Seconds of an ISO 8601 duration (the reference scorer's reading), None when not one."""
    m = re.match(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$", str(value or ""))
    if not value or not m or str(value) in ("P", "PT"):
        return None
    d, h, mi, sec = (float(x) if x else 0.0 for x in m.groups())
    return ((d * 24 + h) * 60 + mi) * 60 + sec


def text_pages(shared: Path, pages: Path) -> list[TextLabelled]:
    """The labelled postmortems of ../shared/eval/labels with the text decisions' candidates (drawn
    with the rules' own weights) and which are right: a duration within the scorer's tolerance of
    the label's, a sentence a gold quote overlaps (the scorer's own overlap >= 0.6)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("score", shared / "eval" / "score.py")
    sc = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(sc)  # type: ignore[union-attr]
    out = []
    options = DraftOptions(weights=hand())
    for lf in sorted((shared / "eval" / "labels").glob("*.json")):
        label = json.loads(lf.read_text())
        page = pages / label["slug"] / "page.html"
        if label.get("is_postmortem") is False or not page.exists():
            continue
        doc = extract_document(page.read_bytes(), url=label["url"], content_type="text/html")
        cands, spans = text_candidates_of(doc, source_url=label["url"], options=options)
        right: dict[str, frozenset[str]] = {}
        has_gold: dict[str, bool] = {}
        for decision, cs in cands.items():
            kind, name = decision.split(".", 1)
            if kind == "timeline":
                gold = _seconds((label.get("timeline") or {}).get(name))
                has_gold[decision] = gold is not None
                right[decision] = frozenset(
                    c.term
                    for c in cs
                    if gold is not None and (got := _seconds(c.term)) is not None and within(got, gold)
                )
            else:
                quotes = (label.get("evidence") or {}).get(name) or []
                has_gold[decision] = bool(quotes)
                right[decision] = frozenset(
                    c.term
                    for c in cs
                    if any(sc.overlap(g, doc.text[slice(*spans[decision][c.term])]) >= 0.6 for g in quotes)
                )
        out.append(TextLabelled(org_of(label["slug"]), label["slug"], cands, right, has_gold))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--pages", help="rendered postmortems (default: render into a temp dir)")
    ap.add_argument("--negatives", help="rendered look-alikes (default: render into a temp dir)")
    ap.add_argument("--folds", type=int, default=5, help="outer folds, grouped by organisation")
    ap.add_argument("--inner", type=int, default=3, help="inner folds choosing L2 and threshold")
    ap.add_argument("--check", action="store_true", help="compare with the file on disk; write nothing")
    ap.add_argument("--approvals", help="also learn from this data directory's approvals")
    a = ap.parse_args()
    shared = Path(a.shared)
    if not (shared / "eval" / "labels").is_dir():
        print(f"{shared}/eval/labels: no labels here; pass --shared DIR (the shared folder)", file=sys.stderr)
        return 2
    from bench._corpus import render_pages

    pages = Path(a.pages) if a.pages else render_pages(shared, "postmortems")
    started = time.perf_counter()
    data = labelled_pages(shared, pages)
    if a.approvals:
        from flows.learn import decisions, labelled
        from flows.settings import Settings

        settings = Settings(data_dir=Path(a.approvals))
        approved = [labelled(settings, d) for d in decisions(settings) if d.action == "approved"]
        data += [p for p in approved if p is not None]
    groups = sorted({p.group for p in data})
    trained_on = (
        f"{len(data)} labelled postmortems of {len(groups)} organisations "
        f"(../shared/eval/labels, bench/data/own_labels{' and approvals' if a.approvals else ''}); "
        f"folds grouped by organisation: "
        f"{a.folds} outer, {a.inner} inner"
    )
    weights = train(data, "pending", trained_on, a.folds, a.inner)
    negatives = Path(a.negatives) if a.negatives else render_pages(shared, "negatives")
    from extractors.draft.page_fit import PAGE_SET, dump_page_set

    verdict_pages, org_pages = page_examples(shared, pages, negatives)
    page_models, page_folds, page_lines = fit_pages(verdict_pages, org_pages, a.folds, a.inner)
    weights = weights.model_copy(update={**page_models, "folds": {**weights.folds, **page_folds}})
    # The text decisions (timeline values, evidence sentences): the shipped labels only.
    text, text_folds = train_text(text_pages(shared, pages), a.folds, a.inner)
    weights = weights.model_copy(update={"text": text, "folds": {**weights.folds, **text_folds}})
    digest = hashlib.sha256(dump(weights).encode()).hexdigest()[:10]
    weights = weights.model_copy(update={"version": f"shipped-{digest}"})
    took = time.perf_counter() - started
    print(f"{'field':14} {'l2':>6} {'thr':>5}   {'in-sample':>24}   {'out-of-fold':>24}")
    for name in FIELDS:
        f = weights.folds[name]
        if name == "root_cause":
            ins = f"top1 {f['in_top1']:.3f} top3 {f['in_top3']:.3f}"
            oof = f"top1 {f['oof_top1']:.3f} top3 {f['oof_top3']:.3f}"
        else:
            ins = f"P {f['in_precision']:.3f} R {f['in_recall']:.3f}"
            oof = f"P {f['oof_precision']:.3f} R {f['oof_recall']:.3f}"
        print(f"{name:14} {f['l2']:>6} {f['threshold']:>5}   {ins:>24}   {oof:>24}")
    rules = {name: Tally() for name in FIELDS}  # the rules' own cut-offs, for comparison
    for p in data:
        for name in FIELDS:
            rules[name].add(p, name, hand().field(name))
    for name in FIELDS:
        f = rules[name].figures(name)
        got = (
            f"top1 {f['top1']:.3f} top3 {f['top3']:.3f}"
            if name == "root_cause"
            else f"P {f['precision']:.3f} R {f['recall']:.3f}"
        )
        print(f"{name + ' (rules)':26} {got:>24}")
    print("\n".join(page_lines))
    head = f"{'text decision':24} {'model':>6} {'l2':>6} {'thr':>5}   {'in-sample':>15} {'out-of-fold':>15}"
    print(head + f" {'rules oof':>15}")
    for decision, f in sorted(text_folds.items()):
        timed = decision.startswith("timeline.")
        figs = [
            f"{f[p + 'correct']:.3f}" + (f" inv {f[p + 'invented']:.3f}" if timed else "")
            for p in ("in_", "oof_", "rules_")
        ]
        shipped = "fitted" if f["fitted"] else "rules"
        print(
            f"{decision:24} {shipped:>6} {f['l2']:>6} {f['threshold']:>5}   "
            + " ".join(f"{g:>15}" for g in figs)
        )
    print(f"pages {len(data)}, organisations {len(groups)}, seconds {took:.1f}, version {weights.version}")
    text = dump(weights)
    page_set = dump_page_set(verdict_pages, org_pages)
    if a.check:
        same = SHIPPED.read_text() == text and TRAINING_SET.read_text() == dump_set(data)
        same = same and PAGE_SET.is_file() and PAGE_SET.read_text() == page_set
        print("weights file is " + ("up to date" if same else "stale: run python bench/train.py"))
        return 0 if same else 1
    SHIPPED.write_text(text)
    TRAINING_SET.write_text(dump_set(data))
    PAGE_SET.write_text(page_set)
    print(
        f"wrote {SHIPPED.relative_to(ROOT)}, {TRAINING_SET.relative_to(ROOT)}, {PAGE_SET.relative_to(ROOT)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
