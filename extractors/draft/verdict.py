"""Is this page an incident report at all? A scored gate over headings, wording and what was drafted."""

from __future__ import annotations

import math
from functools import cache

from extractors.draft.evidence import Context, Found, cue_pattern, cues
from schema.draft import Verdict

# Headings only incident reports have; remediation/action items/lessons headings ("Fixes", "What's
# next", "Improvements") also head release notes and roadmaps, so they weigh less.
STRONG_ROLES = ("timeline", "root_cause", "impact", "detection", "trigger", "contributing")
INCIDENT_ROLES = (
    "timeline",
    "root_cause",
    "impact",
    "remediation",
    "action_items",
    "detection",
    "trigger",
    "lessons",
    "contributing",
)

# Weights of the log-odds score. Tuned on our fixtures (tests/data/postmortems: release notes,
# product news, hiring posts, tutorials vs. postmortems in three languages) and checked on the
# dev corpus (all 42 are incident reports): the bias keeps a page with no signal at all below
# the bar, one incident heading plus incident wording clears it.
BIAS = -2.5
W_TITLE = 2.0
W_HEADING = 1.2
W_WEAK_HEADING = 0.4
MAX_HEADINGS = 3
W_DENSITY = 1.2  # per incident word per 1000 characters, capped
MAX_DENSITY = 3.0
W_DRAFTED = 0.4  # per incident field the drafters filled from a section (heading method)
W_TIMES = 0.5  # per clock time on the page (an incident's timeline), capped
MAX_TIMES = 4
W_NEG_TITLE = 3.0
W_NEG_WORD = 0.6
MAX_NEG_WORDS = 5


@cache
def _patterns():
    v = cues()["verdict"]
    return (
        cue_pattern(v["incident_words"]),
        cue_pattern(v["title_words"]),
        cue_pattern(v["negative_title"]),
        cue_pattern(v["negative_words"]),
    )


def judge(ctx: Context, drafted: Found) -> Verdict:
    incident, title_words, neg_title, neg_words = _patterns()
    doc = ctx.doc
    title = (doc.title or "").lower()
    text = doc.text.lower()
    score, reasons = BIAS, []
    if title_words.search(title):
        score += W_TITLE
        reasons.append(f"title: {title_words.search(title).group(0)}")
    roles = []
    for s in doc.sections:
        role = ctx.section_role(s)
        if role in INCIDENT_ROLES and role not in roles:
            roles.append(role)
            reasons.append(f"heading: {s.heading}")
    strong = [r for r in roles if r in STRONG_ROLES]
    score += W_HEADING * min(MAX_HEADINGS, len(strong))
    score += W_WEAK_HEADING * min(MAX_HEADINGS, len(roles) - len(strong))
    words = len(incident.findall(text))
    density = words / max(1.0, len(text) / 1000)
    score += W_DENSITY * min(MAX_DENSITY, density)
    if words:
        reasons.append(f"incident wording: {words} ({density:.1f}/1000 chars)")
    from extractors.draft.timeline import moments

    times = len(moments(ctx))
    if times:
        score += W_TIMES * min(MAX_TIMES, times)
        reasons.append(f"clock times: {times}")
    filled = [k for k, c in drafted.confidence.items() if c.method == "heading" and k in STRONG_ROLES]
    score += W_DRAFTED * len(filled)
    if m := neg_title.search(title):
        score -= W_NEG_TITLE
        reasons.append(f"not-incident title: {m.group(0)}")
    negs = sorted(set(neg_words.findall(text)))
    if negs:
        score -= W_NEG_WORD * min(MAX_NEG_WORDS, len(negs))
        reasons.append("not-incident wording: " + ", ".join(negs[:MAX_NEG_WORDS]))
    if not reasons:
        reasons.append("no incident signals: no incident headings, wording or timeline")
    p = 1 / (1 + math.exp(-score))
    return Verdict(verdict=p >= 0.5, score=round(p, 3), reasons=reasons)
