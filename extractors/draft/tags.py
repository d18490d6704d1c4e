"""Vocabulary fields: root_cause (one term) and contributing, symptoms, components, domain (ranked lists)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from extractors.draft import candidates, linear, negation
from extractors.draft.candidates import Candidate, Mention
from extractors.draft.cues import named_cue
from extractors.draft.evidence import (
    Context,
    Found,
    Sentence,
    confidence,
    cue_pattern,
    cues,
    evidence,
    field_cue,
    sentence_evidence,
)
from extractors.draft.lexicon import Lexicon
from extractors.draft.linear import Weights
from extractors.draft.vocab_match import Matcher, candidates_by_sentence, candidates_in, matchers, settings
from schema.draft import Alternative
from schema.vocab import Kind

FIELDS: dict[str, Kind] = {
    "contributing": "contributing",
    "symptoms": "symptoms",
    "components": "components",
    "domain": "domains",
}
MAX_EVIDENCE = 3
MAX_ALTERNATIVES = 3
MAX_STATED = 2  # cause statements outside the cause section (see _stated_elsewhere)


@dataclass
class Score:
    value: float = 0.0
    sentences: list[tuple[float, Sentence | None, int, int]] | None = None


def _weight(table: str, role: str) -> float:
    weights = settings()["role_weight"]
    return weights.get(table, weights["default"]).get(role, weights["default"].get(role, 1.0))


Hit = tuple[int, int, int]  # matcher index, start, end (offsets into the unit's text)


def _hits(ctx: Context, kind: Kind) -> list[tuple[str, str, Sentence | None, list[Hit]]]:
    """The units (the title, then each sentence) that some matcher hits, with each matcher's first
    hit in it, in matcher order."""
    memo = ctx.memo.setdefault("tag_hits", {})
    if kind in memo:
        return memo[kind]
    every = matchers(kind)
    sents = ctx.sentences
    title = ctx.doc.title or ""
    if "tag_candidates" not in ctx.memo:  # for every kind at once
        spans = ([s.start for s in sents], [s.end for s in sents])
        ctx.memo["tag_candidates"] = (candidates_in(title), candidates_by_sentence(ctx.doc.text, *spans))
    in_title, per_sentence = ctx.memo["tag_candidates"]
    units: list[tuple[str, str, Sentence | None, Mapping[int, int]]] = [
        (title, "title", None, dict.fromkeys(in_title[kind], 0))
    ]
    units += [(s.text, s.role, s, ids) for s, ids in zip(sents, per_sentence[kind], strict=True) if ids]
    out = []
    for text, role, sent, ids in units:
        found = []
        base = sent.start if sent is not None else 0
        for i, first in ids.items():
            hit = every[i].pattern.search(text, first - base)  # none starts before its form
            if hit:
                found.append((i, hit.start(), hit.end()))
        if found:
            out.append((text, role, sent, found))
    memo[kind] = out
    return out


def score_terms(ctx: Context, kind: Kind, table: str, cue_boost: bool = False) -> dict[str, Score]:
    """Each term's weighted mention count; repeated mentions saturate (a log curve)."""
    raw: dict[str, list[tuple[float, Sentence | None, int, int]]] = defaultdict(list)
    excluded: set[str] = set()  # terms the page rules out ("it was not the database")
    named: set[str] = set()  # terms some mention names by more than a weak form
    for text, role, sent, hits in _hits(ctx, kind):
        w = _weight(table, role)
        if w <= 0 or not text:
            continue
        if sent is not None:
            w *= _sentence_factor(ctx, kind, sent, cue_boost)
            if w <= 0:
                continue
        for term, (weight, a, b) in _unit_mentions(ctx, kind, text, sent, hits, w, excluded, named).items():
            raw[term].append((weight, sent, a, b))
    for term, weight, sent, a, b in _pair_hits(ctx, kind, table):
        # One mention per sentence: the pair's where it counts more than a form's or cue's.
        same = [m for m in raw[term] if m[1] is sent]
        if not same or same[0][0] < weight:
            raw[term] = [m for m in raw[term] if m[1] is not sent] + [(weight, sent, a, b)]
        named.add(term)
    if kind in settings()["weak_alone"]["kinds"]:
        # Weak forms alone do not mean the term ('server', 'instance'): a page that names it only
        # by them does not name it.
        excluded |= set(raw) - named
    return _saturated({t: m for t, m in raw.items() if t not in excluded})


