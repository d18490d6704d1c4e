"""Vocabulary matching: one regex per term over all its surface forms, and a prefilter that finds
which of those regexes can hit each sentence of a page without running them.

The prefilter is an exact superset: every hit of a form's pattern, lower-cased and stripped of
white space and hyphens ("compacted"), contains the compacted form, because patterns only add
optional separators, suffixes and look-arounds to the form. So drafts are the same with it as
without it; it only skips regex searches that could not match (most of them).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from itertools import accumulate
from pathlib import Path
from types import MappingProxyType

import ahocorasick

from schema.vocab import Kind, vocabulary

DATA = Path(__file__).parent / "data"
# Every kind the drafter scores; the prefilter works for all of them in one pass over a page.
KINDS: tuple[Kind, ...] = ("root_causes", "contributing", "symptoms", "components", "domains")


@cache
def settings() -> dict:
    return json.loads((DATA / "tags.json").read_text(encoding="utf-8"))


_OTHER_SCRIPTS = "\u2e80"  # CJK radicals onwards: Han, Kana, Hangul and the rest


def _is_latin(form: str) -> bool:
    return all(c < _OTHER_SCRIPTS for c in form)


# Korean attaches particles to nouns (서버에, 로그를); anything else after a Hangul form means it is
# the start of a longer word (디스크 in 디스크립터). Katakana words likewise run on (ディスククォータ).
_KO_AFTER = (
    r"(?![가-힣])|(?=(?:은|는|이|가|을|를|의|에|에서|로|으로|와|과|도|만|까지|부터|에게|이나|나|란|라는|이라는|"
    r"들|된|되|한|할|하|였|이었|입니다|이다|였다)(?![가-힣]{2}))"
)


# Kinds whose terms are things (nouns): their Latin forms take a plural, not a verb's endings
# ("switch" is no "switched", "cache" no "cached": the word names an act, not the thing).
NOUN_KINDS: frozenset[str] = frozenset({"components", "domains"})


# A noun made a verb names the act, not the thing: Korean 하다/되다 (모니터링하고, 로깅된),
# Japanese する/される (監視する, 監視して, 監視された). For the noun kinds, as "switched" for Latin.
_KO_VERB = r"(?!하|한|할|함|했|해|되|된|될|됨|됐|돼)"
_JA_VERB = r"(?!し|す[るれ]|さ[れせ])"


def _form_pattern(form: str, strict: bool = True, noun: bool = False) -> str:
    esc = re.escape(form).replace(r"\ ", r"[\s\-]?") if " " in form else re.escape(form)
    if not strict and not _is_latin(form):
        return esc  # cue stems (느려, できなく) are matched inside words
    if re.search(r"[가-힣]$", form):
        ko_verb = _KO_VERB if noun else ""
        return rf"(?<![가-힣]){esc}{ko_verb}(?:{_KO_AFTER})" if len(form) <= 3 else esc + ko_verb
    if re.fullmatch(r"[\u30a0-\u30ff]+", form):
        ja_verb = _JA_VERB if noun else ""
        return rf"(?<![\u30a0-\u30ff]){esc}(?![\u30a0-\u30ff]){ja_verb}"
    if noun and re.search(r"[\u4e00-\u9fff]$", form):
        return esc + _JA_VERB
    if _is_latin(form):
        # Whole words: "CA" must not match "cache", "edge" not "knowledge"; a plural s is allowed.
        # Inflections of single words count too (upgrade -> upgraded, upgrading).
        verb = " " not in form and form.islower() and not noun
        suffix = r"(?:s|es|d|ed|ing)?" if verb else r"(?:s|es)?"
        return rf"(?<![\w\-/.]){esc}{suffix}(?![\w])" if form[-1:].isalnum() else rf"(?<![\w]){esc}"
    return esc


@dataclass(frozen=True)
class Matcher:
    term: str
    pattern: re.Pattern[str]
    factor: float  # 1.0 for the vocabulary's own forms, less for cue phrases (data/tags.json)
    forms: tuple[str, ...] = ()  # the surface forms behind `pattern`, for the prefilter
    # Ambiguous forms ("API server" is kube-apiserver only on a Kubernetes page): they count only
    # where the page also names this context (data/tags.json "context_forms").
    context: re.Pattern[str] | None = None
    # A cue that counts only in a sentence that tells a lack, or in a problems, lessons or plans
    # section ("monitoring" is no monitoring gap; "there was no monitoring" is).
    needs_lack: bool = False
    # Forms so common that alone they do not mean the term (data/tags.json "weak_forms").
    weak: bool = False


_SEPARATORS = re.compile(r"[\s\-]+")
_RUNS = re.compile(r"[^\s\-]+")
_WORD = re.compile(r"\w+")


def compact(text: str) -> str:
    """Lower case without white space or hyphens."""
    return _SEPARATORS.sub("", text.lower())


def _lower(text: str) -> str:
    """text.lower() with the same length, so offsets still line up (İ lowers to two characters)."""
    lower = text.lower()
    if len(lower) == len(text):
        return lower
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


@dataclass(frozen=True)
class Form:
    """One compacted surface form and the matchers (kind, index) whose pattern holds it."""

    text: str
    # Latin patterns all start at a word boundary (see _form_pattern): an occurrence of such a
    # form right after a word character is no hit. True when every original starts with a word.
    at_word: bool
    owners: tuple[tuple[Kind, int], ...]


def _starts_latin_word(form: str) -> bool:
    lower = form.strip().lower()
    return bool(_WORD.match(lower)) and _is_latin(lower)


@cache
def forms() -> tuple[Form, ...]:
    owners: dict[str, list[tuple[Kind, int]]] = defaultdict(list)
    originals: dict[str, set[str]] = defaultdict(set)
    for kind in KINDS:
        for i, m in enumerate(matchers(kind)):
            for form in sorted(set(m.forms)):
                key = compact(form)
                if not key:
                    continue
                if (kind, i) not in owners[key]:
                    owners[key].append((kind, i))
                originals[key].add(form)
    # Several originals can compact alike ("rate limit", "ratelimit"): the word test holds for
    # the form only if it holds for each.
    return tuple(
        Form(key, all(_starts_latin_word(f) for f in originals[key]), tuple(own))
        for key, own in sorted(owners.items())
    )


@cache
def _automaton() -> ahocorasick.Automaton:
    """Every compacted form, for one Aho-Corasick pass over a compacted page: each occurrence,
    overlapping ones too, with the form's owners and whether it must start at a word."""
    automaton = ahocorasick.Automaton()
    for form in forms():  # one Form per compacted text
        automaton.add_word(form.text, (len(form.text), form.owners, form.at_word))
    automaton.make_automaton()
    return automaton


