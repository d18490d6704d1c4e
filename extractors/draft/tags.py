"""Vocabulary fields: root_cause (one term) and contributing, symptoms, components, domain (ranked lists)."""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from extractors.draft.evidence import (
    Context,
    Found,
    Sentence,
    confidence,
    evidence,
    field_cue,
    sentence_evidence,
)
from schema.vocab import Kind, vocabulary

DATA = Path(__file__).parent / "data"
FIELDS: dict[str, Kind] = {
    "contributing": "contributing",
    "symptoms": "symptoms",
    "components": "components",
    "domain": "domains",
}
MAX_EVIDENCE = 3


@cache
def settings() -> dict:
    return json.loads((DATA / "tags.json").read_text(encoding="utf-8"))


def _is_latin(form: str) -> bool:
    return all(ord(c) < 0x2E80 for c in form)


# Korean attaches particles to nouns (서버에, 로그를); anything else after a Hangul form means it is
# the start of a longer word (디스크 in 디스크립터). Katakana words likewise run on (ディスククォータ).
_KO_AFTER = (
    r"(?![가-힣])|(?=(?:은|는|이|가|을|를|의|에|에서|로|으로|와|과|도|만|까지|부터|에게|이나|나|란|라는|이라는|"
    r"들|된|되|한|할|하|였|이었|입니다|이다|였다)(?![가-힣]{2}))"
)


def _form_pattern(form: str, strict: bool = True) -> str:
    esc = re.escape(form).replace(r"\ ", r"[\s\-]?") if " " in form else re.escape(form)
    if not strict and not _is_latin(form):
        return esc  # cue stems (느려, できなく) are matched inside words
    if re.search(r"[가-힣]$", form):
        return rf"(?<![가-힣]){esc}(?:{_KO_AFTER})" if len(form) <= 3 else esc
    if re.fullmatch(r"[\u30a0-\u30ff]+", form):
        return rf"(?<![\u30a0-\u30ff]){esc}(?![\u30a0-\u30ff])"
    if _is_latin(form):
        # Whole words: "CA" must not match "cache", "edge" not "knowledge"; a plural s is allowed.
        # Inflections of single words count too (upgrade -> upgraded, upgrading).
        suffix = r"(?:s|es|d|ed|ing)?" if " " not in form and form.islower() else r"(?:s|es)?"
        return rf"(?<![\w\-/.]){esc}{suffix}(?![\w])" if form[-1:].isalnum() else rf"(?<![\w]){esc}"
    return esc


@dataclass(frozen=True)
class Matcher:
    term: str
    pattern: re.Pattern[str]
    factor: float  # 1.0 for the vocabulary's own forms, less for cue phrases (data/tags.json)


@cache
def matchers(kind: Kind) -> tuple[Matcher, ...]:
    """One regex per term over its key, labels and aliases in every language."""
    out = []
    for term, t in vocabulary(kind).terms.items():
        if term == "unknown":
            continue
        forms = {term.replace("-", " "), *t.labels.values()}
        for aliases in t.aliases.values():
            forms.update(aliases)
        forms = {f.strip() for f in forms if f and len(f.strip()) >= 2}
        weak = set(settings()["weak_forms"].get(kind, {}).get(term, [])) & forms
        forms -= weak
        if weak:
            pattern = "|".join(_form_pattern(f) for f in sorted(weak, key=len, reverse=True))
            out.append(Matcher(term, re.compile(pattern, re.I), settings()["weak_factor"]))
        # Short acronyms (CA, LB, DB, VM) are matched case-sensitively: "ca" or "db" in prose are not them.
        upper = sorted(f for f in forms if _is_latin(f) and len(f) <= 3 and f.isupper())
        rest = sorted((f for f in forms if f not in upper), key=len, reverse=True)
        if rest:
            out.append(Matcher(term, re.compile("|".join(_form_pattern(f) for f in rest), re.I), 1.0))
        if upper:
            out.append(Matcher(term, re.compile("|".join(_form_pattern(f) for f in upper)), 1.0))
    # Cue phrases: words that point at a term without naming it ("attacker" -> security-breach).
    factor = settings()["cue_factor"]
    for term, phrases in sorted(settings()["cues"].get(kind, {}).items()):
        cue_forms = sorted({p for p in phrases if p}, key=len, reverse=True)
        out.append(
            Matcher(
                term, re.compile("|".join(_form_pattern(f, strict=False) for f in cue_forms), re.I), factor
            )
        )
    return tuple(out)


@dataclass
class Score:
    value: float = 0.0
    sentences: list[tuple[float, Sentence | None, int, int]] | None = None


def _weight(table: str, role: str) -> float:
    weights = settings()["role_weight"]
    return weights.get(table, weights["default"]).get(role, weights["default"].get(role, 1.0))


