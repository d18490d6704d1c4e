"""Vocabulary matching: one regex per term over all its surface forms, and a prefilter that finds
which of those regexes can hit each sentence of a page without running them.

The prefilter is an exact superset: every hit of a form's pattern, lower-cased and stripped of
white space and hyphens ("compacted"), contains the compacted form, because patterns only add
optional separators, suffixes and look-arounds to the form. So drafts are the same with it as
without it; it only skips regex searches that could not match (most of them).
"""

from __future__ import annotations

import json
import os
import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import accumulate
from pathlib import Path

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


_SEPARATORS = re.compile(r"[\s\-]+")
_RUNS = re.compile(r"[^\s\-]+")
_WORD = re.compile(r"\w+")
_WORD_START = re.compile(r"\w")


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
    # Latin patterns all start at a word boundary (see _form_pattern), so a Latin form can only hit
    # where a word of the page begins with its first word (`head`). Other scripts: None, found by
    # substring.
    head: str | None
    owners: tuple[tuple[Kind, int], ...]
    letters: frozenset[str] = frozenset()  # a page lacking one of them cannot hold the form


def _head(form: str) -> str | None:
    lower = form.strip().lower()
    first = _WORD.match(lower)
    return first.group() if first and _is_latin(lower) else None


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
    out = []
    for key, own in sorted(owners.items()):
        heads = [_head(f) for f in sorted(originals[key])]
        # Several originals can compact alike ("rate limit", "ratelimit"): their common start.
        latin = [h for h in heads if h is not None]
        head = os.path.commonprefix(latin) if len(latin) == len(heads) else None
        out.append(Form(key, head or None, tuple(own), frozenset(key)))
    return tuple(out)


@cache
def _form_lookup() -> tuple[dict[str, tuple[Form, ...]], int, tuple[Form, ...], tuple[Form, ...]]:
    """The Latin forms by head, the longest head, and the other forms (found by substring): those
    with a character of another script, and those without (".net")."""
    by_head: dict[str, list[Form]] = defaultdict(list)
    for form in forms():
        if form.head is not None:
            by_head[form.head].append(form)
    longest = max((len(h) for h in by_head), default=0)
    others = [f for f in forms() if f.head is None]
    scripts = tuple(f for f in others if not _is_latin(f.text))
    plain = tuple(f for f in others if _is_latin(f.text))
    return {h: tuple(fs) for h, fs in by_head.items()}, longest, scripts, plain


Owners = tuple[tuple[Kind, int], ...]


Longer = tuple[tuple["Form", str], ...]  # forms a word starts, each with the rest of its text


@dataclass(frozen=True)
class Plan:
    """What a page word may start: the owners of the forms it holds whole (the word starts with
    the form), and the forms that go on past it ("rate" of "rate limit"), with their rest. Those
    whose rest goes on with a letter are kept by that letter: the next word must start with it."""

    whole: Owners
    by_next: dict[str, Longer]
    loose: Longer  # rest starts with a dot, a plus, ...: checked whatever the next word


@lru_cache(maxsize=1 << 16)  # a worker meets the same few thousand words on page after page
def _word_plan(word: str) -> Plan | None:
    """The plan of a page word; None when it starts no form."""
    by_head, longest, _, _ = _form_lookup()
    whole: list[tuple[Kind, int]] = []
    by_next: dict[str, list[tuple[Form, str]]] = defaultdict(list)
    loose: list[tuple[Form, str]] = []
    for size in range(1, min(len(word), longest) + 1):
        for form in by_head.get(word[:size], ()):
            if word.startswith(form.text):
                whole.extend(form.owners)
            elif len(word) < len(form.text) and form.text.startswith(word):
                rest = form.text[len(word) :]
                if _WORD_START.match(rest):
                    by_next[rest[0]].append((form, rest))
                else:
                    loose.append((form, rest))
    if not (whole or by_next or loose):
        return None
    return Plan(tuple(whole), {c: tuple(forms) for c, forms in by_next.items()}, tuple(loose))


def candidates_in(text: str) -> dict[Kind, list[int]]:
    """Per kind, the matchers that may hit a short `text` (a title): a substring test per form."""
    packed = compact(text)
    out: dict[Kind, set[int]] = {kind: set() for kind in KINDS}
    for form in forms():
        if form.text in packed:
            for kind, i in form.owners:
                out[kind].add(i)
    return {kind: sorted(ids) for kind, ids in out.items()}


