"""The drafter's cue lists (data/cues.json) and their matchers."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from extractors.draft.lexicon import Lexicon


@cache
def cues() -> dict:
    """The cue lexicons of data/cues.json."""
    return json.loads((Path(__file__).parent / "data" / "cues.json").read_text(encoding="utf-8"))


def cue_pattern(phrases: list[str]) -> Lexicon:
    """The matcher of a cue list, to search lower-cased text: Latin phrases match at word starts,
    CJK ones anywhere (see extractors/draft/lexicon.py)."""
    return Lexicon(phrases)


@cache
def field_cue(name: str) -> Lexicon:
    return cue_pattern(cues()["fields"].get(name, []))


@cache
def named_cue(key: str) -> Lexicon:
    """A cue list of cues.json by its key ("apology", "cause_statement"): one matcher per list."""
    return cue_pattern(cues()[key])


# Cue lists asked for by sentence on most pages besides the fields': counted in the same pass
# over the page as the fields' (Context.cue_counts), not in one pass each.
JOINT_CUES = ("apology", "cause_statement")


@cache
def _field_cues() -> tuple[Lexicon, ...]:
    return tuple(field_cue(name) for name in cues()["fields"]) + tuple(named_cue(k) for k in JOINT_CUES)