def score_terms(ctx: Context, kind: Kind, table: str, cue_boost: bool = False) -> dict[str, Score]:
    """Each term's weighted mention count; repeated mentions saturate (a log curve)."""
    raw: dict[str, list[tuple[float, Sentence | None, int, int]]] = defaultdict(list)
    title = ctx.doc.title or ""
    cause = field_cue("root_cause")
    units: list[tuple[str, str, Sentence | None]] = [(title, "title", None)]
    units += [(s.text, s.role, s) for s in ctx.sentences]
    for text, role, sent in units:
        w = _weight(table, role)
        if w <= 0 or not text:
            continue
        if cue_boost and sent is not None and cause.search(text.lower()):
            w *= settings()["cause_cue_boost"]
        best: dict[str, tuple[float, int, int]] = {}
        for m in matchers(kind):
            if m.term in best and best[m.term][0] >= w * m.factor:
                continue
            hit = m.pattern.search(text)
            if hit:
                best[m.term] = (w * m.factor, hit.start(), hit.end())
        for term, (weight, a, b) in best.items():
            raw[term].append((weight, sent, a, b))
    sat = settings()["saturation"]
    out = {}
    for term, mentions in raw.items():
        mentions.sort(key=lambda t: -t[0])
        # The strongest mentions count fully, the rest with diminishing returns.
        total = sum(w for w, *_ in mentions[:sat]) + math.log1p(sum(w for w, *_ in mentions[sat:]))
        out[term] = Score(total, mentions)
    return out


def _quotes(ctx: Context, score: Score) -> list:
    quotes = []
    for _w, sent, _a, _b in sorted(score.sentences or [], key=lambda t: -t[0]):
        if sent is not None:
            quotes.append(sentence_evidence(ctx, sent))
        if len(quotes) >= MAX_EVIDENCE:
            break
    quotes.sort(key=lambda e: e.start)
    return quotes


def rank(scores: dict[str, Score], kind: Kind) -> list[tuple[str, float]]:
    cfg = settings()
    threshold, relative = cfg["threshold"][kind], cfg["relative"][kind]
    ranked = sorted(((t, s.value) for t, s in scores.items()), key=lambda kv: (-kv[1], kv[0]))
    if not ranked:
        return []
    top = ranked[0][1]
    keep = [(t, v) for t, v in ranked if v >= threshold and v >= relative * top]
    return keep[: cfg["max_terms"].get(kind, 1)]


def draft_root_cause(ctx: Context) -> Found:
    found = Found()
    scores = score_terms(ctx, "root_causes", "root_cause", cue_boost=True)
    ranked = [
        (t, v) for t, v in sorted(((t, s.value) for t, s in scores.items()), key=lambda kv: (-kv[1], kv[0]))
    ]
    if not ranked or ranked[0][1] < settings()["threshold"]["root_causes"]:
        # Not found: still show the reviewer the cause sentences the page has.
        cause_sents = [s for s in ctx.by_role("root_cause")][:MAX_EVIDENCE]
        if cause_sents:
            found.put("", None, [sentence_evidence(ctx, s) for s in cause_sents], key="root_cause")
        return found
    term, value = ranked[0]
    runner = ranked[1][1] if len(ranked) > 1 else 0.0
    margin = (value - runner) / value
    quotes = _quotes(ctx, scores[term])
    quotes += [sentence_evidence(ctx, s) for s in ctx.by_role("root_cause")[:MAX_EVIDENCE]]
    quotes.sort(key=lambda e: e.start)
    found.put("root_cause", term, quotes, confidence(0.35 + 0.4 * margin + min(0.2, value / 50), "lexicon"))
    found.reasons.append(f"root_cause candidates: {', '.join(f'{t}={v:.1f}' for t, v in ranked[:4])}")
    return found


def draft_tags(ctx: Context, drafted: Found) -> Found:
    found = Found()
    cfg = settings()
    component_scores: dict[str, Score] = {}
    for name, kind in FIELDS.items():
        table = "contributing" if name == "contributing" else "symptoms" if name == "symptoms" else "default"
        scores = score_terms(ctx, kind, table)
        if name == "components":
            component_scores = scores
        if name == "domain":
            # A component implies its domain (dns -> dns, terraform -> iac); the root cause too.
            for comp, s in component_scores.items():
                for dom in cfg["component_domains"].get(comp, []):
                    cur = scores.setdefault(dom, Score(0.0, []))
                    cur.value += cfg["inherit_factor"] * s.value
                    cur.sentences = (cur.sentences or []) + (s.sentences or [])
            rc = drafted.record.get("root_cause")
            for dom in cfg["cause_domains"].get(str(rc), []):
                cur = scores.setdefault(dom, Score(0.0, []))
                cur.value += cfg["threshold"]["domains"]
        kept = rank(scores, kind)
        if not kept:
            continue
        quotes = []
        for term, _v in kept:
            quotes += _quotes(ctx, scores[term])
        top = kept[0][1]
        found.put(
            name,
            [t for t, _ in kept],
            sorted(quotes, key=lambda e: e.start),
            confidence(min(0.85, 0.3 + top / 30), "lexicon"),
        )
        for term, v in kept:
            found.put(
                "",
                None,
                _quotes(ctx, scores[term]),
                confidence(min(0.9, 0.3 + v / 20), "lexicon"),
                key=f"{name}.{term}",
            )
    return found


__all__ = ["draft_root_cause", "draft_tags", "evidence"]