class Mentions:
    """Where each form occurs in a page, as the sentences (spans) that hold an occurrence."""

    def __init__(self, text: str, starts: list[int], ends: list[int]) -> None:
        self.lower = _lower(text)
        self.starts, self.ends = starts, ends
        self.out: dict[Kind, list[set[int]]] = {kind: [set() for _ in starts] for kind in KINDS}

    def _mark(self, offset: int, owners: tuple[tuple[Kind, int], ...]) -> None:
        sent = bisect_right(self.starts, offset) - 1
        if sent >= 0 and offset < self.ends[sent]:
            for kind, i in owners:
                self.out[kind][sent].add(i)

    def find(self) -> dict[Kind, list[list[int]]]:
        # Latin: a hit starts at a word of the page, and that word (a run of letters, up to a
        # separator or a dot) starts with the form's first word (its head). So each page word's
        # prefixes are looked up among the heads: a few hundred words, where the forms are 1,800.
        tokens = _WORD.findall(self.lower)
        plans = {word: plan for word in set(tokens) if (plan := _word_plan(word)) is not None}
        if plans:  # where those words are: about a quarter of a page's words
            starts = [m.start() for m in _WORD.finditer(self.lower)]
            tokens.append("")  # the next word of the last word
            for at, offset in enumerate(starts):
                plan = plans.get(tokens[at])
                if plan is None:
                    continue
                if plan.whole:
                    self._mark(offset, plan.whole)
                after = tokens[at + 1]
                # Where the form goes on with a letter ("the bug" after "the"), only white space
                # or hyphens can stand between, so the next word must carry on with it (a cheap
                # test that _holds would fail anyway; "the" is most page words).
                if after:
                    wordy = plan.by_next.get(after[0], ())
                else:  # the last word: nothing to test against
                    wordy = tuple(pair for pairs in plan.by_next.values() for pair in pairs)
                for form, rest in wordy:
                    if (rest.startswith(after) or after.startswith(rest)) and self._holds(offset, form.text):
                        self._mark(offset, form.owners)
                for form, _ in plan.loose:
                    if self._holds(offset, form.text):
                        self._mark(offset, form.owners)
        _, _, scripts, plain = _form_lookup()
        chars = set(self.lower)
        packed: tuple[str, list[int], list[int]] | None = None
        for form in plain:
            if form.text[0] not in chars or not form.letters <= chars:
                continue
            if packed is None:
                packed = self._packed()
            for at in _occurrences(packed[0], form.text):
                self._at_packed(packed, at, form.owners)
        # A form with Hangul, Kana or Han in it needs a page with some; there, every such form
        # is found in one pass (916 forms: a str.find each cost a Korean page about 3 ms).
        if scripts and self.lower and max(chars) >= _OTHER_SCRIPTS:
            packed = packed or self._packed()
            for last, (size, owners) in _scripts_automaton().iter(packed[0]):
                self._at_packed(packed, last - size + 1, owners)
        return {kind: [sorted(ids) for ids in sents] for kind, sents in self.out.items()}

    def _at_packed(self, packed: tuple[str, list[int], list[int]], at: int, owners: Owners) -> None:
        """Mark an occurrence at offset `at` of the compacted page."""
        _, run_starts, run_packed = packed
        run = bisect_right(run_packed, at) - 1
        self._mark(run_starts[run] + at - run_packed[run], owners)

    def _holds(self, offset: int, packed_form: str) -> bool:
        """Does the page, compacted from `offset` on, start with the form? A hit spans at most
        twice the compacted form's length (one separator per letter) plus a suffix."""
        window = self.lower[offset : offset + 2 * len(packed_form) + 8]
        return _SEPARATORS.sub("", window).startswith(packed_form)

    def _packed(self) -> tuple[str, list[int], list[int]]:
        """The compacted page, with where each separator-free run starts in the page and in it."""
        runs = list(_RUNS.finditer(self.lower))
        pieces = [m.group() for m in runs]
        run_packed = list(accumulate((len(p) for p in pieces), initial=0))[:-1]
        return "".join(pieces), [m.start() for m in runs], run_packed


def _occurrences(text: str, sub: str) -> Iterator[int]:
    """Every offset of `sub` in `text`, overlapping ones too."""
    at = text.find(sub)
    while at >= 0:
        yield at
        at = text.find(sub, at + 1)


@cache
def _scripts_automaton() -> ahocorasick.Automaton:
    """The compacted forms with a character of another script, for one Aho-Corasick pass over
    a compacted page: every occurrence, overlapping ones too, as str.find in a loop finds them."""
    automaton = ahocorasick.Automaton()
    for form in _form_lookup()[2]:  # one Form per compacted text (see forms)
        automaton.add_word(form.text, (len(form.text), form.owners))
    automaton.make_automaton()
    return automaton


def candidates_by_sentence(text: str, starts: list[int], ends: list[int]) -> dict[Kind, list[list[int]]]:
    """Per kind, per sentence span of `text` (sorted, disjoint), the matchers that may hit it."""
    return Mentions(text, starts, ends).find()


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
