"""Fitting the candidate scorer's weights on labelled pages, judged on folds grouped by organisation.

One labelled page is a `Labelled`: the candidates the drafter weighed on it (with features) and
what a curator said (the gold label of ../shared/eval/labels, our own labels, or an approved
record with the reviewer's edits). `train` fits one model per field (extractors/draft/linear.py):

- outer folds: the organisations split into `k` groups (no organisation in two); each group is
  scored by weights fitted on the others (the out-of-fold figures written beside the weights);
- inner folds: inside each fit, the L2 strength and the keep threshold are chosen on folds of the
  training organisations only (the held-out group is never looked at);
- the shipped model: the same choice on every organisation, fitted on all of them.

Pure and deterministic: fixed fold assignment (organisations sorted), fixed grids, Newton's method
with a fixed iteration bound.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from extractors.draft.candidates import Candidate
from extractors.draft.linear import (
    FEATURES,
    FIELDS,
    SENTENCE_FEATURES,
    TERM_PREFIX,
    TIMELINE_FEATURES,
    FieldSet,
    FieldWeights,
    SentenceModel,
    TextSet,
    TimelineModel,
    Weights,
    fit,
    hand,
    score,
    shipped,
)

L2_GRID: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0)
THRESHOLD_GRID: tuple[float, ...] = (0.3, 0.4, 0.5, 0.6, 0.7)
# Terms a vocabulary field keeps at most (as extractors/draft/data/tags.json "max_terms").
MAX_TERMS: dict[str, int] = {"contributing": 2, "symptoms": 3, "components": 3, "domain": 3}
VOCAB_FIELDS = ("contributing", "symptoms", "components", "domain")


@dataclass(frozen=True)
class Labelled:
    """One labelled page: its organisation (the fold group), the candidates, and the gold."""

    group: str
    key: str
    candidates: Mapping[str, Sequence[Candidate]]
    root_cause: frozenset[str] | None  # acceptable root causes; None when the label says unknown
    must: Mapping[str, frozenset[str]] = field(default_factory=dict)
    may: Mapping[str, frozenset[str]] = field(default_factory=dict)
    weight: float = 1.0  # a reviewer's approval may count more than one shipped label


def from_label(
    group: str, key: str, candidates: Mapping[str, Sequence[Candidate]], label: Mapping
) -> Labelled:
    """A `Labelled` from a label in the ../shared/eval LABELS.md shape."""
    rc = label.get("root_cause") or {}
    best = rc.get("best") if isinstance(rc, Mapping) else rc
    good = frozenset([best, *(rc.get("acceptable") or [])]) if best and best != "unknown" else None
    must, may = {}, {}
    for f in VOCAB_FIELDS:
        gold = label.get(f) or {}
        must[f] = frozenset(gold.get("must") or [])
        may[f] = frozenset(gold.get("may") or [])
    return Labelled(group, key, candidates, good, must, may)


def examples(pages: Sequence[Labelled], name: str) -> list[tuple[dict[str, float], float, float]]:
    """(features, 1 if the term applies else 0, weight) per candidate of `name`. A vocabulary term
    the label allows but does not require ("may") teaches nothing; a page whose root cause the
    label calls unknown teaches nothing about which cause."""
    out = []
    for page in pages:
        for c in page.candidates.get(name, ()):
            if name == "root_cause":
                if page.root_cause is None:
                    continue
                out.append((c.features, float(c.term in page.root_cause), page.weight))
            elif c.term in page.must.get(name, ()):
                out.append((c.features, 1.0, page.weight))
            elif c.term not in page.may.get(name, ()):
                out.append((c.features, 0.0, page.weight))
    return out


def kept(page: Labelled, name: str, model: FieldWeights) -> list[str]:
    """What the drafter keeps for `name` with `model` (as extractors/draft/tags.py does)."""
    ranked = sorted(
        page.candidates.get(name, ()), key=lambda c: (-score(c.features, model), -c.rule_value, c.term)
    )
    keep = [c.term for c in ranked if score(c.features, model) >= model.threshold]
    return keep[:1] if name == "root_cause" else keep[: MAX_TERMS[name]]


def top(page: Labelled, model: FieldWeights, n: int = 3) -> list[str]:
    ranked = sorted(
        page.candidates.get("root_cause", ()),
        key=lambda c: (-score(c.features, model), -c.rule_value, c.term),
    )
    return [c.term for c in ranked[:n]]


@dataclass
class Tally:
    """Counts the reference scorer keeps: vocabulary recall / precision, root cause top-1 / top-3."""

    correct: int = 0  # kept and allowed (must or may)
    kept: int = 0
    found: int = 0  # required and kept
    required: int = 0
    pages: int = 0
    top1: int = 0
    top3: int = 0
    unknown_right: int = 0  # root cause: the label says unknown and so does the draft
    unknown_pages: int = 0

    def add(self, page: Labelled, name: str, model: FieldWeights) -> None:
        got = kept(page, name, model)
        if name == "root_cause":
            if page.root_cause is None:
                self.unknown_pages += 1
                self.unknown_right += int(not got)
                return
            self.pages += 1
            self.top1 += int(bool(got) and got[0] in page.root_cause)
            self.top3 += int(bool(page.root_cause & set(top(page, model, 3))))
            return
        must, allowed = (
            page.must.get(name, frozenset()),
            page.must.get(name, frozenset()) | page.may.get(name, frozenset()),
        )
        self.kept += len(got)
        self.correct += sum(t in allowed for t in got)
        self.required += len(must)
        self.found += sum(t in must for t in got)

    def objective(self, name: str) -> float:
        """What the inner folds maximise: F1 of precision and recall (vocabulary), accuracy over
        every page, an unknown cause included (root cause: a guess where the page names none is
        wrong)."""
        if name == "root_cause":
            return (self.top1 + self.unknown_right) / max(1, self.pages + self.unknown_pages)
        p = self.correct / self.kept if self.kept else 0.0
        r = self.found / self.required if self.required else 0.0
        return 2 * p * r / (p + r) if p + r else 0.0

    def figures(self, name: str) -> dict[str, float]:
        if name == "root_cause":
            return {
                "top1": round(self.top1 / max(1, self.pages), 4),
                "top3": round(self.top3 / max(1, self.pages), 4),
                "pages": float(self.pages),
            }
        return {
            "precision": round(self.correct / max(1, self.kept), 4),
            "recall": round(self.found / max(1, self.required), 4),
            "kept": float(self.kept),
            "required": float(self.required),
        }


def grouped_folds(groups: Sequence[str], k: int) -> list[frozenset[str]]:
    """`k` sets of organisations (fewer when there are fewer organisations), assigned by size,
    largest first, each to the smallest set so far (ties: the first): deterministic."""
    sizes: dict[str, int] = {}
    for g in groups:
        sizes[g] = sizes.get(g, 0) + 1
    k = max(1, min(k, len(sizes)))
    folds: list[list[str]] = [[] for _ in range(k)]
    load = [0] * k
    for g in sorted(sizes, key=lambda g: (-sizes[g], g)):
        i = min(range(k), key=lambda j: (load[j], j))
        folds[i].append(g)
        load[i] += sizes[g]
    return [frozenset(f) for f in folds if f]


def fit_field(pages: Sequence[Labelled], name: str, l2: float, threshold: float) -> FieldWeights:
    rows = examples(pages, name)
    terms = sorted({n for f, _y, _w in rows for n in f if n.startswith(TERM_PREFIX)})
    bias, weights = fit(rows, l2, (*FEATURES, *terms))
    return FieldWeights(
        bias=bias, weights={k: v for k, v in weights.items() if v}, threshold=threshold, l2=l2
    )


def choose(pages: Sequence[Labelled], name: str, inner_k: int = 3) -> FieldWeights:
    """The L2 strength and threshold with the best objective on inner grouped folds of `pages`,
    then fitted on all of `pages` (ties: the stronger penalty, then the threshold nearest 0.5)."""
    folds = grouped_folds([p.group for p in pages], inner_k)
    best: tuple[float, float, float, float] | None = None
    for l2 in L2_GRID:
        tallies = {t: Tally() for t in THRESHOLD_GRID}
        for held in folds:
            train = [p for p in pages if p.group not in held]
            fitted = fit_field(train, name, l2, 0.5)
            for t in THRESHOLD_GRID:
                model = fitted.model_copy(update={"threshold": t})
                for p in pages:
                    if p.group in held:
                        tallies[t].add(p, name, model)
        for t, tally in tallies.items():
            key = (round(tally.objective(name), 6), l2, -abs(t - 0.5), t)
            if best is None or key > best:
                best = key
    assert best is not None
    # The rules' own cut-offs compete too (a fixed model: nothing fitted): a field whose fit does
    # not beat them on the inner folds keeps them.
    rules = Tally()
    for p in pages:
        rules.add(p, name, hand().field(name))
    if round(rules.objective(name), 6) > best[0]:
        return hand().field(name)
    return fit_field(pages, name, best[1], best[3])


def out_of_fold(
    pages: Sequence[Labelled], k: int = 5, inner_k: int = 3
) -> tuple[dict[str, Tally], list[Weights]]:
    """Each outer fold's pages scored with weights chosen and fitted without its organisations:
    the tallies per field, and each fold's weights (their `trained_on` names the held-out orgs)."""
    tallies = {name: Tally() for name in FIELDS}
    fold_weights = []
    for held in grouped_folds([p.group for p in pages], k):
        train = [p for p in pages if p.group not in held]
        models = {name: choose(train, name, inner_k) for name in FIELDS}
        for p in pages:
            if p.group in held:
                for name in FIELDS:
                    tallies[name].add(p, name, models[name])
        fold_weights.append(
            Weights(
                version="fold", trained_on="held out: " + " ".join(sorted(held)), fields=FieldSet(**models)
            )
        )
    return tallies, fold_weights


