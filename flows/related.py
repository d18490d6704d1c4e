"""Related incidents: records sharing a root cause, components or organisation with another, each with why.

One ranking for every place that shows related records: the review page's suggestions at approval
(related records and a possible `recurrence_of`) and the records library's related incidents.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from schema.record import Record, RecordBody

# Root causes that say nothing shared about two incidents.
_UNINFORMATIVE_CAUSES = frozenset({"unknown", "other"})

# What each kind of shared fact weighs. A shared root cause or component is what the incident
# library groups related incidents by; contributing factors and symptoms only break ties, and the
# organisation alone never makes two incidents related (it makes a related one a recurrence).
WEIGHTS = {"root_cause": 3.0, "component": 2.0, "contributing": 1.0, "symptom": 0.5, "org": 1.0}

# Causes and components too common to tie two incidents on their own (flows/data/related.json).
_GENERIC: dict[str, frozenset[str]] = {
    kind: frozenset(terms)
    for kind, terms in json.loads(
        (Path(__file__).parent / "data" / "related.json").read_text(encoding="utf-8")
    )["generic"].items()
}
GENERIC_CAUSES = _GENERIC.get("root_cause", frozenset())
GENERIC_COMPONENTS = _GENERIC.get("component", frozenset())


@dataclass(frozen=True)
class Related:
    """One related record, its score and the reasons, in words a reviewer reads."""

    record_id: str
    score: float
    why: tuple[str, ...]
    root_cause: str | None
    components: tuple[str, ...]
    same_org: bool
    date: str | None

    @property
    def may_recur(self) -> bool:
        """Same organisation and the same cause or a shared component: a possible `recurrence_of`."""
        return self.same_org and (self.root_cause is not None or bool(self.components))


def _same_org(a: RecordBody, b: RecordBody) -> bool:
    if a.org_slug and b.org_slug:
        return a.org_slug == b.org_slug
    return bool(a.org and b.org and a.org.strip().casefold() == b.org.strip().casefold())


def compare(subject: RecordBody, other: Record) -> Related | None:
    """What `subject` shares with `other`, or None when they share no cause and no component."""
    cause = subject.root_cause if subject.root_cause not in _UNINFORMATIVE_CAUSES else None
    shared_cause = cause if cause is not None and cause == other.root_cause else None
    components = tuple(c for c in subject.components if c in other.components)
    if (shared_cause is None or shared_cause in GENERIC_CAUSES) and all(
        c in GENERIC_COMPONENTS for c in components
    ):
        return None  # nothing shared, or only terms too common to say anything
    contributing = [c for c in subject.contributing if c in other.contributing]
    symptoms = [s for s in subject.symptoms if s in other.symptoms]
    same_org = _same_org(subject, other)
    why: list[str] = []
    if shared_cause:
        why.append(f"same root cause: {shared_cause}")
    if components:
        why.append(f"shared components: {', '.join(components)}")
    if contributing:
        why.append(f"shared contributing factors: {', '.join(contributing)}")
    if symptoms:
        why.append(f"shared symptoms: {', '.join(symptoms)}")
    if same_org:
        why.append(f"same organisation: {other.org}")
    score = (
        WEIGHTS["root_cause"] * (shared_cause is not None)
        + WEIGHTS["component"] * len(components)
        + WEIGHTS["contributing"] * len(contributing)
        + WEIGHTS["symptom"] * len(symptoms)
        + WEIGHTS["org"] * same_org
    )
    return Related(other.id, score, tuple(why), shared_cause, components, same_org, other.date)


def rank_related(
    subject: RecordBody, candidates: Iterable[Record], *, exclude: str | None = None, limit: int = 10
) -> list[Related]:
    """Records related to `subject`, best first (score, then newest, then id); `exclude` is its own id."""
    found = [
        related
        for other in candidates
        if other.id != exclude and (related := compare(subject, other)) is not None
    ]
    found.sort(key=lambda r: (-r.score, _newest_first(r.date), r.record_id))
    return found[:limit]


def _newest_first(date: str | None) -> str:
    # Dates are ISO (YYYY-MM-DD): mapping each digit d to 9 - d sorts newer dates first as text;
    # an undated record sorts after every dated one ("~" follows the digits).
    return "~" if date is None else date.translate(str.maketrans("0123456789", "9876543210"))
