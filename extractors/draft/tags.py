"""Vocabulary fields: root_cause (one term) and contributing, symptoms, components, domain (ranked lists)."""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cache, lru_cache
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
    forms: tuple[str, ...] = ()  # the surface forms behind `pattern`, for the prefilter


_WORD = re.compile(r"\w+")
PREFIX = 4  # index Latin forms by the first 4 letters of their first word (upgrade ~ upgraded)


@dataclass(frozen=True)
class Index:
    """Which matchers can possibly hit a text, found without running their regexes.

    Every pattern starts with one of its forms, so a matcher can only hit where the text holds
    the first word of a form (Latin: as a word start, so its first letters are a word's prefix)
    or the form's first piece (other scripts: anywhere, as substrings). Measured on the 42
    rendered corpus pages: drafts are identical and drafting takes half the time.
    """

    by_prefix: dict[str, tuple[int, ...]]
    by_first_char: dict[str, tuple[tuple[str, int], ...]]  # substring anchors by their first char
    always: tuple[int, ...]

    def candidates(self, text: str) -> list[int]:
        lower = text.lower()
        found = set(self.always)
        for key in _prefixes(lower):
            found.update(self.by_prefix.get(key, ()))
        if not lower.isascii():  # substring anchors are all in scripts beyond ASCII
            for char in set(lower) & self.by_first_char.keys():
                found.update(i for anchor, i in self.by_first_char[char] if anchor in lower)
        return sorted(found)


@lru_cache(maxsize=4096)
def _prefixes(lower: str) -> frozenset[str]:
    """The first 1..PREFIX letters of every word; one text is scored once per vocabulary kind."""
    return frozenset(
        word[:n] for word in set(_WORD.findall(lower)) for n in range(1, min(PREFIX, len(word)) + 1)
    )


def _anchor(form: str) -> tuple[str, str] | None:
    """("prefix", key) for a Latin form, ("substring", piece) for others, None when unsure."""
    first = form.strip().lower().split()[0] if form.strip() else ""
    if not first:
        return None
    if _is_latin(first):
        words = _WORD.findall(first)
        if not words or not first.startswith(words[0]):
            return None  # starts with punctuation: no word prefix to index by
        return "prefix", words[0][:PREFIX]
    return "substring", first


@cache
def index(kind: Kind) -> Index:
    by_prefix: dict[str, list[int]] = defaultdict(list)
    by_first_char: dict[str, list[tuple[str, int]]] = defaultdict(list)
    always: list[int] = []
    for i, m in enumerate(matchers(kind)):
        anchors = [_anchor(f) for f in m.forms]
        if not anchors or None in anchors:
            always.append(i)
            continue
        for how, key in set(anchors):  # type: ignore[misc]
            if how == "prefix":
                by_prefix[key].append(i)
            else:
                by_first_char[key[0]].append((key, i))
    return Index(
        {k: tuple(v) for k, v in by_prefix.items()},
        {k: tuple(v) for k, v in by_first_char.items()},
        tuple(always),
    )


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
            out.append(Matcher(term, re.compile(pattern, re.I), settings()["weak_factor"], tuple(weak)))
        # Short acronyms (CA, LB, DB, VM) are matched case-sensitively: "ca" or "db" in prose are not them.
        upper = sorted(f for f in forms if _is_latin(f) and len(f) <= 3 and f.isupper())
        rest = sorted((f for f in forms if f not in upper), key=len, reverse=True)
        if rest:
            out.append(
                Matcher(term, re.compile("|".join(_form_pattern(f) for f in rest), re.I), 1.0, tuple(rest))
            )
        if upper:
            out.append(
                Matcher(term, re.compile("|".join(_form_pattern(f) for f in upper)), 1.0, tuple(upper))
            )
    # Cue phrases: words that point at a term without naming it ("attacker" -> security-breach).
    factor = settings()["cue_factor"]
    for term, phrases in sorted(settings()["cues"].get(kind, {}).items()):
        cue_forms = sorted({p for p in phrases if p}, key=len, reverse=True)
        out.append(
            Matcher(
                term,
                re.compile("|".join(_form_pattern(f, strict=False) for f in cue_forms), re.I),
                factor,
                tuple(cue_forms),
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
        every = matchers(kind)
        for m in (every[i] for i in index(kind).candidates(text)):
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
