"""A small regularised linear scorer: a candidate's features in, a probability out (logistic).

The drafter's rules find candidates (a vocabulary term a sentence names, a root cause) and describe
each by features (the rule's own weighted count, whether the rules alone would keep it, where the
page names it, how often, whether a mention is negated). How much each feature counts is fitted on
labelled pages by `bench/train.py` (grouped k-fold by organisation, L2 strength chosen on inner
folds) and by `incidents learn` on a data directory's approvals. Weights are a data file
(data/weights.json) read into typed models: a misspelt field or feature name is an error, not a
silently empty weight. Scoring is a sorted sum and one exp(): no new runtime dependency, and the
same inputs give the same bits on every run.

`fit` is the one trainer (pure Python, Newton's method on the L2-penalised log loss): a few
hundred candidates of about twenty features each fit in milliseconds, so `incidents learn` needs
no numerical library either.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, field_validator

# Every feature a candidate may carry (extractors/draft/candidates.py computes them). A weight
# table naming another is refused.
FEATURES: tuple[str, ...] = (
    "rule_score",  # log(1 + the rules' weighted mention count: role weights, cue boosts, saturation)
    "rule_kept",  # 1 when the hand-set cut-offs alone would keep the term (threshold, relative, max)
    "rule_rank",  # 1 / (1 + the term's rank by rule score among the field's candidates)
    "relative",  # rule score / the field's best rule score
    "mentions",  # log(1 + number of sentences that report it)
    "first_position",  # where the first mention stands in the page (0 = top, 1 = end)
    "in_title",  # the title names it
    "in_summary",  # a mention in a summary section
    "in_cause",  # ... in a root cause, trigger or contributing-factors section
    "in_impact",  # ... in an impact, symptoms or detection section
    "in_timeline",  # ... in a timeline section
    "in_fix",  # ... in remediation, lessons or action items
    "in_other",  # ... in background or an unnamed section
    "cause_cue",  # a mention in a sentence that states a cause ("because", 원인, 原因)
    "negated",  # log(1 + mentions dropped as negated or hypothetical: "no data was lost")
    "inherited",  # domain only: implied by a drafted component or the root cause
)
TERM_PREFIX = "term:"  # plus a vocabulary term: 1 for that term's candidate (how often it applies)


def known_feature(name: str) -> bool:
    return name in FEATURES or (name.startswith(TERM_PREFIX) and len(name) > len(TERM_PREFIX))


FIELDS: tuple[str, ...] = ("root_cause", "contributing", "symptoms", "components", "domain")
SHIPPED = Path(__file__).with_name("data") / "weights.json"


class FieldWeights(BaseModel):
    """One field's model: p(term applies) = logistic(bias + sum(weight * feature))."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bias: float
    weights: dict[str, float]
    threshold: float = 0.5  # keep a candidate whose probability reaches this
    l2: float = 1.0  # the regularisation strength the folds chose (for the record)

    @field_validator("weights")
    @classmethod
    def _known(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(n for n in value if not known_feature(n))
        if unknown:
            raise ValueError(f"unknown feature(s) {', '.join(unknown)}; known: {', '.join(FEATURES)}")
        return value


class FieldSet(BaseModel):
    """A model per decision (each field named: a misspelt one is an error)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    root_cause: FieldWeights
    contributing: FieldWeights
    symptoms: FieldWeights
    components: FieldWeights
    domain: FieldWeights


# --- the text fields' decisions (issue 34, i34-text): which stated times are the timeline's first
# impact, detection and recovery; which sentences are a text field's evidence. Their candidates
# carry features of their own (candidates.timeline_features, candidates.sentence_features).
TIMELINE_FEATURES: tuple[str, ...] = (
    "rule",  # 1 when the rules alone draft this value (the hand-written decision, as a feature)
    "stated",  # a duration the page states ("resolved 2 hours after the errors began")
    "start_event",  # the start is a first-impact event ("errors began", "deployed")
    "start_change",  # ... and names a change (a deploy, a release) rather than the impact
    "start_first",  # the start is the timeline's first entry
    "start_interval",  # the start opens a stated window ("between 12:17 and 12:30")
    "start_timeline",  # the start is in a timeline section
    "end_timeline",  # the end is in a timeline section
    "end_first",  # the end is the first event of its kind after the start
    "end_last",  # ... the last of its kind
    "same_sentence",  # start and end in one sentence
    "both_dated",  # both times carry their own date
    "days",  # log(1 + the span in days)
    "hours",  # log(1 + the span in hours)
    "zero",  # no time between start and end
    "starts",  # log(1 + how many first-impact events the page has): how ambiguous the start is
)
SENTENCE_FEATURES: tuple[str, ...] = (
    "rule",  # 1 when the rules alone choose this sentence for the field
    "in_role",  # the sentence stands in the field's own section
    "role_weight",  # the rules' weight of the sentence's section for the field's cue words
    "cue",  # log(1 + the field's cue hits in the sentence)
    "other_cue",  # log(1 + cue hits of the other text fields)
    "position",  # where it stands in the page (0 = top, 1 = end)
    "section_position",  # where it stands in its section (0 = first sentence)
    "first_in_section",  # the section's first sentence
    "negated",  # a cue hit negated or said to have not happened
    "hypothetical",  # a what-if or counterfactual ("would have")
    "question",  # ends with a question mark
    "first_person",  # "we", "our", 우리, 弊社
    "chars",  # log(1 + length)
    "list_item",  # a list item or table row
    "timed",  # states a clock time
    "lead",  # in the page's opening paragraphs
    "impact_words",  # log(1 + words of impact: outage, down, unavailable, errors, 장애, 障害)
    "cause_cue",  # states a cause ("because", 원인, 原因)
)
TEXT_FIELDS: tuple[str, ...] = ("summary", "trigger", "detection", "symptoms_text", "lessons")
TIMELINE_KEYS: tuple[str, ...] = ("detected_after", "resolved_after")


class _TextModel(FieldWeights):
    """A text decision's model (a FieldWeights over its own feature names)."""

    names: ClassVar[tuple[str, ...]] = ()

    @field_validator("weights")
    @classmethod
    def _known(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(n for n in value if n not in cls.names)
        if unknown:
            raise ValueError(f"unknown feature(s) {', '.join(unknown)}; known: {', '.join(cls.names)}")
        return value


class TimelineModel(_TextModel):
    names: ClassVar[tuple[str, ...]] = TIMELINE_FEATURES


class SentenceModel(_TextModel):
    names: ClassVar[tuple[str, ...]] = SENTENCE_FEATURES


class TextSet(BaseModel):
    """The text decisions' models: a timeline key or text field left out keeps the rules."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeline: dict[Literal["detected_after", "resolved_after"], TimelineModel] = {}
    evidence: dict[Literal["summary", "trigger", "detection", "symptoms_text", "lessons"], SentenceModel] = {}


class Weights(BaseModel):
    """A weights file: the models, the version a draft records, and the fold scores that chose them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str
    trained_on: str = ""
    fields: FieldSet
    folds: dict[str, dict[str, float]] = {}  # field -> {"l2": chosen, "oof_f1"/"oof_top1": ...}
    # Page decisions (see the end of this module): None keeps the rules (a learned file without
    # them uses the shipped ones).
    verdict: VerdictWeights | None = None
    org: OrgWeights | None = None
    # The text decisions (timeline moments, evidence sentences); absent: the rules decide.
    text: TextSet = TextSet()

    def field(self, name: str) -> FieldWeights:
        model: FieldWeights = getattr(self.fields, name)
        return model


def logistic(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def score(features: Mapping[str, float], model: FieldWeights) -> float:
    """The probability that the candidate applies, rounded to 4 places (stable text in drafts)."""
    z = model.bias
    for name in sorted(features):
        z += model.weights.get(name, 0.0) * features[name]
    return round(logistic(z), 4)


def load(path: Path) -> Weights:
    """A weights file; ValueError naming the file and the first problem when it is not one."""
    try:
        return Weights.model_validate_json(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a weights file ({str(exc).splitlines()[0]})") from exc


@cache
def shipped() -> Weights:
    return load(SHIPPED)


@cache
def hand() -> Weights:
    """The rules' own decisions as weights (a candidate the hand-set cut-offs keep scores 0.95,
    others 0.05 and less): what the candidates' features are drawn with for fitting, so a fit
    does not depend on the weights it replaces."""
    model = FieldWeights(bias=-3.0, weights={"rule_kept": 6.0, "relative": 0.5})
    return Weights(
        version="hand-0",
        trained_on="the rules' own cut-offs",
        fields=FieldSet(root_cause=model, contributing=model, symptoms=model, components=model, domain=model),
    )


def dump(weights: Weights) -> str:
    return json.dumps(weights.model_dump(mode="json"), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


# --- fitting ---------------------------------------------------------------------------------

Example = tuple[Mapping[str, float], float, float]  # features, label (0/1), sample weight


def fit(
    examples: Sequence[Example], l2: float, names: Sequence[str] = FEATURES, iterations: int = 25
) -> tuple[float, dict[str, float]]:
    """Bias and weights minimising the weighted log loss + l2/2 * |w|^2 (the bias is not
    penalised), by Newton's method. Deterministic: fixed order, fixed iteration count."""
    names = list(names)
    d = len(names) + 1  # index 0 is the bias
    # Sparse rows: (index, value) of the non-zero features, the bias first.
    rows = []
    for f, y, sw in examples:
        x = [(0, 1.0)] + [(i + 1, float(f[n])) for i, n in enumerate(names) if f.get(n)]
        rows.append((x, y, sw))
    beta = [0.0] * d
    if not rows:
        return 0.0, dict.fromkeys(names, 0.0)
    for _ in range(iterations):
        grad = [l2 * b if i else 0.0 for i, b in enumerate(beta)]
        hess = [[(l2 if i == j and i else 0.0) for j in range(d)] for i in range(d)]
        for x, y, sw in rows:
            p = logistic(sum(v * beta[i] for i, v in x))
            g = sw * (p - y)
            h = sw * max(p * (1 - p), 1e-9)
            for i, vi in x:
                grad[i] += g * vi
                row = hess[i]
                hv = h * vi
                for j, vj in x:
                    row[j] += hv * vj
        step = _solve(hess, grad)
        beta = [b - s for b, s in zip(beta, step, strict=True)]
        if max(abs(s) for s in step) < 1e-7:
            break
    return round(beta[0], 6), {n: round(beta[i + 1], 6) for i, n in enumerate(names)}


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """x with a x = b (Gaussian elimination with partial pivoting; a tiny ridge keeps a singular
    system, such as an all-zero feature with no penalty, solvable)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for i in range(n):
        m[i][i] += 1e-9
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        if abs(m[col][col]) < 1e-12:
            continue
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            if f:
                for c in range(col, n + 1):
                    m[r][c] -= f * m[col][c]
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        if abs(m[i][i]) < 1e-12:
            continue
        x[i] = (m[i][n] - sum(m[i][j] * x[j] for j in range(i + 1, n))) / m[i][i]
    return x


# --- page decisions: the postmortem verdict and the org ranker ------------------------------------
#
# The gate (extractors/gate.py) describes a page by VERDICT_FEATURES; a logistic model gives the
# probability that it reports one incident: verdict = p >= 0.5, skip (never queued) = p below
# `skip_below`, a cut-off chosen on folds. identity.py describes each org candidate by
# ORG_FEATURES; the best candidate is the org when its probability reaches `threshold`, else the
# publisher from the domain, else unknown. Fitted by bench/train.py (extractors/draft/page_fit.py).

VERDICT_FEATURES: tuple[str, ...] = (
    "rule_yes",  # the rules alone say it is a postmortem (no look-alike rule, narrative p >= 0.5)
    "rule_logit",  # the rules' narrative log-odds (gate.py), clipped to [-8, 8]
    "rule_no",  # a look-alike rule said "no" (index, class, template, guide, no incident)
    "rule_index",  # ... an index or tag page
    "rule_class",  # ... a look-alike class (drill, notice, release notes, retrospective, ...)
    "rule_template",  # ... a template with blanks to fill in
    "rule_guide",  # ... a guide that addresses its reader
    "rule_no_incident",  # ... states no impact, cause or fix, and speaks of incidents in general
    "when",  # evidence of one incident, by kind: a time it happened
    "impact",  # ... an impact in the past tense (not negated)
    "cause",  # ... a cause
    "fix",  # ... a fix (the operators' own)
    "title_word",  # the title has an incident word
    "neg_title",  # the title has a not-incident word (release, hiring, ...)
    "strong_headings",  # incident headings (timeline, root cause, impact, ...), at most 3
    "weak_headings",  # remediation / action items / lessons headings, at most 3
    "density",  # incident words per 1000 characters, at most 3
    "clock_times",  # clock times the timeline drafter found, at most 4
    "drafted",  # incident fields the drafters filled from a section of their role
    "neg_words",  # different not-incident words, at most 5
    "generic_cues",  # different cues of incidents in general ("every incident"), at most 3
    "class_cues",  # the most different body cues of one look-alike class, at most 3
)
# (A candidate also carries "rule_pick", the one the rules alone take: registry > site > team >
# domain. It is no fitted feature: with it the fit copies the rules, team lines that name a noun
# included; the sources' own flags carry their order.)
ORG_FEATURES: tuple[str, ...] = (
    "src_registry",  # a known publisher of the host (data/publishers.json)
    "src_site",  # the page's site name, cleaned
    "src_team",  # a team line in the page's text ("the Binder team")
    "src_domain",  # the publisher as the domain spells it
    "src_title",  # the title's site part ("Outage report | Acme Blog")
    "src_author",  # the page's author metadata
    "sources",  # how many sources name it (log(1 + n))
    "related",  # the domain spells its name (rust-lang / "Rust Project"; not the domain's own)
    "in_text",  # log(1 + times the page's text names it)
    "in_title",  # the title names it
    "latin",  # it has Latin letters
    "words",  # its words, at most 4
    "mixed_script",  # Latin letters and CJK in one word ("Studio와", "Android版の復旧報告"): a phrase
    "particle_end",  # ends as a sentence's word does ("User's", "Studio와", "障害の"): no name
)


def _known_names(value: dict[str, float], names: tuple[str, ...]) -> dict[str, float]:
    unknown = sorted(n for n in value if n not in names)
    if unknown:
        raise ValueError(f"unknown feature(s) {', '.join(unknown)}; known: {', '.join(names)}")
    return value


class VerdictWeights(BaseModel):
    """The postmortem verdict: p(one incident reported) = logistic(bias + sum(weight * feature))."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bias: float
    weights: dict[str, float]
    skip_below: float  # a page under this probability is a confident "no": skipped, never queued
    l2: float = 1.0

    @field_validator("weights")
    @classmethod
    def _known(cls, value: dict[str, float]) -> dict[str, float]:
        return _known_names(value, VERDICT_FEATURES)


class OrgWeights(BaseModel):
    """The org ranker: p(candidate is the organisation) = logistic(bias + sum(weight * feature))."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bias: float
    weights: dict[str, float]
    threshold: float = 0.5  # the best candidate below this: the domain's publisher, else unknown
    l2: float = 1.0

    @field_validator("weights")
    @classmethod
    def _known(cls, value: dict[str, float]) -> dict[str, float]:
        return _known_names(value, ORG_FEATURES)


def page_score(features: Mapping[str, float], model: VerdictWeights | OrgWeights) -> float:
    """The probability of a page decision, rounded to 4 places (stable text in drafts)."""
    z = model.bias
    for name in sorted(features):
        z += model.weights.get(name, 0.0) * features[name]
    return round(logistic(z), 4)


Weights.model_rebuild()  # its page decisions' models are defined after it
