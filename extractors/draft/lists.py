"""Remediation and action items: one entry per list item or sentence under their heading, or cue sentences."""

from __future__ import annotations

from functools import cache

from extractors.draft.evidence import (
    Context,
    Found,
    Sentence,
    confidence,
    cue_pattern,
    cues,
    field_cue,
    prose,
    sentence_evidence,
    squeeze,
)
from extractors.draft.lexicon import Lexicon

# Entries a reviewer can scan; beyond this a section is prose that the reviewer reads in full.
MAX_ITEMS = 8
MAX_CUE_ITEMS = 4
# An entry shorter than this is a label or a fragment ("Fixed:"), not a step.
MIN_CHARS = 12
# Cue sentences count more in these sections (remediation steps sit in the timeline and summary too).
CUE_ROLES = {
    "remediation": ("timeline", "summary", "other", "root_cause", "impact", "detection"),
    "action_items": ("lessons", "other", "summary", "contributing", "root_cause", "remediation"),
}


@cache
def _story_start() -> Lexicon:
    return cue_pattern(cues()["story_start"])


# A table row whose cells are all this short (words, and characters for the languages written
# without spaces) is a header ("Action | Owner", "対策 | 担当"), not a step.
HEADER_WORDS = 2
HEADER_CHARS = 12


def _header_row(s: Sentence) -> bool:
    if s.kind != "table_row":
        return False  # for speed: no cells to split
    cells = [c.strip() for c in s.text.split("|")]
    return all(len(c.split()) <= HEADER_WORDS and len(c) <= HEADER_CHARS for c in cells)


def _told(s: Sentence) -> bool:
    """A question ("How did we mitigate it?") or a sentence about the post ("In this post we share
    how we fixed it") is no step."""
    from extractors.draft.text_fields import not_told

    low = s.text.lower()
    return not low.rstrip().endswith(("?", "？")) and not not_told().search(low) and prose(s)


def _entries(sentences: list[Sentence]) -> list[Sentence]:
    out = []
    for s in sentences:
        if len(s.text) < MIN_CHARS or s.text.rstrip().endswith((":", "：")) or _header_row(s):
            continue
        out.append(s)
    return out


def draft_list(ctx: Context, name: str) -> Found:
    found = Found()
    lang = ctx.lang
    section = _entries([s for s in ctx.by_role(name) if s.kind != "code"])
    if section:
        items = [s for s in section if s.kind == "list_item"] or section
        chosen, conf = items[:MAX_ITEMS], confidence(0.7, "heading")
    else:
        cued = ctx.cue_counts(field_cue(name))
        roles = CUE_ROLES[name]
        hits = [s for s in _entries(ctx.sentences) if s.role in roles and s.start in cued and _told(s)]
        if name == "remediation":
            # Remediation is what was done: the future tense belongs to action items; and how the
            # incident started ("the problem started when we upgraded the library") is the
            # trigger, never a fix.
            future = ctx.cue_counts(field_cue("action_items"))
            # (Searched in the few hits, not counted over the page: a pass of its own costs more.)
            began = _story_start()
            hits = [s for s in hits if s.start not in future and not began.search(s.text.lower())]
        chosen, conf = hits[:MAX_CUE_ITEMS], confidence(0.4, "cue")
    if chosen:
        found.put(
            name,
            [{"text": {lang: squeeze(s.text)}} for s in chosen],
            [sentence_evidence(ctx, s) for s in chosen],
            conf,
        )
    return found


def draft_remediation(ctx: Context) -> Found:
    return draft_list(ctx, "remediation")


def draft_action_items(ctx: Context) -> Found:
    return draft_list(ctx, "action_items")
