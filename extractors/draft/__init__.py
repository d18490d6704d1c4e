"""The drafter: Document in, Draft out; the ordered cascade of field drafters lives here."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from extractors import gate
from extractors.draft import identity, impact, linear, lists, severity, sources, tags, text_fields, timeline
from extractors.draft.candidates import Candidate
from extractors.draft.evidence import Context, Found
from extractors.draft.explain import explain_draft
from extractors.draft.linear import Weights
from schema.document import Document
from schema.draft import Draft, DraftSource, HistoryEntry, Verdict, draft_id_for
from schema.record import RecordBody, Review

__all__ = ["DRAFTERS", "DraftOptions", "draft_document", "explain_draft"]

DRAFTER_VERSION = "0.1.0"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DraftOptions:
    """Knobs of the drafter (defaults are the tuned values; see each module for how)."""

    verdict_threshold: float = 0.5
    # The fitted weights of the candidate scorer (extractors/draft/linear.py); None: the shipped
    # ones (data/weights.json). `incidents learn` writes others into a data directory.
    weights: Weights | None = None


@dataclass(frozen=True)
class Args:
    source_url: str
    snapshot: str | None
    options: DraftOptions


FieldDrafter = Callable[[Context, Args, Found], Found]


def _evidence(name: str, rules: Callable[[Context], Found]) -> FieldDrafter:
    """A text field's drafter: the rules' sentences, plus the fitted model's pick where the
    weights ship one for this field (`text_fields.fitted`)."""
    return lambda ctx, a, f: text_fields.fitted(ctx, name, rules(ctx), a.options.weights)


# The cascade, in order. Identity first (the language decides the keys of every localized field);
# then the text fields and lists, which read sections; root_cause before the other vocabulary
# fields, because the domain inherits from it (security-breach -> security); severity, impact and
# timeline, which read sentences anywhere; sources. The postmortem gate (extractors/gate.py) runs
# after the cascade, because it weighs what the drafters found. Each drafter is independent of the
# others' failures.
DRAFTERS: tuple[tuple[str, FieldDrafter], ...] = (
    ("language", lambda ctx, a, f: identity.draft_language(ctx)),
    ("org", lambda ctx, a, f: identity.draft_org(ctx, a.source_url, _page_models(a.options)[1])),
    ("date", lambda ctx, a, f: identity.draft_date(ctx, a.source_url)),
    ("title", lambda ctx, a, f: identity.draft_title(ctx)),
    ("summary", _evidence("summary", text_fields.draft_summary)),
    ("trigger", _evidence("trigger", text_fields.draft_trigger)),
    ("detection", _evidence("detection", text_fields.draft_detection)),
    ("symptoms_text", _evidence("symptoms_text", text_fields.draft_symptoms_text)),
    ("lessons", _evidence("lessons", text_fields.draft_lessons)),
    ("remediation", lambda ctx, a, f: lists.draft_remediation(ctx)),
    ("action_items", lambda ctx, a, f: lists.draft_action_items(ctx)),
    ("root_cause", lambda ctx, a, f: tags.draft_root_cause(ctx, a.options.weights)),
    ("tags", lambda ctx, a, f: tags.draft_tags(ctx, f, a.options.weights)),
    ("severity", lambda ctx, a, f: severity.draft_severity(ctx)),
    ("impact", lambda ctx, a, f: impact.draft_impact(ctx)),
    ("timeline", lambda ctx, a, f: timeline.draft_timeline(ctx, a.options.weights)),
    ("sources", lambda ctx, a, f: sources.draft_sources(ctx, a.source_url, a.snapshot)),
)


def _merge(into: Found, part: Found) -> None:
    into.record.update(part.record)
    for key, items in part.evidence.items():
        into.put("", None, items, key=key)
    into.confidence.update(part.confidence)
    into.reasons.extend(part.reasons)
    into.alternatives.update(part.alternatives)
    into.candidates.update(part.candidates)


def draft_document(
    doc: Document,
    *,
    source_url: str,
    snapshot: str | None,
    snapshot_digest: str,
    now: str,
    options: DraftOptions | None = None,
) -> Draft:
    """Draft every record field from `doc`, each with its evidence and confidence. Pure, deterministic."""
    if not isinstance(doc, Document):
        raise TypeError(f"draft_document needs a Document, got {type(doc).__name__}")
    options = options or DraftOptions()
    ctx, found = _cascade(doc, source_url, snapshot, options)
    judged = gate.judge(doc, _signals(ctx, found), _page_models(options)[0])
    if options.verdict_threshold != 0.5:
        judged = judged.model_copy(update={"verdict": judged.score >= options.verdict_threshold})
    record: dict[str, Any] = dict(found.record)
    record["review"] = Review(written_by="session", reviewed_at=None, reviewed_by=None)
    record["updated_at"] = None
    body = RecordBody.model_validate(record)
    weights = options.weights or linear.shipped()
    url = doc.canonical_url or source_url
    evidence = {k: v for k, v in found.evidence.items() if v}
    return Draft(
        draft_id=draft_id_for(url, snapshot_digest),
        version=1,
        status="pending",
        record=body,
        evidence=evidence,
        confidence=dict(found.confidence),
        postmortem=judged,
        alternatives=dict(sorted(found.alternatives.items())),
        source=DraftSource(
            url=source_url,
            canonical_url=doc.canonical_url,
            snapshot=snapshot,
            language=ctx.lang,
            extractor=f"{doc.extractor.name} {doc.extractor.version}",
            drafter=f"incident-ingest-drafter {DRAFTER_VERSION} weights {weights.version}",
        ),
        history=[HistoryEntry(at=now, by=f"incident-ingest {_version()}", action="drafted")],
    )


def _cascade(
    doc: Document, source_url: str, snapshot: str | None, options: DraftOptions
) -> tuple[Context, Found]:
    ctx = Context(doc)
    args = Args(source_url=source_url, snapshot=snapshot, options=options)
    found = Found()
    for name, drafter in DRAFTERS:
        try:
            part = drafter(ctx, args, found)
        except (ValueError, IndexError, KeyError) as exc:
            # One field's bad luck must not lose the others: the field stays "not found".
            log.warning("drafting %s failed: %s", name, exc)
            continue
        _merge(found, part)
    return ctx, found


def candidates_of(
    doc: Document, *, source_url: str, options: DraftOptions | None = None
) -> dict[str, list[Candidate]]:
    """The scored candidates of each decision with their features (for bench/train.py and
    `incidents learn`): what the drafter weighed, not only what it kept."""
    return _cascade(doc, source_url, None, options or DraftOptions())[1].candidates


def _page_models(options: DraftOptions) -> tuple[linear.VerdictWeights | None, linear.OrgWeights | None]:
    """The fitted verdict and org models: the options' weights', else the shipped ones (a learned
    weights file without them); None where no fit beat the rules (the rules decide)."""
    weights = options.weights
    if weights is not None and weights.version == linear.hand().version:
        return None, None  # the rules' own decisions, for fitting (never the shipped file's)
    shipped = linear.shipped()
    verdict = weights.verdict if weights is not None and weights.verdict is not None else shipped.verdict
    org = weights.org if weights is not None and weights.org is not None else shipped.org
    return verdict, org


@dataclass(frozen=True)
class PageDecisions:
    """What the verdict and the org are decided from, for bench/train.py: the rules' verdict, the
    page's verdict features, and the org candidates with their features."""

    rules: Verdict
    verdict_features: dict[str, float]
    org_candidates: list[identity.OrgCandidate]