def _unit_mentions(
    ctx: Context,
    kind: Kind,
    text: str,
    sent: Sentence | None,
    hits: list[Hit],
    w: float,
    excluded: set[str],
    named: set[str],
) -> dict[str, tuple[float, int, int]]:
    """Per term, the strongest matcher's first reported hit in one unit (the earlier matcher wins
    a tie); adds the terms it rules out to `excluded` and those named by more than a weak form to
    `named`."""
    every = matchers(kind)
    best: dict[str, tuple[float, int, int]] = {}
    lacking: bool | None = None  # for speed: asked only when a matcher needs a lack told
    for i, a, b in _uncovered(every, text, hits):
        m = every[i]
        if m.needs_lack and lacking is None:
            lacking = sent is not None and _tells_lack(ctx, sent)
        if m.needs_lack and not (lacking and _lack_near(sent, text, a, b)):
            continue  # "monitoring" where no lack is told
        verdict = _reported(ctx, kind, m, text, a, b)
        if verdict != "reported":
            excluded.update([m.term] if verdict == "ruled out" else [])
            if verdict == "negated":  # a feature of the term's candidate (candidates.py)
                negs = ctx.memo.setdefault("negated", {}).setdefault(kind, {})
                negs[m.term] = negs.get(m.term, 0) + 1
            continue
        if m.term not in best or best[m.term][0] < w * m.factor:
            best[m.term] = (w * m.factor, a, b)
        if not m.weak:
            named.add(m.term)
    return best


def _uncovered(every: tuple[Matcher, ...], text: str, hits: list[Hit]) -> list[Hit]:
    """Each hit, or where it lies inside a longer hit of another term ("errors" in "certificate
    errors" is certificate-errors, not elevated-error-rate), the matcher's next hit outside every
    such span; none if it has none. The longer, more specific name claims its words."""
    spans = [(every[i].term, a, b) for i, a, b in hits]

    def covered(term: str, a: int, b: int) -> int | None:
        for t, x, y in spans:
            if t != term and x <= a and b <= y and y - x > b - a:
                return y
        return None

    out = []
    for i, a, b in hits:
        term = every[i].term
        while (end := covered(term, a, b)) is not None:
            nxt = every[i].pattern.search(text, end)
            if nxt is None:
                break
            a, b = nxt.start(), nxt.end()
        else:
            out.append((i, a, b))
    return out


def _saturated(raw: dict[str, list[tuple[float, Sentence | None, int, int]]]) -> dict[str, Score]:
    """Each term's score: the strongest mentions count fully, the rest with diminishing returns."""
    sat = settings()["saturation"]
    out = {}
    for term, mentions in raw.items():
        mentions.sort(key=lambda t: -t[0])
        total = sum(w for w, *_ in mentions[:sat]) + math.log1p(sum(w for w, *_ in mentions[sat:]))
        out[term] = Score(total, mentions)
    return out


def _reported(ctx: Context, kind: Kind, m: Matcher, text: str, a: int, b: int) -> str:
    """Whether a hit reports its term ("reported"), or is out of context ("API servers" on a page
    that never names Kubernetes), negated ("No data was lost") or "ruled out" ("it was not the
    database": the page names it to exclude it, so no mention of it counts)."""
    if m.context is not None and not _has_context(ctx, m.context):
        return "out of context"
    if any(w in text.lower() for w in settings().get("not_with", {}).get(kind, {}).get(m.term, ())):
        return "another's"  # "the Cloudflare cache" is the CDN's
    if negation.applies_to(kind) and negation.negated(text, a, b):
        return "negated"
    if negation.rules_out(kind) and negation.ruled_out(text, a, b):
        return "ruled out"
    return "reported"


