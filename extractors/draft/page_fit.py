"""Fitting the page decisions, the postmortem verdict and the org, judged on folds grouped by organisation.

Each labelled page gives one verdict example (its features from `gate.weigh`, whether it is a
postmortem, what the rules said) and, when it is a postmortem with a labelled org, one org example
(its candidates from `identity.org_candidates`, each marked whether the reference scorer accepts it).
As for the vocabulary fields (extractors/draft/training.py), outer folds grouped by organisation
give the out-of-fold figures; inside each fit, inner grouped folds choose the L2 strength, and the
skip cut-off (verdict) or the confidence threshold (org). A model whose inner-fold figures do not
beat the rules' is not shipped: the rules decide (weights.json `verdict` / `org` stay null).

Pure and deterministic; the training set holds numbers and flags only, never page text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from extractors.draft.linear import (
    ORG_FEATURES,
    VERDICT_FEATURES,
    OrgWeights,
    VerdictWeights,
    fit,
    page_score,
)
from extractors.draft.training import L2_GRID, grouped_folds

KINDS = ("postmortem", "look-alike", "generic")
# The triage targets: real postmortems skipped at most, generic articles skipped at least.
MAX_POSTMORTEMS_SKIPPED = 0.02
MIN_GENERIC_SKIPPED = 0.97
MAX_LOOK_ALIKES_SKIPPED = 0.5  # most look-alikes are queued as doubtful: one bulk rejection
SKIP_GRID: tuple[float, ...] = tuple(round(0.01 * i, 2) for i in range(1, 51))
ORG_THRESHOLDS: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
# Each kind weighs the same in the fit (generic articles outnumber the rest).
KIND_SHARE = {"postmortem": 0.5, "look-alike": 0.25, "generic": 0.25}


@dataclass(frozen=True)
class PageExample:
    """One page for the verdict: its fold group, kind, features and the rules' verdict."""

    group: str
    key: str
    kind: str  # postmortem, look-alike, generic
    features: Mapping[str, float]
    rule_verdict: bool
    rule_skip: bool


@dataclass(frozen=True)
class OrgExample:
    """One labelled postmortem for the org: its candidates' features and which the scorer accepts."""

    group: str
    key: str
    # features, accepted (the reference scorer: the name or the slug), from the domain, the name
    # alone accepted (what the fit learns: a name, not only a slug, that a curator would write)
    candidates: Sequence[tuple[Mapping[str, float], bool, bool, bool]]


# --- the verdict ---------------------------------------------------------------------------------


