"""Main language of a text: script counts first (Hangul, Kana), then seeded langdetect, then <html lang>."""

from __future__ import annotations

import re
import threading

_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_KANA = re.compile(r"[\u3040-\u309f\u30a0-\u30ff\uff66-\uff9f]")
_HAN = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")
# Share of letters in Hangul (or Kana) above which the text is Korean (Japanese) whatever
# langdetect says: on our 42 postmortems the Korean pages run 0.35-0.9 Hangul, the English ones
# 0; Japanese prose carries Kana in 20-40% of its letters, Chinese none. 0.1 leaves a wide margin
# for English pages that quote a Korean name, and for code-heavy Korean posts.
_SCRIPT_SHARE = 0.1
# langdetect reads this many characters: its cost grows with length (German prose: 9 ms at 1,600
# characters, 4 ms at 400). On the 181 scrapinghub and 42 postmortem reference texts, samples of
# 300, 500 and 800 gave the answers a 4,000-character sample gave, but one (a page of names, en/pt)
_SAMPLE_CHARS = 500
# English function words. When they make up this share of a Latin-script text's words, and "the"
# alone 3%, the text is English without asking langdetect (37 ms a page). Measured on the
# scrapinghub ground truth: 146 of 162 pages langdetect calls English pass (the rest go on to
# langdetect), none of the 12 pages in other Latin-script languages does (they score 0-4%).
_ENGLISH = frozenset(
    ["the", "and", "of", "to", "in", "is", "that", "for", "was", "it", "on", "with", "as", "are", "be"]
    + ["this", "by", "we", "at", "from", "not"]
)
_ENGLISH_SHARE = 0.15
_ENGLISH_SHARE_DECLARED = 0.08
_WORD = re.compile(r"[a-zA-Z']+")
_lock = threading.Lock()
_seeded = False


def _langdetect(text: str) -> list[tuple[str, float]]:
    global _seeded
    from langdetect import DetectorFactory, detect_langs
    from langdetect.lang_detect_exception import LangDetectException

    with _lock:
        if not _seeded:
            DetectorFactory.seed = 0  # reproducible results, as the library's docs advise
            _seeded = True
    try:
        return [(str(r.lang), float(r.prob)) for r in detect_langs(text)]
    except LangDetectException:
        return []


def warm() -> None:
    """Load langdetect's 55 language profiles now: the first page that needs them (any page in a
    Latin-script language other than English) would otherwise pay about 0.25 s of CPU for it."""
    _langdetect("Der Dienst war zwei Stunden lang nicht erreichbar, weil die Datenbank ausfiel.")


def detect_language(text: str, html_lang: str | None = None) -> tuple[str | None, float]:
    """(language code, confidence) of the main language of `text` (code blocks already removed)."""
    sample = text[: _SAMPLE_CHARS * 4]
    letters = sum(map(str.isalpha, sample))
    if letters == 0:
        return (html_lang, 0.3) if html_lang else (None, 0.0)
    if max(sample) >= "\u1100":  # Hangul, Kana or Han may be present: count them
        hangul = len(_HANGUL.findall(sample))
        kana = len(_KANA.findall(sample))
        han = len(_HAN.findall(sample))
        if hangul / letters >= _SCRIPT_SHARE and hangul >= kana:
            return "ko", round(min(1.0, 0.5 + hangul / letters), 3)
        if kana / letters >= _SCRIPT_SHARE or (kana and (kana + han) / letters >= 0.3):
            return "ja", round(min(1.0, 0.5 + (kana + han) / letters), 3)
        if han / letters >= 0.3:
            lang = "ja" if html_lang == "ja" else ("zh" if html_lang in (None, "zh") else html_lang)
            return lang, round(han / letters, 3)
    latin = _latin_sample(sample)
    words = [w.lower() for w in _WORD.findall(latin)]
    if len(words) >= 30:
        common = sum(1 for w in words if w in _ENGLISH) / len(words)
        the = sum(1 for w in words if w == "the") / len(words)
        if common >= _ENGLISH_SHARE and the >= 0.03 and html_lang in (None, "en"):
            return "en", round(min(0.99, 0.7 + common), 3)
        # a page that says it is English and reads like it (the other languages scored 0-4%)
        if html_lang == "en" and common >= _ENGLISH_SHARE_DECLARED:
            return "en", round(min(0.99, 0.6 + common), 3)
    guesses = _langdetect(latin)
    if not guesses:
        return (html_lang, 0.3) if html_lang else (None, 0.0)
    lang, prob = guesses[0]
    lang = lang.split("-")[0]
    if html_lang and html_lang != lang:
        # <html lang> wins when langdetect hesitates or names it as a runner-up; templates that
        # say "en" on every page lose to a confident detection
        runner = {g.split("-")[0]: p for g, p in guesses}
        if prob < 0.8 or runner.get(html_lang, 0.0) >= 0.1:
            return html_lang, round(max(runner.get(html_lang, 0.0), 0.5), 3)
    return lang, round(prob, 3)


def _latin_sample(text: str) -> str:
    """The words of `text`, without URLs, paths, identifiers and `code`: they pull langdetect
    towards English and are no evidence of the language the prose is in."""
    words = [
        w
        for w in re.sub(r"`[^`\n]*`", " ", text[: _SAMPLE_CHARS * 3]).split()
        if "/" not in w and "\\" not in w and "_" not in w and w.count(".") < 2 and "=" not in w
    ]
    return " ".join(words)[:_SAMPLE_CHARS]


def document_language(language: str | None, text: str) -> str:
    """The language code a draft is keyed by: the extractor's answer (this module's one rule), or
    the same rule run on `text` when a Document was built without one; English when nothing says."""
    lang = (language or "").split("-")[0].lower()
    if not lang:
        lang = (detect_language(text)[0] or "en").split("-")[0].lower()
    return lang