def _sentence_factor(ctx: Context, kind: Kind, sent: Sentence, cue_boost: bool) -> float:
    """How much more a mention counts for what its sentence says: a cause (root cause), a lack
    (contributing: "there was no alert" is the gap itself, "the alert paged us" is not)."""
    if kind == "symptoms" and sent.start in ctx.cue_counts(_apology()):
        return 0.0  # "we apologize to everyone affected by the outage" tells no symptom
    factor = 1.0
    if cue_boost and sent.start in ctx.cue_counts(field_cue("root_cause")):
        factor *= settings()["cause_cue_boost"]
    if kind == "contributing" and sent.start in ctx.cue_counts(_lack_words()):
        factor *= settings()["lack"]["boost"]
    return factor


def _story_only(scores: dict[str, Score]) -> None:
    """Drops the terms named only outside the incident's story (data/tags.json "story_roles"):
    only in lessons, action items or background ("we will put a CDN in front", "Redis normally
    holds the sessions"). A mention in the title (no sentence) is the story."""
    outside = set(settings()["story_roles"]["not_story"])
    for term in [t for t, s in scores.items() if s.sentences]:
        mentions = scores[term].sentences or []
        if all(sent is not None and sent.role in outside for _w, sent, _a, _b in mentions):
            del scores[term]


@cache
def _totality_words() -> Lexicon:
    return cue_pattern(settings()["totality"]["words"])


def _partial_not_full(scores: dict[str, Score]) -> None:
    """A page that states a partial outage had a full one only where it says all of it went
    ("all requests failed", 모든 사용자, 全ユーザー): other outage mentions are the partial one."""
    partial, full = scores.get("partial-outage"), scores.get("full-outage")
    if partial is None or full is None or partial.value < settings()["threshold"]["symptoms"]:
        return
    total = _totality_words()
    if not any(s is not None and total.search(s.text.lower()) for _w, s, _a, _b in full.sentences or []):
        del scores["full-outage"]


def _tells_lack(ctx: Context, sent: Sentence) -> bool:
    """Whether a sentence tells a lack or a hindsight, or stands under a problems, lessons or
    plans heading (where every item is one)."""
    if sent.role in settings()["lack_only"]["roles"]:
        return True
    return sent.start in ctx.cue_counts(_lack_words())


def _lack_near(sent: Sentence | None, text: str, a: int, b: int) -> bool:
    """Whether the lack told is the named thing's: under a problems, lessons or plans heading every
    item is one; elsewhere a lack word stands within the clause around the name ("there was no
    canary", 점진적 배포를 하지 않았, "staging did not have"), not anywhere in a long sentence
    ("errors grew gradually; iOS did not show it")."""
    if sent is None or sent.role in settings()["lack_only"]["roles"]:
        return True
    near = settings()["lack"]["near_chars"]
    return _lack_words().search(text[max(0, a - near) : b + near].lower()) is not None


@cache
def _lack_words() -> Lexicon:
    """Words that state a lack or a hindsight ("no alert", "missing", "should have", 부족, 不足)."""
    return cue_pattern(settings()["lack"]["words"])


def _has_context(ctx: Context, pattern: re.Pattern[str]) -> bool:
    memo = ctx.memo.setdefault("tag_context", {})
    if pattern.pattern not in memo:
        memo[pattern.pattern] = bool(pattern.search(ctx.doc.title or "") or pattern.search(ctx.doc.text))
    return bool(memo[pattern.pattern])


@cache
def _pairs(kind: Kind) -> tuple[tuple[str, tuple[re.Pattern[str], ...], tuple[tuple[str, ...], ...]], ...]:
    """Terms stated by one word of each group in one sentence (data/tags.json "pairs"): the
    matchers, and the lower-cased words for a quick substring test first."""
    out = []
    for term, groups in sorted(settings().get("pairs", {}).get(kind, {}).items()):
        pats = tuple(re.compile("|".join(_pair_form(w) for w in group), re.I) for group in groups)
        out.append((term, pats, tuple(tuple(w.lower() for w in group) for group in groups)))
    return tuple(out)


def _pair_form(word: str) -> str:
    # Latin words at a word start, any ending (expire, expired, expiry); CJK anywhere.
    return rf"(?<![\w]){re.escape(word)}" if word.isascii() else re.escape(word)