def candidates_in(text: str) -> dict[Kind, list[int]]:
    """Per kind, the matchers that may hit a short `text` (a title): every form it holds (one
    automaton pass; a substring test per form cost 0.08 ms a title)."""
    out: dict[Kind, set[int]] = {kind: set() for kind in KINDS}
    for _, (_, owners, _) in _automaton().iter(compact(text)):
        for kind, i in owners:
            out[kind].add(i)
    return {kind: sorted(ids) for kind, ids in out.items()}


def _is_word_char(c: str) -> bool:
    return c.isalnum() or c == "_"  # what \w matches


_NONE: Mapping[int, int] = MappingProxyType({})


def candidates_by_sentence(
    text: str, starts: list[int], ends: list[int]
) -> dict[Kind, list[Mapping[int, int]]]:
    """Per kind, per sentence span of `text` (sorted, disjoint), the matchers that may hit it, in
    matcher order, each with the offset in `text` of its earliest form there: no hit of its
    pattern starts before that (a hit starts where its form does), so a search may start there.

    One pass of every form over the compacted page finds each occurrence; its start is mapped
    back to the page, and to the sentence that holds it. A Latin form's patterns start at a word
    (a look-behind for a non-word character), so an occurrence right after a word character is
    dropped. This replaced a walk over the page's words (a prefix lookup per word) and a
    str.find per other form: one pass in C and a Python step per occurrence (about 90 on a
    corpus page of about 1,000 words), 0.62 ms a page where the walk took 1.05 ms."""
    lower = _lower(text)
    runs = _RUNS.findall(lower)
    found: dict[Kind, dict[int, dict[int, int]]] = {kind: {} for kind in KINDS}
    hits = list(_automaton().iter("".join(runs)))
    if hits:
        # Where run k starts in the compacted page, and how many separator characters precede it
        # in the page (runs and separators alternate; the page may start with either).
        run_at = list(accumulate(map(len, runs), initial=0))
        gaps = list(accumulate(map(len, _SEPARATORS.findall(lower)), initial=0))
        lead = 1 if _SEPARATORS.match(lower) else 0
        for last, (size, owners, at_word) in hits:
            at = last - size + 1
            offset = at + gaps[bisect_right(run_at, at) - 1 + lead]
            if at_word and offset and _is_word_char(text[offset - 1]):
                continue
            sent = bisect_right(starts, offset) - 1
            if sent < 0 or offset >= ends[sent]:
                continue
            for kind, i in owners:
                first = found[kind].setdefault(sent, {})
                if first.get(i, offset) >= offset:
                    first[i] = offset
    out: dict[Kind, list[Mapping[int, int]]] = {}
    for kind, by_sentence in found.items():
        dense = [_NONE] * len(starts)  # most sentences hit nothing
        for sent, first in by_sentence.items():
            dense[sent] = dict(sorted(first.items()))
        out[kind] = dense
    return out