@dataclass
class VerdictTally:
    """Per kind: pages, said "yes", skipped."""

    pages: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    yes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))

    def add(self, kind: str, verdict: bool, skip: bool) -> None:
        self.pages[kind] += 1
        self.yes[kind] += int(verdict)
        self.skipped[kind] += int(skip)

    def share(self, what: str, kind: str) -> float:
        n = self.pages[kind]
        return (self.yes if what == "yes" else self.skipped)[kind] / n if n else 0.0

    def accuracy(self) -> float:
        """The mean over kinds of a right verdict (postmortem: yes; others: no)."""
        got = [
            self.share("yes", k) if k == "postmortem" else 1 - self.share("yes", k)
            for k in KINDS
            if self.pages[k]
        ]
        return sum(got) / len(got) if got else 0.0

    def meets(self) -> bool:
        """The triage targets: postmortems skipped, generic articles skipped."""
        return self.share("skip", "postmortem") <= MAX_POSTMORTEMS_SKIPPED and (
            not self.pages["generic"] or self.share("skip", "generic") >= MIN_GENERIC_SKIPPED
        )

    def figures(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for k in KINDS:
            key = k.replace("-", "_")
            out[f"{key}_pages"] = float(self.pages[k])
            out[f"{key}_yes"] = float(self.yes[k])
            out[f"{key}_skipped"] = float(self.skipped[k])
        return out


def _weights(pages: Sequence[PageExample]) -> dict[str, float]:
    counts = {k: sum(p.kind == k for p in pages) for k in KINDS}
    present = {k: KIND_SHARE[k] for k in KINDS if counts[k]}
    total = sum(present.values()) or 1.0
    return {k: len(pages) * present[k] / total / counts[k] for k in present}


def fit_verdict(pages: Sequence[PageExample], l2: float, skip_below: float) -> VerdictWeights:
    w = _weights(pages)
    rows = [(p.features, float(p.kind == "postmortem"), w[p.kind]) for p in pages]
    bias, weights = fit(rows, l2, VERDICT_FEATURES)
    return VerdictWeights(
        bias=bias, weights={k: v for k, v in weights.items() if v}, skip_below=skip_below, l2=l2
    )


def decide(page: PageExample, model: VerdictWeights | None) -> tuple[bool, bool]:
    """(verdict, skip) with `model`, or the rules' own when None."""
    if model is None:
        return page.rule_verdict, page.rule_skip
    p = page_score(page.features, model)
    return p >= 0.5, p < model.skip_below


def pick_skip(points: Sequence[tuple[str, float]]) -> float:
    """The skip cut-off for these (kind, probability) points: among the cut-offs that meet the
    triage targets and skip at most half the look-alikes, the middle one; when none does, the
    highest that skips no more postmortems than the target allows."""
    pms = [p for k, p in points if k == "postmortem"]
    gen = [p for k, p in points if k == "generic"]
    looks = [p for k, p in points if k == "look-alike"]

    def share(ps: list[float], cut: float) -> float:
        return sum(p < cut for p in ps) / len(ps) if ps else 0.0

    safe = [c for c in SKIP_GRID if share(pms, c) <= MAX_POSTMORTEMS_SKIPPED]
    good = [
        c
        for c in safe
        if (not gen or share(gen, c) >= MIN_GENERIC_SKIPPED) and share(looks, c) <= MAX_LOOK_ALIKES_SKIPPED
    ]
    if good:
        return good[len(good) // 2]
    return max(safe, default=SKIP_GRID[0])


def choose_verdict(
    pages: Sequence[PageExample], inner_k: int = 3, rules: bool = True
) -> VerdictWeights | None:
    """L2 and skip cut-off chosen on inner grouped folds of `pages`, fitted on all of them; None
    when the rules do better on those folds (their verdicts right more often, or the fit misses
    a triage target the rules meet)."""
    folds = grouped_folds([p.group for p in pages], inner_k)
    best: tuple[tuple[float, ...], float, float] | None = None
    for l2 in L2_GRID:
        points: list[tuple[str, float]] = []
        held_pages: list[PageExample] = []
        for held in folds:
            model = fit_verdict([p for p in pages if p.group not in held], l2, 0.5)
            for p in pages:
                if p.group in held:
                    points.append((p.kind, page_score(p.features, model)))
                    held_pages.append(p)
        cut = pick_skip(points)
        tally = VerdictTally()
        for (kind, prob), _p in zip(points, held_pages, strict=True):
            tally.add(kind, prob >= 0.5, prob < cut)
        key = (float(tally.meets()), round(tally.accuracy(), 6), l2)
        if best is None or key > best[0]:
            best = (key, l2, cut)
    assert best is not None
    return fit_verdict(pages, best[1], best[2])


def verdict_out_of_fold(pages: Sequence[PageExample], k: int = 5, inner_k: int = 3) -> VerdictTally:
    """Each outer fold's pages decided by a model chosen and fitted without its groups."""
    tally = VerdictTally()
    for held in grouped_folds([p.group for p in pages], k):
        model = choose_verdict([p for p in pages if p.group not in held], inner_k)
        for p in pages:
            if p.group in held:
                tally.add(p.kind, *decide(p, model))
    return tally


def verdict_no_worse(fit: VerdictTally, rules: VerdictTally) -> bool:
    """Whether the fit's figures are each at least the rules': postmortems said yes and not
    skipped, look-alikes said no, generic articles said no and skipped."""
    return (
        fit.yes["postmortem"] >= rules.yes["postmortem"]
        and fit.skipped["postmortem"] <= rules.skipped["postmortem"]
        and fit.yes["look-alike"] <= rules.yes["look-alike"]
        and fit.yes["generic"] <= rules.yes["generic"]
        and fit.skipped["generic"] >= rules.skipped["generic"]
    )


# --- the org -------------------------------------------------------------------------------------


@dataclass
class OrgTally:
    right: int = 0
    wrong: int = 0  # a name the scorer does not accept
    unknown: int = 0
    pages: int = 0
    named: int = 0  # right, and the very name a curator wrote (not only a slug the scorer accepts)

    def add(self, page: OrgExample, model: OrgWeights | None) -> None:
        self.pages += 1
        got = pick_org(page, model)
        if got is None:
            self.unknown += 1
        elif page.candidates[got][1]:
            self.right += 1
            self.named += int(page.candidates[got][3])
        else:
            self.wrong += 1

    def key(self) -> tuple[int, int, int]:
        """What the inner folds maximise: right orgs, then fewer wrong ones (unknown beats a
        guess), then the curator's own names."""
        return self.right, -self.wrong, self.named

    def figures(self) -> dict[str, float]:
        return {
            "accuracy": round(self.right / max(1, self.pages), 4),
            "wrong": float(self.wrong),
            "unknown": float(self.unknown),
            "named": float(self.named),
            "pages": float(self.pages),
        }


def pick_org(page: OrgExample, model: OrgWeights | None) -> int | None:
    """The index of the candidate taken (as identity.draft_org does), or None for unknown: the
    rules' pick (registry > site > team > domain), kept when `model` is confident in it, else the
    publisher from the domain, else unknown."""
    cands = page.candidates
    rule = next((i for i, (f, *_rest) in enumerate(cands) if f.get("rule_pick")), None)
    if model is None or rule is None or page_score(cands[rule][0], model) >= model.threshold:
        return rule
    return next((i for i, (_f, _ok, domain, _n) in enumerate(cands) if domain), None)


def fit_org(pages: Sequence[OrgExample], l2: float, threshold: float) -> OrgWeights:
    """p(the rules' pick is the organisation), fitted on each page's pick (the reference
    scorer's verdict on it)."""
    rows = [(f, float(ok), 1.0) for p in pages for f, ok, _d, _n in p.candidates if f.get("rule_pick")]
    bias, weights = fit(rows, l2, ORG_FEATURES)
    return OrgWeights(bias=bias, weights={k: v for k, v in weights.items() if v}, threshold=threshold, l2=l2)


def _log_loss(pages: Sequence[OrgExample], model: OrgWeights) -> float:
    """The log loss of the rules' picks."""
    loss = 0.0
    for p in pages:
        for f, ok, _d, _n in p.candidates:
            if f.get("rule_pick"):
                q = min(max(page_score(f, model), 1e-4), 1 - 1e-4)
                loss -= math.log(q if ok else 1 - q)
    return loss


def choose_org(pages: Sequence[OrgExample], inner_k: int = 3) -> OrgWeights:
    """L2 and threshold chosen on inner grouped folds (right orgs, then fewer wrong ones, then the
    log loss of the candidates: a calibrated model), fitted on all of `pages`."""
    folds = grouped_folds([p.group for p in pages], inner_k)
    best: tuple[tuple[int, int, int, float, float, float], OrgWeights] | None = None
    for l2 in L2_GRID:
        tallies = {t: OrgTally() for t in ORG_THRESHOLDS}
        loss = 0.0
        for held in folds:
            fitted = fit_org([p for p in pages if p.group not in held], l2, 0.5)
            loss += _log_loss([p for p in pages if p.group in held], fitted)
            for t in ORG_THRESHOLDS:
                model = fitted.model_copy(update={"threshold": t})
                for p in pages:
                    if p.group in held:
                        tallies[t].add(p, model)
        for t, tally in tallies.items():
            key = (*tally.key(), -round(loss, 6), l2, -abs(t - 0.5))
            if best is None or key > best[0]:
                best = (key, OrgWeights(bias=0.0, weights={}, threshold=t, l2=l2))
    assert best is not None
    return fit_org(pages, best[1].l2, best[1].threshold)


def org_out_of_fold(pages: Sequence[OrgExample], k: int = 5, inner_k: int = 3) -> OrgTally:
    """As `verdict_out_of_fold`, for the org."""
    tally = OrgTally()
    for held in grouped_folds([p.group for p in pages], k):
        model = choose_org([p for p in pages if p.group not in held], inner_k)
        for p in pages:
            if p.group in held:
                tally.add(p, model)
    return tally


# --- what ships --------------------------------------------------------------------------------


@dataclass
class Decision:
    """One page decision's fit: the model to ship (None: the rules stay, the fit was worse out of
    fold), and the figures that chose it."""

    model: VerdictWeights | OrgWeights | None
    rules: VerdictTally | OrgTally
    in_sample: VerdictTally | OrgTally
    out_of_fold: VerdictTally | OrgTally
    landed: bool


def decide_verdict(pages: Sequence[PageExample], k: int = 5, inner_k: int = 3) -> Decision:
    rules, inside = VerdictTally(), VerdictTally()
    model = choose_verdict(pages, inner_k)
    for p in pages:
        rules.add(p.kind, *decide(p, None))
        inside.add(p.kind, *decide(p, model))
    oof = verdict_out_of_fold(pages, k, inner_k)
    landed = verdict_no_worse(oof, rules)
    return Decision(model if landed else None, rules, inside, oof, landed)


def decide_org(pages: Sequence[OrgExample], k: int = 5, inner_k: int = 3) -> Decision:
    rules, inside = OrgTally(), OrgTally()
    model = choose_org(pages, inner_k)
    for p in pages:
        rules.add(p, None)
        inside.add(p, model)
    oof = org_out_of_fold(pages, k, inner_k)
    landed = oof.right >= rules.right and oof.wrong <= rules.wrong and oof.named >= rules.named
    return Decision(model if landed else None, rules, inside, oof, landed)


# --- the training set: numbers and flags, no page text --------------------------------------------

PAGE_SET = Path(__file__).with_name("data") / "page_set.json"


def dump_page_set(verdict: Sequence[PageExample], org: Sequence[OrgExample]) -> str:
    data = {
        "verdict": [
            {
                "group": p.group,
                "key": p.key,
                "kind": p.kind,
                "features": dict(sorted(p.features.items())),
                "rule_verdict": p.rule_verdict,
                "rule_skip": p.rule_skip,
            }
            for p in verdict
        ],
        "org": [
            {
                "group": p.group,
                "key": p.key,
                "candidates": [
                    {"features": dict(sorted(f.items())), "accepted": ok, "domain": d, "named": n}
                    for f, ok, d, n in p.candidates
                ],
            }
            for p in org
        ],
    }
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def load_page_set(text: str) -> tuple[list[PageExample], list[OrgExample]]:
    data = json.loads(text)
    verdict = [
        PageExample(r["group"], r["key"], r["kind"], r["features"], r["rule_verdict"], r["rule_skip"])
        for r in data["verdict"]
    ]
    org = [
        OrgExample(
            r["group"],
            r["key"],
            [(c["features"], c["accepted"], c["domain"], c["named"]) for c in r["candidates"]],
        )
        for r in data["org"]
    ]
    return verdict, org