def _names_all(text: str, groups: tuple[tuple[str, ...], ...]) -> bool:
    return all(any(w in text for w in group) for group in groups)


def _pair_hits(ctx: Context, kind: Kind, table: str) -> list[tuple[str, float, Sentence, int, int]]:
    pairs = _pairs(kind)
    if not pairs:
        return []
    # Only terms whose every group the page names somewhere are looked for sentence by sentence.
    low = ctx.folded or ctx.doc.text.lower()
    live = [(term, pats, groups) for term, pats, groups in pairs if _names_all(low, groups)]
    if not live:
        return []
    # A contributing pair states the factor itself ("staging and production diverged"), as a
    # sentence that tells a lack does: it counts as much (data/tags.json "lack" boost).
    boost = settings()["lack"]["boost"] if kind == "contributing" else 1.0
    out = []
    for sent in ctx.sentences:
        w = _weight(table, sent.role) * boost
        if w <= 0:
            continue
        lowered = sent.text.lower()
        for term, pats, groups in live:
            if not _names_all(lowered, groups):
                continue
            found = [p.search(sent.text) for p in pats]
            if all(found):
                a = min(m.start() for m in found if m)
                b = max(m.end() for m in found if m)
                if not negation.negated(sent.text, a, b):
                    out.append((term, w, sent, a, b))
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


def _cause_sentences(ctx: Context) -> list[Sentence]:
    """The cause section's sentences that state a cause ("X was the cause", "because", 원인, 原因),
    in page order; its first sentences when none does or too few. A long analysis section walks
    through what was tried before it names the cause."""
    section = ctx.by_role("root_cause")
    cued = ctx.cue_counts(field_cue("root_cause"))
    stating = [s for s in section if s.start in cued][:MAX_EVIDENCE]
    rest = [s for s in section if s not in stating][: MAX_EVIDENCE - len(stating)]
    return sorted(stating + rest + _stated_elsewhere(ctx), key=lambda s: s.start)


def _stated_elsewhere(ctx: Context) -> list[Sentence]:
    """Up to MAX_STATED sentences outside the cause section that state a cause outright ("this was
    the cause of the leak", 원인이었습니다, が原因でした), not negated ("was not the cause"), and not
    in plans or lessons: a page may name its cause where it tells the fix or sums up."""
    statement = _cause_statement()
    counts = ctx.cue_counts(statement)
    out = []
    for s in ctx.sentences:
        if s.start not in counts or s.role in ("root_cause", "skip", "lessons", "action_items"):
            continue
        low = s.text.lower()
        hit = statement.search(low)
        if hit is not None and not negation.negated(low, hit.start(), hit.end()) and not _hedge().search(low):
            out.append(s)
        if len(out) >= MAX_STATED:
            break
    return out


def _apology() -> Lexicon:
    return named_cue("apology")


@cache
def _hedge() -> Lexicon:
    return cue_pattern(cues()["hedge"])


def _cause_statement() -> Lexicon:
    return named_cue("cause_statement")


def _candidates(
    ctx: Context,
    kind: Kind,
    scores: dict[str, Score],
    kept: set[str],
    inherited: dict[str, float] | None = None,
) -> list[Candidate]:
    """The field's candidates with their features (extractors/draft/candidates.py)."""
    cued = ctx.cue_counts(field_cue("root_cause"))
    mentions = {
        t: [
            Mention(
                None if sent is None else sent.role,
                0 if sent is None else sent.start,
                bool(sent and sent.start in cued),
            )
            for _w, sent, _a, _b in s.sentences or []
        ]
        for t, s in scores.items()
    }
    negs = ctx.memo.get("negated", {}).get(kind, {})
    values = {t: s.value for t, s in scores.items()}
    return candidates.build(values, mentions, kept, len(ctx.doc.text), negs, inherited)


def _alternatives(ctx: Context, ranked: list[Candidate], scores: dict[str, Score]) -> list[Alternative]:
    return [
        Alternative(term=c.term, score=c.p, evidence=_quotes(ctx, scores[c.term]))
        for c in ranked[:MAX_ALTERNATIVES]
    ]


