"""The library's one tokenizer: what a record's text, a vocabulary label and a query word turn into.

The server's full-text index (flows/library/index.py), and through it the API and the MCP tools,
and the static site's sharded search index (flows/library/site.py, searched by static/search.js,
which repeats `stem` and `tokens` line for line and is checked against them in a browser test)
all index and look up these tokens, so every front finds the same records for the same words.

- Latin-script words (any script written with spaces) are lowercased and indexed as their stem
  (`stem`: an English inflectional stemmer of a few rules, no dictionary): "certificates" and
  "certificate" both find a record that says either. Only the stem, so a phrase stays a phrase.
- Korean, Japanese and Chinese runs (no spaces between words, particles glued on) are indexed as
  overlapping character pairs and the run's last character, so a two-character word such as 장애 or
  障害 is one token and a longer one a phrase of pairs, found inside a sentence without a segmenter.
- A query word ending in `*` is a prefix: `cert*` finds certificate and cert-manager.

A record's tokens also hold its vocabulary terms' labels and aliases in every language (`term_text`),
so `인증서`, `証明書` and `certificate` find a record tagged certificate whatever its text's language.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

_CJK = "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_CHAR = re.compile(f"[{_CJK}]")
# A run of CJK characters, or a word of letters and digits in any other script (no underscores:
# SQLite's unicode61 tokenizer would split there).
_RUNS = re.compile(f"([{_CJK}]+)|([^\\W_{_CJK}]+)")
_VOWEL = re.compile("[aeiouy]")
MAX_WORDS = 32


def normalize(text: str) -> str:
    """NFKC (full-width letters, half-width katakana) and lowercase."""
    return unicodedata.normalize("NFKC", text).lower()


def stem(word: str) -> str:
    """An English inflectional stem (lowercase input): plurals, -ed, -ing and a final e go, so a word's
    forms meet (certificates, certificate -> certificat; failed, failing, fails -> fail). Not Porter:
    derivations (-ation, -ment) stay; short words and words without a vowel are left alone."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "zes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    elif word.endswith("ing") and len(word) > 5 and _VOWEL.search(word[:-3]):
        word = _undouble(word[:-3])
    elif word.endswith("ed") and len(word) > 4 and _VOWEL.search(word[:-2]):
        word = _undouble(word[:-2])
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def _undouble(word: str) -> str:
    """stopp -> stop, but install, pass and buzz keep their double letter, and add stays add."""
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lszaeiou":
        return word[:-1]
    return word


def tokens(text: str) -> list[str]:
    """The tokens a text is indexed as, in order: each CJK run's character pairs and its last
    character, each other word's stem."""
    out: list[str] = []
    for cjk, other in _RUNS.findall(normalize(text)):
        if cjk:
            out += [cjk[i : i + 2] for i in range(len(cjk) - 1)]
            out.append(cjk[-1])
        else:
            out.append(stem(other))
    return out


@dataclass(frozen=True)
class Word:
    """One query word: its tokens (a phrase), and whether its last token is a prefix."""

    text: str
    phrase: tuple[str, ...]
    prefix: bool


def query_words(q: str) -> list[Word]:
    """The words of a query (whitespace-separated, quotes dropped; the first MAX_WORDS distinct ones),
    each as the phrase of tokens that finds it; words with no letter or digit are dropped."""
    found: list[Word] = []
    for raw in dict.fromkeys(q.replace('"', " ").split()):
        prefix = raw.endswith("*")
        parts: list[str] = []
        runs = _RUNS.findall(normalize(raw.rstrip("*")))
        for i, (cjk, other) in enumerate(runs):
            last = i == len(runs) - 1
            if cjk:
                if len(cjk) == 1:
                    parts.append(cjk)
                    if last:
                        prefix = True  # one character: the pairs it starts, or itself at a run's end
                else:
                    parts += [cjk[j : j + 2] for j in range(len(cjk) - 1)]
            else:
                parts.append(stem(other))
        if parts:
            found.append(Word(raw, tuple(parts), prefix))
        if len(found) == MAX_WORDS:
            break
    return found


def fts_query(word: Word) -> str:
    """The FTS5 MATCH expression of one query word (over a table of `tokens` text)."""
    return '"' + " ".join(word.phrase).replace('"', '""') + '"' + (" *" if word.prefix else "")


# ---- vocabulary ------------------------------------------------------------------------------


@cache
def term_text(vocab_kind: str, term: str) -> str:
    """What a record tagged with `term` can be found by: the term's words, its labels and aliases in
    every language (a `labels` table may hold more languages than the aliases)."""
    from schema.vocab import vocabulary

    found = vocabulary(vocab_kind).terms.get(term)  # type: ignore[arg-type,unused-ignore]
    parts = [term.replace("-", " ")]
    if found is not None:
        parts += found.labels.values()
        for forms in found.aliases.values():
            parts += forms
    return "\n".join(dict.fromkeys(parts))


# ---- snippets --------------------------------------------------------------------------------

SNIPPET_CHARS = 160


def _matches(text: str, words: Iterable[Word]) -> list[tuple[int, int]]:
    """(start, end) of every place in `text` a query word matches, by the tokens' rules."""
    lowered = normalize(text)
    if len(lowered) != len(text):  # NFKC changed the length: offsets would not line up
        lowered = text.lower()
    spans: list[tuple[int, int]] = []
    latin = [w for w in words if not _CJK_CHAR.search(" ".join(w.phrase))]
    cjk = [w for w in words if w not in latin]
    for match in re.finditer(f"[^\\W_{_CJK}]+", lowered):
        word = match.group()
        for w in latin:
            if len(w.phrase) != 1:
                continue
            token = w.phrase[0]
            stemmed = stem(word)
            if stemmed == token or (w.prefix and stemmed.startswith(token)):
                spans.append(match.span())
                break
    for w in cjk:
        needle = "".join(p if i == 0 else p[-1] for i, p in enumerate(w.phrase))
        start = lowered.find(needle)
        while start >= 0:
            spans.append((start, start + len(needle)))
            start = lowered.find(needle, start + len(needle))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def snippet(texts: Iterable[str], words: list[Word], *, size: int = SNIPPET_CHARS) -> str | None:
    """HTML: the first of `texts` where a query word matches, cut to about `size` characters around
    the first match, escaped, each match in <mark>. None when no word matches any text (a record found
    through its vocabulary terms)."""
    if not words:
        return None
    for text in texts:
        spans = _matches(text, words)
        if not spans:
            continue
        first = spans[0][0]
        start = max(0, first - size // 3)
        if start:
            space = text.rfind(" ", 0, start + 1)
            start = space + 1 if space >= 0 and start - space < 20 else start
        end = min(len(text), start + size)
        out = ["…" if start else ""]
        at = start
        for s, e in spans:
            if s < start or e > end:
                continue
            out.append(html.escape(text[at:s]) + "<mark>" + html.escape(text[s:e]) + "</mark>")
            at = e
        out.append(html.escape(text[at:end]) + ("…" if end < len(text) else ""))
        return "".join(out)
    return None
