"""Candidates and their features: what the vocabulary rules found, described for the linear scorer.

A vocabulary field's candidates are the terms the lexicon matched on the page (extractors/draft/
tags.py scores each by its weighted mentions). Each becomes a `Candidate` with the features of
extractors/draft/linear.py FEATURES; the field's weights (data/weights.json) turn them into a
probability. The rules' own decision (the hand-set cut-offs) is one feature among the others,
not a separate rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from extractors.draft.linear import TERM_PREFIX, FieldWeights, score

# Section roles grouped into the few position features (linear.FEATURES "in_*").
ROLE_GROUPS: dict[str, str] = {
    "summary": "in_summary",
    "root_cause": "in_cause",
    "trigger": "in_cause",
    "contributing": "in_cause",
    "impact": "in_impact",
    "symptoms_text": "in_impact",
    "detection": "in_impact",
    "timeline": "in_timeline",
    "remediation": "in_fix",
    "lessons": "in_fix",
    "action_items": "in_fix",
    "background": "in_other",
    "other": "in_other",
}


@dataclass
class Candidate:
    """One term a field might take, its features, and (once scored) its probability."""

    term: str
    rule_value: float
    features: dict[str, float] = field(default_factory=dict)
    p: float = 0.0


@dataclass(frozen=True)
class Mention:
    """Where a candidate is named: its section role (None for the title), offset, cause cue."""

    role: str | None
    start: int
    cause_cue: bool


def build(
    values: dict[str, float],
    mentions: dict[str, list[Mention]],
    kept: set[str],
    text_length: int,
    negated: dict[str, int] | None = None,
    inherited: dict[str, float] | None = None,
) -> list[Candidate]:
    """Candidates of one field, in a fixed order (rule score desc, then term), with features."""
    negated = negated or {}
    inherited = inherited or {}
    order = sorted(values, key=lambda t: (-values[t], t))
    top = values[order[0]] if order and values[order[0]] > 0 else 1.0
    out = []
    for rank, term in enumerate(order):
        v = values[term]
        ms = mentions.get(term, [])
        f: dict[str, float] = {
            "rule_score": round(math.log1p(max(v, 0.0)), 6),
            "rule_kept": float(term in kept),
            "rule_rank": round(1.0 / (1 + rank), 6),
            "relative": round(max(v, 0.0) / top, 6),
            "mentions": round(math.log1p(sum(1 for m in ms if m.role is not None)), 6),
        }
        in_text = [m.start for m in ms if m.role is not None]
        f["first_position"] = round(min(in_text) / max(text_length, 1), 6) if in_text else 0.0
        for m in ms:
            name = "in_title" if m.role is None else ROLE_GROUPS.get(m.role)
            if name:
                f[name] = 1.0
            if m.cause_cue:
                f["cause_cue"] = 1.0
        if negated.get(term):
            f["negated"] = round(math.log1p(negated[term]), 6)
        if inherited.get(term):
            f["inherited"] = 1.0
        f[TERM_PREFIX + term] = 1.0
        out.append(Candidate(term, v, f))
    return out


def rank(cands: list[Candidate], model: FieldWeights) -> list[Candidate]:
    """Candidates scored by `model`, best first (ties: the rules' order, then the term)."""
    for c in cands:
        c.p = score(c.features, model)
    return sorted(cands, key=lambda c: (-c.p, -c.rule_value, c.term))