def draft_root_cause(ctx: Context, weights: Weights | None = None) -> Found:
    found = Found()
    model = (weights or linear.shipped()).fields.root_cause
    scores = score_terms(ctx, "root_causes", "root_cause", cue_boost=True)
    rules = sorted(((t, s.value) for t, s in scores.items()), key=lambda kv: (-kv[1], kv[0]))
    kept = {rules[0][0]} if rules and rules[0][1] >= settings()["threshold"]["root_causes"] else set()
    ranked = candidates.rank(_candidates(ctx, "root_causes", scores, kept), model)
    found.candidates["root_cause"] = ranked
    if not ranked or ranked[0].p < model.threshold:
        # Not found: still show the reviewer the cause sentences the page has, and the runners-up.
        cause_sents = _cause_sentences(ctx)
        if cause_sents:
            found.put("", None, [sentence_evidence(ctx, s) for s in cause_sents], key="root_cause")
        if ranked:
            found.alternatives["root_cause"] = _alternatives(ctx, ranked, scores)
        return found
    best = ranked[0]
    quotes = _quotes(ctx, scores[best.term])
    quotes += [sentence_evidence(ctx, s) for s in _cause_sentences(ctx)]
    quotes.sort(key=lambda e: e.start)
    found.put("root_cause", best.term, quotes, confidence(best.p, "lexicon"))
    if len(ranked) > 1:
        found.alternatives["root_cause"] = _alternatives(ctx, ranked[1:], scores)
    found.reasons.append(f"root_cause candidates: {', '.join(f'{c.term}={c.p:.2f}' for c in ranked[:4])}")
    return found


def _inherit(
    scores: dict[str, Score], component_scores: dict[str, Score], drafted: Found
) -> dict[str, float]:
    """A component implies its domain (dns -> dns, terraform -> iac); the root cause too. Adds
    to `scores`; returns the domains so implied (the candidates' "inherited" feature)."""
    cfg = settings()
    inherited: dict[str, float] = {}
    for comp, s in component_scores.items():
        for dom in cfg["component_domains"].get(comp, []):
            cur = scores.setdefault(dom, Score(0.0, []))
            cur.value += cfg["inherit_factor"] * s.value
            cur.sentences = (cur.sentences or []) + (s.sentences or [])
            inherited[dom] = 1.0
    for dom in cfg["cause_domains"].get(str(drafted.record.get("root_cause")), []):
        cur = scores.setdefault(dom, Score(0.0, []))
        cur.value += cfg["threshold"]["domains"]
        inherited[dom] = 1.0
    return inherited


def draft_tags(ctx: Context, drafted: Found, weights: Weights | None = None) -> Found:
    found = Found()
    cfg = settings()
    fitted = weights or linear.shipped()
    component_scores: dict[str, Score] = {}
    for name, kind in FIELDS.items():
        table = "contributing" if name == "contributing" else "symptoms" if name == "symptoms" else "default"
        scores = score_terms(ctx, kind, table)
        if name == "components":
            component_scores = scores
        if kind in cfg["story_roles"]["kinds"]:
            _story_only(scores)
        if name == "symptoms":
            _partial_not_full(scores)
        inherited = _inherit(scores, component_scores, drafted) if name == "domain" else {}
        model = fitted.field(name)
        rule_kept = {t for t, _v in rank(scores, kind)}
        ranked = candidates.rank(_candidates(ctx, kind, scores, rule_kept, inherited), model)
        found.candidates[name] = ranked
        kept = [c for c in ranked if c.p >= model.threshold][: cfg["max_terms"].get(kind, 1)]
        rest = [c for c in ranked if c not in kept]
        if rest:
            found.alternatives[name] = _alternatives(ctx, rest, scores)
        if not kept:
            continue
        quotes = []
        for c in kept:
            quotes += _quotes(ctx, scores[c.term])
        found.put(
            name,
            [c.term for c in kept],
            sorted(quotes, key=lambda e: e.start),
            confidence(kept[0].p, "lexicon"),
        )
        for c in kept:
            found.put(
                "", None, _quotes(ctx, scores[c.term]), confidence(c.p, "lexicon"), key=f"{name}.{c.term}"
            )
    return found


__all__ = ["draft_root_cause", "draft_tags", "evidence"]