def page_decisions_of(doc: Document, *, source_url: str) -> PageDecisions:
    """The page decisions' inputs (the rules' own weights: a fit never depends on the weights it
    replaces)."""
    ctx, found = _cascade(doc, source_url, None, DraftOptions(weights=linear.hand()))
    rules, features = gate.weigh(doc, _signals(ctx, found))
    return PageDecisions(rules, features, list(ctx.memo.get("org_candidates", [])))


def text_candidates_of(
    doc: Document, *, source_url: str, options: DraftOptions | None = None
) -> tuple[dict[str, list[Candidate]], dict[str, dict[str, tuple[int, int]]]]:
    """The text decisions' candidates with their features (bench/train.py): "timeline.<key>" (each
    term a duration) and "evidence.<field>" (each term a sentence id), and where each evidence
    candidate's quote stands in the document text (start, end) so a trainer can judge it."""
    ctx, _found = _cascade(doc, source_url, None, options or DraftOptions())
    out: dict[str, list[Candidate]] = {}
    spans: dict[str, dict[str, tuple[int, int]]] = {}
    for key, props in timeline.proposals(ctx).items():
        out["timeline." + key] = [p.candidate for p in props]
    for name in text_fields.TEXT_FIELDS:
        sents = text_fields.sentence_candidates(ctx, name)
        out["evidence." + name] = [c for c, _s in sents]
        spans["evidence." + name] = {c.term: (s.start, s.end) for c, s in sents}
    return out, spans


def _signals(ctx: Context, found: Found) -> gate.Signals:
    """What the cascade worked out that the postmortem gate weighs."""
    return gate.Signals(
        roles=tuple((s.heading, ctx.section_role(s)) for s in ctx.doc.sections),
        clock_times=len(timeline.moments(ctx)),
        drafted_from_sections=tuple(k for k, c in found.confidence.items() if c.method == "heading"),
    )


@cache
def _version() -> str:
    try:
        from importlib.metadata import version

        return version("incident-ingest")
    except Exception:  # noqa: BLE001 - not installed: the source tree's own version
        return "0.1.0"