def train(pages: Sequence[Labelled], version: str, trained_on: str, k: int = 5, inner_k: int = 3) -> Weights:
    """The shipped weights: chosen and fitted on every page; `folds` holds the out-of-fold and
    in-sample figures of the same procedure, and the L2 / threshold each field took."""
    tallies, _ = out_of_fold(pages, k, inner_k)
    models = {name: choose(pages, name, inner_k) for name in FIELDS}
    folds: dict[str, dict[str, float]] = {}
    for name in FIELDS:
        inside = Tally()
        for p in pages:
            inside.add(p, name, models[name])
        folds[name] = {
            "l2": models[name].l2,
            "threshold": models[name].threshold,
            **{"oof_" + k_: v for k_, v in tallies[name].figures(name).items()},
            **{"in_" + k_: v for k_, v in inside.figures(name).items()},
        }
    return Weights(version=version, trained_on=trained_on, fields=FieldSet(**models), folds=folds)


def refit(pages: Sequence[Labelled], note: str, prefix: str = "learned") -> Weights:
    """Weights chosen (L2, threshold on inner grouped folds) and fitted on `pages`; the version
    names their content (`prefix`-<sha256 of the models>)."""
    models = {name: choose(pages, name) for name in FIELDS}
    fields = FieldSet(**models)
    digest = hashlib.sha256(json.dumps(fields.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()[
        :10
    ]
    folds = {name: {"l2": models[name].l2, "threshold": models[name].threshold} for name in FIELDS}
    # The text decisions are not learned from approvals yet: the shipped ones carry over.
    text = shipped().text
    return Weights(version=f"{prefix}-{digest}", trained_on=note, fields=fields, folds=folds, text=text)


@dataclass(frozen=True)
class Step:
    """One point of a learning curve: pages `first`..`last` (1-based, in the order given), each
    scored with weights fitted on the base set and the pages before `first` only."""

    first: int
    last: int
    root_cause: Tally
    vocabulary: Tally
    before: Tally  # root cause with the starting weights, for comparison
    vocabulary_before: Tally


def replay(base: Sequence[Labelled], pages: Sequence[Labelled], start: Weights, steps: int = 5) -> list[Step]:
    """`pages` (approvals, oldest first) in `steps` groups; each group scored with weights refitted
    on `base` and every earlier page (the first group: `start`), and beside with `start`."""
    size = max(1, -(-len(pages) // max(1, steps)))
    out = []
    for first in range(0, len(pages), size):
        group = pages[first : first + size]
        seen = [*base, *pages[:first]]
        weights = refit(seen, "replay") if first and seen else start
        step = Step(first + 1, first + len(group), Tally(), Tally(), Tally(), Tally())
        for page in group:
            step.root_cause.add(page, "root_cause", weights.field("root_cause"))
            step.before.add(page, "root_cause", start.field("root_cause"))
            for name in VOCAB_FIELDS:
                step.vocabulary.add(page, name, weights.field(name))
                step.vocabulary_before.add(page, name, start.field(name))
        out.append(step)
    return out


# --- the shipped training set: what bench/train.py fitted on, kept so `incidents learn` can refit
# on it plus a data directory's approvals (features and gold terms only: no page text).

TRAINING_SET = Path(__file__).with_name("data") / "training_set.json"


def dump_set(pages: Sequence[Labelled]) -> str:
    rows = [
        {
            "group": p.group,
            "key": p.key,
            "root_cause": sorted(p.root_cause) if p.root_cause is not None else None,
            "must": {f: sorted(v) for f, v in sorted(p.must.items())},
            "may": {f: sorted(v) for f, v in sorted(p.may.items())},
            "candidates": {
                f: [
                    {"term": c.term, "rule_value": round(c.rule_value, 6), "features": c.features} for c in cs
                ]
                for f, cs in sorted(p.candidates.items())
            },
        }
        for p in pages
    ]
    return json.dumps(rows, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def load_set(text: str) -> list[Labelled]:
    out = []
    for row in json.loads(text):
        cands = {
            f: [Candidate(c["term"], float(c["rule_value"]), dict(c["features"])) for c in cs]
            for f, cs in row["candidates"].items()
        }
        rc = row["root_cause"]
        out.append(
            Labelled(
                row["group"],
                row["key"],
                cands,
                frozenset(rc) if rc is not None else None,
                {f: frozenset(v) for f, v in row["must"].items()},
                {f: frozenset(v) for f, v in row["may"].items()},
            )
        )
    return out


def shipped_set() -> list[Labelled]:
    """The labelled pages the shipped weights were fitted on (empty when the file is missing)."""
    if not TRAINING_SET.is_file():
        return []
    return load_set(TRAINING_SET.read_text(encoding="utf-8"))


# --- the text decisions (issue 34, i34-text): the timeline's values and the text fields' evidence
# sentences, fitted the same way (grouped outer folds, L2 and threshold on inner folds, the rules
# competing as a fixed model). A page's candidates come from extractors/draft/timeline.py
# `proposals` and text_fields.py `sentence_candidates`; the gold is the label's durations and
# evidence quotes (as numbers and candidate ids: no page text).


@dataclass(frozen=True)
class TextLabelled:
    """One labelled page for the text decisions: candidates per decision and which are right."""

    group: str
    key: str
    candidates: Mapping[str, Sequence[Candidate]]  # "timeline.<key>" / "evidence.<field>"
    right: Mapping[str, frozenset[str]]  # the candidates' terms that are right, per decision
    has_gold: Mapping[str, bool]  # whether the label gives the decision a value at all


def within(got_s: float, gold_s: float) -> bool:
    """The reference scorer's tolerance for a duration: 10 minutes or a tenth of it."""
    return abs(got_s - gold_s) <= max(600.0, 0.1 * gold_s)


def text_model(
    decision: str, bias: float, weights: dict[str, float], threshold: float, l2: float
) -> FieldWeights:
    cls = TimelineModel if decision.startswith("timeline.") else SentenceModel
    return cls(bias=bias, weights=weights, threshold=threshold, l2=l2)


def text_rules(decision: str) -> FieldWeights:
    """The rules' own choice as a model: the candidate the rules pick scores 0.95, others 0.05."""
    return text_model(decision, -3.0, {"rule": 6.0}, 0.5, 0.0)


def picked(page: TextLabelled, decision: str, model: FieldWeights) -> list[str]:
    """What the drafter keeps (as extractors/draft/timeline.py and text_fields.py do): a timeline
    key its best candidate at or above the threshold; a text field the rules' sentences and the
    best other one at or above it (text_fields.MAX_ADDED)."""
    cands = page.candidates.get(decision, ())
    if decision.startswith("timeline."):
        ranked = sorted(cands, key=lambda c: (-score(c.features, model), -c.rule_value))
        return [c.term for c in ranked[:1] if score(c.features, model) >= model.threshold]
    rules = [c.term for c in cands if c.rule_value]
    if model.weights == {"rule": 6.0}:
        return rules  # the rules alone
    others = sorted((c for c in cands if not c.rule_value), key=lambda c: -score(c.features, model))
    return rules + [c.term for c in others[:MAX_ADDED] if score(c.features, model) >= model.threshold]


MAX_ADDED = 1  # as extractors/draft/text_fields.py MAX_ADDED
# What an added sentence costs where the label quotes nothing for the field (the reference scorer
# does not count it; a reviewer reads it).
EVIDENCE_NOISE = 0.1
# Thresholds tried for an evidence model: a sentence's probability is low (few sentences of a page
# are a field's evidence), so lower cut-offs than a vocabulary term's.
EVIDENCE_THRESHOLDS: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5)


@dataclass
class TextTally:
    """Timeline: correct (gold value, drafted within tolerance), invented (no gold, drafted).
    Evidence: found (gold quotes, a kept sentence matches one), as the reference scorer counts."""

    right: int = 0
    gold: int = 0
    invented: int = 0
    no_gold: int = 0

    def add(self, page: TextLabelled, decision: str, model: FieldWeights) -> None:
        got = picked(page, decision, model)
        if page.has_gold.get(decision):
            self.gold += 1
            self.right += int(any(t in page.right.get(decision, ()) for t in got))
        else:
            self.no_gold += 1
            if decision.startswith("timeline."):
                self.invented += int(bool(got))
            else:  # evidence: a sentence added to the rules' where the label quotes none
                rules = {c.term for c in page.candidates.get(decision, ()) if c.rule_value}
                self.invented += int(bool(set(got) - rules))

    def objective(self, decision: str) -> float:
        """Timeline: share of keys right (a value within tolerance, or null where the label has
        none); evidence: share of fields with gold quotes found, less a tenth of the fields where
        a sentence was added though the label quotes none (EVIDENCE_NOISE)."""
        if decision.startswith("timeline."):
            return (self.right + self.no_gold - self.invented) / max(1, self.gold + self.no_gold)
        return (self.right - EVIDENCE_NOISE * self.invented) / max(1, self.gold)

    def figures(self) -> dict[str, float]:
        return {
            "correct": round(self.right / max(1, self.gold), 4),
            "invented": round(self.invented / max(1, self.no_gold), 4),
            "gold": float(self.gold),
            "no_gold": float(self.no_gold),
        }


def text_examples(
    pages: Sequence[TextLabelled], decision: str
) -> list[tuple[dict[str, float], float, float]]:
    out = []
    for page in pages:
        right = page.right.get(decision, frozenset())
        for c in page.candidates.get(decision, ()):
            out.append((c.features, float(c.term in right), 1.0))
    return out


def fit_text(pages: Sequence[TextLabelled], decision: str, l2: float, threshold: float) -> FieldWeights:
    names = TIMELINE_FEATURES if decision.startswith("timeline.") else SENTENCE_FEATURES
    bias, weights = fit(text_examples(pages, decision), l2, names)
    return text_model(decision, bias, {k: v for k, v in weights.items() if v}, threshold, l2)


def choose_text(pages: Sequence[TextLabelled], decision: str, inner_k: int = 3) -> FieldWeights | None:
    """The L2 strength and threshold with the best objective on inner grouped folds, fitted on all
    of `pages`; None when the rules do as well or better on those folds (the rules stay)."""
    folds = grouped_folds([p.group for p in pages], inner_k)
    best: tuple[float, float, float, float] | None = None
    rules = TextTally()
    for held in folds:
        for p in pages:
            if p.group in held:
                rules.add(p, decision, text_rules(decision))
    grid = THRESHOLD_GRID if decision.startswith("timeline.") else EVIDENCE_THRESHOLDS
    for l2 in L2_GRID:
        tallies = {t: TextTally() for t in grid}
        for held in folds:
            train = [p for p in pages if p.group not in held]
            fitted = fit_text(train, decision, l2, 0.5)
            for t in grid:
                model = fitted.model_copy(update={"threshold": t})
                for p in pages:
                    if p.group in held:
                        tallies[t].add(p, decision, model)
        for t, tally in tallies.items():
            key = (round(tally.objective(decision), 6), l2, -abs(t - 0.5), t)
            if best is None or key > best:
                best = key
    if best is None or round(rules.objective(decision), 6) >= best[0]:
        return None
    return fit_text(pages, decision, best[1], best[3])


def text_decisions(pages: Sequence[TextLabelled]) -> list[str]:
    return sorted({d for p in pages for d in p.candidates})


def text_out_of_fold(
    pages: Sequence[TextLabelled], k: int = 5, inner_k: int = 3
) -> tuple[dict[str, TextTally], dict[str, TextTally], dict[str, TextSet]]:
    """Out-of-fold tallies of the fitted choice and of the rules per decision, and each held-out
    organisation's text models (fitted without it)."""
    fitted = {d: TextTally() for d in text_decisions(pages)}
    rules = {d: TextTally() for d in text_decisions(pages)}
    by_org: dict[str, TextSet] = {}
    for held in grouped_folds([p.group for p in pages], k):
        train = [p for p in pages if p.group not in held]
        models = {d: choose_text(train, d, inner_k) for d in fitted}
        for p in pages:
            if p.group in held:
                for d in fitted:
                    m = models[d]
                    fitted[d].add(p, d, m if m is not None else text_rules(d))
                    rules[d].add(p, d, text_rules(d))
        text = text_set(models)
        for g in held:
            by_org[g] = text
    return fitted, rules, by_org


def text_set(models: Mapping[str, FieldWeights | None]) -> TextSet:
    timeline = {d.split(".", 1)[1]: m for d, m in sorted(models.items()) if m and d.startswith("timeline.")}
    evidence = {d.split(".", 1)[1]: m for d, m in sorted(models.items()) if m and d.startswith("evidence.")}
    return TextSet.model_validate({"timeline": timeline, "evidence": evidence})


def train_text(
    pages: Sequence[TextLabelled], k: int = 5, inner_k: int = 3
) -> tuple[TextSet, dict[str, dict[str, float]]]:
    """The shipped text models (chosen on every page) and, per decision, the fold figures that
    chose them: out-of-fold fitted (`oof_*`) beside the rules' (`rules_*`) and in-sample (`in_*`)."""
    fitted, rules, _ = text_out_of_fold(pages, k, inner_k)
    # A decision lands only where the procedure's out-of-fold figure beats the rules' (a tie keeps
    # the rules: same quality, less work per page).
    models = {
        d: choose_text(pages, d, inner_k) if fitted[d].objective(d) > rules[d].objective(d) else None
        for d in fitted
    }
    folds: dict[str, dict[str, float]] = {}
    for d in fitted:
        inside = TextTally()
        m = models[d]
        for p in pages:
            inside.add(p, d, m if m is not None else text_rules(d))
        folds[d] = {
            "fitted": float(m is not None),
            "l2": m.l2 if m is not None else 0.0,
            "threshold": m.threshold if m is not None else 0.5,
            **{"oof_" + k_: v for k_, v in fitted[d].figures().items()},
            **{"rules_" + k_: v for k_, v in rules[d].figures().items()},
            **{"in_" + k_: v for k_, v in inside.figures().items()},
        }
    return text_set(models), folds
