"""The cheap half of the postmortem gate: URL and title cues, before a page is fetched."""

from __future__ import annotations

import json
import unicodedata
from functools import cache
from pathlib import Path
from urllib.parse import unquote

CUES = Path(__file__).parent / "data" / "gate_cues.json"


@cache
def _cues() -> tuple[tuple[str, ...], tuple[str, ...]]:
    data = json.loads(CUES.read_text(encoding="utf-8"))
    accept = tuple(c.lower() for cues in data["accept"].values() for c in cues)
    reject = tuple(c.lower() for cues in data["reject"].values() for c in cues)
    return accept, reject


def _normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", unquote(text)).lower()
    return text.replace("-", " ").replace("_", " ").replace("/", " ")


def _has(haystack: str, cue: str) -> bool:
    # Short Latin cues ("rca") must stand as words; CJK cues match anywhere.
    cue = cue.replace("-", " ")
    if cue.isascii() and len(cue) <= 4:
        return f" {cue} " in f" {haystack} "
    return cue in haystack


def gate(url: str, title: str | None) -> tuple[bool | None, str]:
    """(True, why) to fetch, (False, why) to skip, (None, why) when the cues say nothing either way.

    Undecided entries are fetched and left to the drafter's verdict: missing a postmortem costs
    more than one extra polite fetch.
    """
    text = _normal(f"{title or ''} {url}")
    accept, reject = _cues()
    hit = next((c for c in accept if _has(text, c)), None)
    if hit:
        return True, f"cue: {hit}"
    miss = next((c for c in reject if _has(text, c)), None)
    if miss:
        return False, f"not a postmortem: title or URL says {miss!r}"
    return None, "no cue"
