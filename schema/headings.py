"""The section heading lexicon (schema/headings.json) and the fuzzy match from a heading to its role."""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import cast, get_args

from schema.document import SectionRole

_LEXICON = Path(__file__).with_name("headings.json")
_ROLES = set(get_args(SectionRole))

# Numbering and decoration that precede a heading: "3.", "3.2)", "(1)", "IV.", "第2章", "①", "Step 3:".
_NUMBERING = re.compile(
    r"""^(?:
        (?:step|part|chapter|section|phase)\s*\d+\s*[:.\-)]?\s*
      | 第\s*[0-9一二三四五六七八九十百]+\s*[章節部項回]\s*[:.、]?\s*
      | [(\[]\s*(?:\d{1,3}|[a-z]|[ivx]{1,5})\s*[)\]]\s*
      | (?:\d{1,3}(?:[.\-]\d{1,3})*|[ivx]{1,5}|[a-z])\s*[.)、:]\s*
      | \d{1,3}(?:\.\d{1,3})+\s+
      | \d{1,3}\s+(?=\D)
      | [\u2460-\u2473\u2776-\u277f]\s*
    )""",
    re.X,
)
_DECORATION = re.compile(
    r"[\u3010\u3011\u25a0-\u25ff\u2605\u2606\u25b6\u25b7\u2022\u30fb#*=_~`\"'\u300c\u300d\u300e\u300f]+"
)
_TRAILING = re.compile(r"[\s:?!.\u3002\uff1a\uff1f\uff01\u2026]+$")
_SPACES = re.compile(r"\s+")
# a phrase of this many characters or more may match inside a longer heading ("Root cause of the
# outage"); shorter ones ("Fix", "Cause", "原因") only as whole words, or whole CJK headings' parts
_MIN_CONTAINED = 4
# difflib ratio for typo-level matches ("Root-cause analyis"); 0.85 keeps "Summary"/"Summery" (0.857) and
# rejects "Status" vs "Statistics" on our fixtures
_FUZZY_RATIO = 0.85
# a heading longer than this (characters) is a sentence: no keyword gives it a role
_MAX_KEYWORD_HEADING = 80


def normalize_heading(heading: str) -> str:
    """Case-folded, width-folded heading without numbering, brackets or trailing punctuation."""
    text = unicodedata.normalize("NFKC", heading).casefold().strip()
    text = _DECORATION.sub(" ", text).strip()
    for _ in range(3):  # "1. (a) Timeline" carries two layers
        stripped = _NUMBERING.sub("", text, count=1).strip()
        if stripped == text or not stripped:
            break
        text = stripped
    text = _TRAILING.sub("", text)
    text = text.replace("\u2019", "'").replace("-", " ")
    return _SPACES.sub(" ", text).strip()


def _is_cjk(text: str) -> bool:
    return any(
        "\u3040" <= ch <= "\u30ff" or "\u4e00" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7a3" for ch in text
    )