@cache
def matchers(kind: Kind) -> tuple[Matcher, ...]:
    """One regex per term over its key, labels and aliases in every language."""
    out = []
    noun = kind in NOUN_KINDS
    for term, t in vocabulary(kind).terms.items():
        if term == "unknown":
            continue
        forms = {term.replace("-", " "), *t.labels.values()}
        for aliases in t.aliases.values():
            forms.update(aliases)
        forms = {f.strip() for f in forms if f and len(f.strip()) >= 2}
        forms -= set(settings().get("dropped_forms", {}).get(kind, {}).get(term, []))
        weak = set(settings()["weak_forms"].get(kind, {}).get(term, [])) & forms
        forms -= weak
        needs = settings().get("context_forms", {}).get(kind, {}).get(term)
        if needs and (ambiguous := set(needs["forms"]) & forms):
            forms -= ambiguous
            pattern = "|".join(_form_pattern(f, noun=noun) for f in sorted(ambiguous, key=len, reverse=True))
            context = "|".join(_form_pattern(f) for f in sorted(needs["context"], key=len, reverse=True))
            out.append(
                Matcher(term, re.compile(pattern, re.I), 1.0, tuple(ambiguous), re.compile(context, re.I))
            )
        if weak:
            pattern = "|".join(_form_pattern(f, noun=noun) for f in sorted(weak, key=len, reverse=True))
            out.append(
                Matcher(term, re.compile(pattern, re.I), settings()["weak_factor"], tuple(weak), weak=True)
            )
        # Short acronyms (CA, LB, DB, VM) are matched case-sensitively: "ca" or "db" in prose are not them.
        upper = sorted(f for f in forms if _is_latin(f) and len(f) <= 3 and f.isupper())
        rest = sorted((f for f in forms if f not in upper), key=len, reverse=True)
        if rest:
            out.append(
                Matcher(
                    term,
                    re.compile("|".join(_form_pattern(f, noun=noun) for f in rest), re.I),
                    1.0,
                    tuple(rest),
                )
            )
        if upper:
            out.append(
                Matcher(term, re.compile("|".join(_form_pattern(f) for f in upper)), 1.0, tuple(upper))
            )
    # Cue phrases: words that point at a term without naming it ("attacker" -> security-breach).
    # Cue phrases that name the thing whose lack is the term ("monitoring", "tests", 手順) count
    # only where a lack is told (data/tags.json "lack_only"; see extractors/draft/tags.py).
    factor = settings()["cue_factor"]
    lack_only = settings().get("lack_only", {}).get(kind, {})
    for term, phrases in sorted(settings()["cues"].get(kind, {}).items()):
        weak = set(lack_only.get(term, []))
        for needs_lack, group in ((False, {p for p in phrases if p and p not in weak}), (True, weak)):
            cue_forms = sorted(group, key=len, reverse=True)
            if not cue_forms:
                continue
            out.append(
                Matcher(
                    term,
                    re.compile("|".join(_form_pattern(f, strict=False) for f in cue_forms), re.I),
                    factor,
                    tuple(cue_forms),
                    needs_lack=needs_lack,
                )
            )
    return tuple(out)