class _Lexicon:
    def __init__(self, data: dict[str, object]) -> None:
        roles = data["roles"]
        skip = data.get("skip", {})
        primary = data.get("primary", {})
        assert isinstance(roles, dict) and isinstance(skip, dict) and isinstance(primary, dict)
        # normalized form -> (lang, role); the first role wins unless `primary` says otherwise
        self.exact: dict[str, tuple[str, SectionRole]] = {}
        for role, langs in roles.items():
            if role not in _ROLES:
                raise ValueError(f"headings.json: unknown role {role!r}")
            for lang, forms in langs.items():
                for form in forms:
                    key = normalize_heading(form)
                    chosen = primary.get(f"{lang}:{form}", role)
                    if chosen not in _ROLES:
                        raise ValueError(f"headings.json: unknown primary role {chosen!r}")
                    if key and (key not in self.exact or f"{lang}:{form}" in primary):
                        self.exact[key] = (lang, cast(SectionRole, chosen))
        keywords = data.get("keywords", {})
        assert isinstance(keywords, dict)
        self.keywords: list[tuple[SectionRole, re.Pattern[str]]] = []
        for role in keywords.get("order", []):
            if role not in _ROLES:
                raise ValueError(f"headings.json: unknown keyword role {role!r}")
            words = [normalize_heading(w) for w in keywords["roles"].get(role, [])]
            alternatives = sorted({w for w in words if w}, key=len, reverse=True)
            # Latin keywords at a word start ("fix" in "fixes", not in "prefix"), CJK anywhere.
            parts = [
                rf"(?<![a-z0-9]){re.escape(w)}" if w[:1].isascii() and w[:1].isalnum() else re.escape(w)
                for w in alternatives
            ]
            if parts:
                self.keywords.append((cast(SectionRole, role), re.compile("|".join(parts))))
        for lang, forms in skip.items():
            for form in forms:
                key = normalize_heading(form)
                if key:
                    self.exact.setdefault(key, (lang, "skip"))
        # Latin-script phrases are found through their first word, CJK ones by substring; both
        # longest first, so "root cause analysis" beats "cause" inside a longer heading
        self.by_first: dict[str, list[tuple[str, str, SectionRole, re.Pattern[str]]]] = {}
        self.cjk: list[tuple[str, str, SectionRole]] = []
        self.by_length: dict[int, list[str]] = {}
        for key in self.exact:
            self.by_length.setdefault(len(key), []).append(key)
        for phrase, (lang, role) in sorted(self.exact.items(), key=lambda kv: -len(kv[0])):
            if _is_cjk(phrase):
                self.cjk.append((phrase, lang, role))
            else:
                pattern = re.compile(rf"(?<!\w){re.escape(phrase)}(?!\w)")
                self.by_first.setdefault(phrase.split()[0], []).append((phrase, lang, role, pattern))

    def match(self, heading: str, lang: str | None) -> SectionRole:
        key = normalize_heading(heading)
        if not key:
            return "other"
        if key in self.exact:
            return self.exact[key][1]
        best: tuple[int, int, SectionRole] | None = None
        found: list[tuple[str, str, SectionRole]] = [(p, pl, r) for p, pl, r in self.cjk if p in key]
        # Words in heading order (not a set's, which varies with the hash seed): on a tie of length
        # and language the first-named role wins ("Timeline and Response" -> timeline).
        for word in dict.fromkeys(key.split()):
            for phrase, plang, role, pattern in self.by_first.get(word, ()):
                if len(phrase) < _MIN_CONTAINED and len(key) > 24:
                    continue  # "fix" may name a short heading ("The fix"), not a sentence
                if pattern.search(key):
                    found.append((phrase, plang, role))
        # Korean and Japanese put the head noun last ("대응 과정의 문제점": problems of the response;
        # "正しく対応できたこと": what we did right in the response): among CJK phrases the one that
        # ends last names the section, the longer on a tie.
        ends = _is_cjk(key) and all(_is_cjk(p) for p, _, _ in found)
        for phrase, plang, role in found:
            size = (key.rfind(phrase) + len(phrase)) * 1000 + len(phrase) if ends else len(phrase)
            rank = (size, 1 if lang and plang == lang else 0, role)
            if best is None or rank[:2] > best[:2]:
                best = rank
        if best is not None:
            return best[2]
        if len(key) <= 32 and key.count(" ") <= 3:  # long headings are sentences, not typos of a form
            # a ratio of 0.85 needs lengths within 15% of each other: only those are compared
            spread = max(2, len(key) // 6)
            near = [
                k for n in range(len(key) - spread, len(key) + spread + 1) for k in self.by_length.get(n, ())
            ]
            close = difflib.get_close_matches(key, near, n=1, cutoff=_FUZZY_RATIO)
            if close:
                return self.exact[close[0]][1]
        return self.keyword_role(key)

    def keyword_role(self, key: str) -> SectionRole:
        """The last resort: the first role (in `keywords.order`) one of whose keywords the
        normalized heading contains ("root cause of the outage", "장애 원인 분석")."""
        if len(key) > _MAX_KEYWORD_HEADING:
            return "other"
        for role, pattern in self.keywords:
            if pattern.search(key):
                return role
        return "other"


@lru_cache(maxsize=1)
def _lexicon() -> _Lexicon:
    return _Lexicon(json.loads(_LEXICON.read_text(encoding="utf-8")))


def exact_role(heading: str) -> SectionRole | None:
    """The role of a heading that is a lexicon form once normalized ("3. Timeline"), else None."""
    found = _lexicon().exact.get(normalize_heading(heading))
    return found[1] if found else None


@lru_cache(maxsize=4096)
def heading_role(heading: str, lang: str | None = None) -> SectionRole:
    """The record field a section heading feeds ("3. Root Cause Analysis" -> "root_cause")."""
    return _lexicon().match(heading, lang)
