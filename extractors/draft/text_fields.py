"""Localized text fields, extractive: summary, trigger, detection, symptoms_text, lessons."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from extractors.draft import linear
from extractors.draft.candidates import Candidate
from extractors.draft.cues import named_cue
from extractors.draft.evidence import (
    Context,
    Found,
    Sentence,
    confidence,
    cue_pattern,
    cues,
    evidence,
    field_cue,
    prose,
    sentence_evidence,
    squeeze,
)
from extractors.draft.lexicon import Lexicon
from extractors.draft.linear import Weights, score
from extractors.draft.moments import (
    Moment,
    _change_pattern,
    _events,
    entry_end,
    first_impact,
    moments,
    response_pattern,
)
from extractors.draft.negation import negated
from schema.draft import Evidence

# Readable lengths (characters) a reviewer can check at a glance; CJK packs ~2.5x more per
# character, so the budget is scaled down for ko/ja. Chosen by reading drafts of the dev corpus:
# 600 keeps two or three sentences of an English summary.
MAX_CHARS = {"summary": 600, "trigger": 400, "detection": 400, "symptoms_text": 500, "lessons": 600}
CJK_FACTOR = 0.5
MAX_CUE_SENTENCES = 3
# A block shorter than this at the top of a page is a byline, date or label, not a summary.
MIN_LEAD_CHARS = 40

# Where cue sentences count most when no section has the field's role.
CUE_ROLE_WEIGHT = {
    # Plans and lessons talk about changes too, but not the one that started the incident.
    "trigger": {
        "root_cause": 2.0,
        "summary": 1.5,
        "timeline": 1.2,
        "trigger": 3.0,
        "action_items": 0.0,
        "lessons": 0.0,
        # The response and the problems list come after the start: a fix is never the trigger.
        "remediation": 0.0,
    },
    "detection": {"timeline": 2.0, "detection": 3.0, "summary": 1.2},
    # What users or operators saw: never the cause, the problems list, the fix or the plans (a
    # "missing table" in a cause section is no symptom).
    "symptoms_text": {
        "impact": 2.0,
        "summary": 1.5,
        "timeline": 1.0,
        "symptoms_text": 3.0,
        "detection": 1.5,
        "root_cause": 0.0,
        "trigger": 0.0,
        "contributing": 0.0,
        "remediation": 0.0,
        "lessons": 0.0,
        "action_items": 0.0,
        "background": 0.0,
    },
    "lessons": {"lessons": 3.0, "action_items": 1.2, "other": 1.0, "contributing": 1.5},
}


def budget(name: str, lang: str) -> int:
    n = MAX_CHARS.get(name, 500)
    return int(n * CJK_FACTOR) if lang in ("ko", "ja", "zh") else n


def take(sentences: list[Sentence], limit: int) -> list[Sentence]:
    """Sentences in order until the budget is spent; always at least one."""
    out: list[Sentence] = []
    used = 0
    for s in sentences:
        if out and used + len(s.text) > limit:
            break
        out.append(s)
        used += len(s.text) + 1
    return out


def join(sentences: list[Sentence], lang: str = "en") -> str:
    # Sentences of one block join with a space, blocks with a blank line (as in the seed record).
    parts: list[str] = []
    last_block = None
    for s in sentences:
        if parts and last_block is not None and s.block != last_block:
            parts.append("\n\n")
        elif parts and lang not in ("ja", "zh"):  # Japanese and Chinese sentences run on without spaces
            parts.append(" ")
        parts.append(squeeze(s.text))
        last_block = s.block
    return "".join(parts)


def _lead(ctx: Context) -> list[Sentence]:
    """The opening paragraph(s) of the body: what a summary falls back to."""
    out = [
        s for s in ctx.sentences if s.role not in ("skip",) and s.kind in ("paragraph", "quote", "list_item")
    ]
    blocks_seen: dict[int, int] = {}
    for s in out:
        blocks_seen[s.block] = blocks_seen.get(s.block, 0) + len(s.text)
    least = MIN_LEAD_CHARS * (CJK_FACTOR if ctx.lang in ("ko", "ja", "zh") else 1)
    out = [s for s in out if blocks_seen[s.block] >= least]
    # Stay under the first heading the lead starts in: later sections are not the summary.
    return [s for s in out if s.heading == out[0].heading] if out else []


def cue_sentences(ctx: Context, name: str, limit: int = MAX_CUE_SENTENCES) -> list[Sentence]:
    counts = ctx.cue_counts(field_cue(name))
    weights = CUE_ROLE_WEIGHT.get(name, {})
    # A fix is never the trigger: a sentence that reverts, restores or rolls back is the response.
    # Nor is it a symptom: the real fix must not land in symptoms_text.
    response = _response_words() if name in ("trigger", "symptoms_text") else None
    # A plan ("今後は…手順を追加します", "we will add a check") is never what started it.
    plans = set(ctx.cue_counts(field_cue("action_items"))) if name == "trigger" else set()
    # Nor is a step of the fix ("We delete stale routes and restart the proxy") or the change that
    # started it (the story's start) what was seen.
    not_seen: set[int] = set()
    if name == "symptoms_text":
        not_seen = set(ctx.cue_counts(field_cue("remediation"))) | _started_by_order(ctx)
    scored = []
    for i, s in enumerate(ctx.sentences):
        if s.role == "skip" or len(s.text) < 15:
            continue
        if response is not None and s.start in counts and response.search(s.text.lower()):
            continue
        if s.start in counts and (s.start in not_seen or s.start in plans or not _told(ctx, name, s)):
            continue
        hits = counts.get(s.start, 0)
        if hits and weights.get(s.role, 0.8) > 0:
            scored.append((-(hits * weights.get(s.role, 0.8)), i, s))
    scored.sort(key=lambda t: (t[0], t[1]))
    chosen = sorted((t for t in scored[:limit]), key=lambda t: t[1])
    return [t[2] for t in chosen]


def _told(ctx: Context, name: str, s: Sentence) -> bool:
    """Whether a cue sentence may tell its field: a question ("How was it detected?") or a sentence
    about the post ("In this post we share how we fixed it") tells nothing of the incident; a
    trigger or a symptom is what did happen: no negated cue ("no packages were published by the
    attackers", "instead of failing") and no what-if ("the bug would allow an attacker to")."""
    low = s.text.lower()
    if low.rstrip().endswith(("?", "？")) or not_told().search(low) or not prose(s):
        return False
    if name not in ("trigger", "symptoms_text"):
        return True
    return not _hypothetical().search(low) and _affirmed(field_cue(name), low)


@cache
def not_told() -> Lexicon:
    """Sentences about the post itself: no field's evidence by cue words."""
    return cue_pattern(cues()["about_post"])


@cache
def _hypothetical() -> Lexicon:
    c = cues()
    return cue_pattern([*c["counterfactual"], *c["hypothetical"]])


# Words right before a cue that say the thing did not happen ("wrote empty files instead of failing").
_INSTEAD = ("instead of ", "rather than ", "without ")


def _affirmed(lexicon: Lexicon, low: str) -> bool:
    """Whether some hit of `lexicon` in `low` is not negated nor said to have not happened."""
    return any(
        not negated(low, a, b) and not low[max(0, a - 12) : a].endswith(_INSTEAD)
        for a, b in lexicon.spans(low)
    )


@cache
def _preamble_words() -> Lexicon:
    return cue_pattern(cues()["not_summary"])


def _no_preamble(sentences: list[Sentence]) -> list[Sentence]:
    """Without the greeting, the author's introduction and the table of contents a post may open
    with ("Hi everyone, I'm Kim from the platform team."): a summary is the incident in brief."""
    preamble = _preamble_words()
    return [s for s in sentences if not preamble.search(s.text.lower()) and s.role != "skip"]


@cache
def _response_words() -> Lexicon:
    t = cues()["timeline"]
    return cue_pattern([*t["fix_words"], *t["resolve"]])


# Of the lessons' budget, the share a "what went well" list may take when the page also lists
# its problems: a retrospective's lessons are both.
LESSONS_SHARE = 0.5


def _retrospective(ctx: Context, lessons: list[Sentence], limit: int) -> list[Sentence]:
    """The lessons of a page, and the first items of its problems list ("What went wrong",
    課題, 문제점: the contributing role, told as a list) when it has one: a retrospective's
    lessons are what went well and what did not."""
    problems = [s for s in ctx.by_role("contributing") if s.kind == "list_item"]
    if not problems:
        return take(lessons, limit)
    first = take(lessons, int(limit * LESSONS_SHARE))
    used = sum(len(s.text) + 1 for s in first)
    return sorted(first + take(problems, max(1, limit - used)), key=lambda s: s.start)


def draft_text_field(ctx: Context, name: str) -> Found:
    found = Found()
    lang = ctx.lang
    limit = budget(name, lang)
    in_section = [s for s in ctx.by_role(name) if s.kind != "code"]
    if name == "summary":
        in_section = _no_preamble(in_section)
    if in_section and name == "lessons":
        chosen, conf = _retrospective(ctx, in_section, limit), confidence(0.75, "heading")
    elif in_section:
        chosen, conf = take(in_section, limit), confidence(0.75, "heading")
    elif name == "summary":
        chosen, conf = take(_no_preamble(_lead(ctx)), limit), confidence(0.6, "rule")
    else:
        chosen, conf = take(cue_sentences(ctx, name), limit), confidence(0.4, "cue")
    if chosen:
        found.put(name, {lang: join(chosen, lang)}, [sentence_evidence(ctx, s) for s in chosen], conf)
    return found


def draft_summary(ctx: Context) -> Found:
    return draft_text_field(ctx, "summary")


def draft_trigger(ctx: Context) -> Found:
    found = draft_text_field(ctx, "trigger")
    if found.confidence.get("trigger") and found.confidence["trigger"].method == "heading":
        return found
    # The timeline's first-impact entry ("15:00 - v1.4.0 released") is the trigger when a timeline
    # says so; it goes first, before cue sentences.
    # Without one, the timeline's first entries before the first report ("10:05 certificate
    # renewed"): the story's start, in order of time.
    starts, _seen = story_before_noticed(ctx)
    if not starts:
        return found
    cue = found.record.get("trigger", {})
    cue_text = cue.get(ctx.lang, "") if isinstance(cue, dict) else ""
    if all(s.text in cue_text for s in starts):
        return found
    quotes = [entry_evidence(ctx, s) for s in starts]
    quotes += [q for q in found.evidence.get("trigger", []) if not _covered(q, quotes)]
    text = "\n\n".join(squeeze(q.quote) for q in quotes[: len(starts)]) + (
        "\n\n" + cue_text if cue_text else ""
    )
    out = Found()
    out.put("trigger", {ctx.lang: text}, quotes, confidence(0.45, "rule"))
    return out


def draft_detection(ctx: Context) -> Found:
    found = draft_text_field(ctx, "detection")
    if found.confidence.get("detection") and found.confidence["detection"].method == "heading":
        return found
    # The first report or alert of a timeline ("16:17 - Issue #517 posted: the app won't start")
    # is when the incident was noticed; it goes first, before the cue sentences.
    first = first_noticed(ctx)
    if first is None:
        return found
    lead = entry_evidence(ctx, first)
    others = [q for q in found.evidence.get("detection", []) if not _covered(q, [lead])]
    text = "\n\n".join(squeeze(q.quote) for q in [lead, *others])
    out = Found()
    out.put("detection", {ctx.lang: text}, [lead, *others], confidence(0.45, "rule"))
    return out


def first_noticed(ctx: Context) -> Sentence | None:
    m = noticed_moment(ctx)
    return m.sentence if m is not None else None


def noticed_moment(ctx: Context) -> Moment | None:
    """The earliest dated sentence's moment that tells a report, an alert or the response
    starting (a timeline entry, or a "First detected: 08:56" line), outside plans and lessons."""
    if "noticed" not in ctx.memo:
        ctx.memo["noticed"] = _noticed_moment(ctx)
    return ctx.memo["noticed"]


def _noticed_moment(ctx: Context) -> Moment | None:
    cue = field_cue("detection")
    cued = ctx.cue_counts(cue)
    plans = ("skip", "action_items", "lessons", "remediation")
    ms = moments(ctx)
    # The timeline's own detection moments, and any dated entry whose words tell a report or an
    # alert: in its first sentence, or in the sentences its time heads ("10:05 / A customer wrote
    # to support ... The on-call engineer was paged").
    detected = {m.start for m in _events(ctx, ms)["detect"]}

    def told(m: Moment) -> bool:
        s = m.sentence
        if s.start in cued or m.start in detected:
            return True
        end = entry_end(ctx, s)
        return end > s.end and bool(cue.search(ctx.doc.text[s.start : end].lower()))

    found = [m for m in ms if m.sentence.role not in plans and told(m)]
    return min(found, key=lambda m: m.at) if found else None


def draft_symptoms_text(ctx: Context) -> Found:
    found = draft_text_field(ctx, "symptoms_text")
    if found.confidence.get("symptoms_text") and found.confidence["symptoms_text"].method == "heading":
        return found
    # What was seen as it began: the timeline's entries after the trigger and before the first
    # report ("09:20 Builds began to wait in the queue"), after the cue sentences.
    _trigger, seen = story_before_noticed(ctx)
    quotes = found.evidence.get("symptoms_text", [])
    extra = [q for q in (entry_evidence(ctx, s) for s in seen) if not _covered(q, quotes)]
    if not extra:
        return found
    cue = found.record.get("symptoms_text", {})
    cue_text = cue.get(ctx.lang, "") if isinstance(cue, dict) else ""
    text = "\n\n".join([cue_text] * bool(cue_text) + [squeeze(q.quote) for q in extra])
    out = Found()
    out.put(
        "symptoms_text", {ctx.lang: text}, quotes + extra, confidence(0.4, "rule" if not quotes else "cue")
    )
    return out


def _covered(q: Evidence, quotes: list[Evidence]) -> bool:
    return any(o.start <= q.start and q.end <= o.end or q.start <= o.start and o.end <= q.end for o in quotes)


def entry_evidence(ctx: Context, s: Sentence) -> Evidence:
    """The quote of a timeline entry: the sentence, and the untimed sentences its time heads."""
    return evidence(ctx.doc, s.start, entry_end(ctx, s), s.heading)


# Of the timeline's entries before the first report, how many tell the start when no entry is
# marked as the first impact (the change, then what it did: "10:05 certificate renewed", "10:12
# login errors"); the rest tell what was seen.
MAX_START_ENTRIES = 2
MAX_SEEN_ENTRIES = 2


def story_before_noticed(ctx: Context) -> tuple[list[Sentence], list[Sentence]]:
    """The timeline's entries told before its first detection moment, that are no response, fix or
    report, split into the start of the story (the trigger: the first-impact entry, else the first
    entries) and what was seen after it (symptoms). Order in time, not cue words: a page that
    does not say when it noticed has no such entries."""
    if "story" in ctx.memo:
        return ctx.memo["story"]
    ms = moments(ctx)
    told = [m.at for m in _events(ctx, ms)["detect"] if m.sentence.role == "timeline"]
    first = noticed_moment(ctx)
    noticed = min(told + ([first.at] if first is not None else []), default=None)
    entries: list[Sentence] = []
    if noticed is not None:
        skip = (response_pattern(), _response_words(), field_cue("detection"))
        for m in sorted(ms, key=lambda m: m.at):
            s = m.sentence
            if s.role != "timeline" or m.at >= noticed or s in entries:
                continue
            low = ctx.doc.text[s.start : entry_end(ctx, s)].lower()
            if not any(p.search(low) for p in skip):
                entries.append(s)
    start = first_impact(ctx)
    if start is not None:
        after = [s for s in entries if s.start != start.start and s.start > start.start]
        # A first impact that is the impact itself ("20:17 requests begin to take 10+ seconds"),
        # not a change: the entries told before it are what started it ("20:13 a user begins
        # uploading packages"), and it is also what was seen.
        impact = not _change_pattern().search(start.text.lower())
        before = [s for s in entries if s.start < start.start] if impact else []
        shown = [start, *after] if before else after
        story = ([*before[-MAX_START_ENTRIES:], start], shown[:MAX_SEEN_ENTRIES])
    else:
        # The first entry after the first that tells something seen ("10:12 login shows an error
        # page") ends the start: what came before it started it.
        seen = field_cue("symptoms_text")
        k = next(
            (
                i
                for i, s in enumerate(entries)
                if i and _affirmed(seen, ctx.doc.text[s.start : entry_end(ctx, s)].lower())
            ),
            MAX_START_ENTRIES,
        )
        k = min(k, MAX_START_ENTRIES)
        story = (entries[:k], entries[k:][:MAX_SEEN_ENTRIES])
    ctx.memo["story"] = story
    return story


def _started_by_order(ctx: Context) -> set[int]:
    """The story's start when order in time chose it (no first-impact entry: "09:40 the cleanup job
    is skipped"); a first-impact entry ("00:55 builds started failing") is also what was seen."""
    return set() if first_impact(ctx) is not None else {s.start for s in story_before_noticed(ctx)[0]}


def draft_lessons(ctx: Context) -> Found:
    return draft_text_field(ctx, "lessons")


# --- fitted evidence (issue 34): every sentence that might be a text field's evidence is a
# candidate with the features of linear.SENTENCE_FEATURES; where data/weights.json has a model for
# the field, the sentences it scores at or above its threshold are the field's evidence (best
# first, at most MAX_FITTED and the field's budget, told in page order). Without a model the rules
# above decide, and their choice is the `rule` feature.

MAX_ADDED = 1
# Words of impact (a symptom told without the field's cue words: "all services were down").
IMPACT_WORDS = cue_pattern(
    [
        "outage", "went down", "was down", "were down", "is down", "are down", "unavailable",
        "unresponsive", "not available", "failure", "failed", "failing", "error", "broken", "slow",
        "timeout", "timed out", "could not", "couldn't", "unable",
        "장애", "중단", "실패", "오류", "에러", "지연", "障害", "停止", "失敗", "エラー", "遅延", "できな",
    ]
)  # fmt: skip
# Fields whose candidates are every sentence of a section that may tell them, cue words or not.
WIDE_FIELDS = ("symptoms_text", "trigger")
MIN_CANDIDATE_CHARS = 15
_FIRST_PERSON = cue_pattern(
    ["we ", "we'", "our ", "us ", "us.", "us,", "우리", "저희", "弊社", "私たち", "当社"]
)


def _other_cues(name: str) -> list[Lexicon]:
    return [field_cue(n) for n in TEXT_FIELDS if n != name]


TEXT_FIELDS = ("summary", "trigger", "detection", "symptoms_text", "lessons")


def sentence_candidates(ctx: Context, name: str) -> list[tuple[Candidate, Sentence]]:
    """A text field's candidate sentences with their features (once the rules drafted the field):
    the sentences of its own section, those with its cue words, the opening paragraphs (summary)
    and the rules' own choice."""
    memo = ctx.memo.setdefault("sentence_candidates", {})
    if name not in memo:
        memo[name] = _sentence_candidates(ctx, name)
    return list(memo[name])


@dataclass(frozen=True)
class _Base:
    """What every text field's candidates share on a page (worked out once): the sentences a field
    may quote, and the features that do not depend on the field."""

    sentences: list[Sentence]
    lead: set[int]
    counts: dict[str, dict[int, int]]
    common: dict[int, dict[str, float]]  # by sentence start


def _base(ctx: Context) -> _Base:
    if "sentence_base" in ctx.memo:
        base: _Base = ctx.memo["sentence_base"]
        return base
    about = ctx.cue_counts(not_told())
    sentences = [
        s
        for s in ctx.sentences
        if s.role != "skip"
        and s.kind != "code"
        and len(s.text) >= MIN_CANDIDATE_CHARS
        and s.start not in about
        and not s.text.rstrip().endswith(("?", "？"))
        and prose(s)
    ]
    by_heading: dict[tuple[str | None, str], list[Sentence]] = {}
    for s in sentences:
        by_heading.setdefault((s.heading, s.role), []).append(s)
    timed_starts = {m.sentence.start for m in moments(ctx)}
    lead = {s.start for s in _lead(ctx)}
    length = max(1, len(ctx.doc.text))
    hyp, first, cause, impact = (
        ctx.cue_counts(_hypothetical()),
        ctx.cue_counts(_FIRST_PERSON),
        ctx.cue_counts(named_cue("cause_statement")),
        ctx.cue_counts(IMPACT_WORDS),
    )
    common: dict[int, dict[str, float]] = {}
    for group in by_heading.values():
        n = len(group)
        for i, s in enumerate(group):
            f = {
                "position": round(s.start / length, 6),
                "section_position": round(i / (n - 1), 6) if n > 1 else 0.0,
                "first_in_section": float(i == 0),
                "hypothetical": float(s.start in hyp),
                "first_person": float(s.start in first),
                "chars": round(math.log1p(len(s.text)), 6),
                "list_item": float(s.kind in ("list_item", "table_row")),
                "timed": float(s.start in timed_starts),
                "lead": float(s.start in lead),
                "impact_words": round(math.log1p(impact.get(s.start, 0)), 6),
                "cause_cue": float(s.start in cause),
            }
            common[s.start] = {k: v for k, v in f.items() if v}
    counts = {n: ctx.cue_counts(field_cue(n)) for n in TEXT_FIELDS}
    base = _Base(sentences, lead, counts, common)
    ctx.memo["sentence_base"] = base
    return base


def _excluded(ctx: Context, name: str) -> set[int]:
    """Sentences the rules never quote for `name` (cue_sentences' tests): a fix or a recovery step
    as a trigger or a symptom, a plan as a trigger, a step of the fix or the story's start as
    what was seen, a greeting or a table of contents as a summary."""
    out: set[int] = set()
    if name in ("trigger", "symptoms_text"):
        out |= set(ctx.cue_counts(_response_words()))
    if name == "trigger":
        out |= set(ctx.cue_counts(field_cue("action_items")))
    if name == "symptoms_text":
        out |= set(ctx.cue_counts(field_cue("remediation"))) | _started_by_order(ctx)
    if name == "summary":
        out |= set(ctx.cue_counts(_preamble_words()))
    return out


def _sentence_candidates(ctx: Context, name: str) -> list[tuple[Candidate, Sentence]]:
    base = _base(ctx)
    chosen = ctx.memo.get("rule_evidence", {}).get(name, [])
    weights = CUE_ROLE_WEIGHT.get(name, {})
    cue = base.counts[name]
    others = [base.counts[o] for o in TEXT_FIELDS if o != name]
    excluded = _excluded(ctx, name)
    wide = name in WIDE_FIELDS
    told = name in ("trigger", "symptoms_text")
    cands = []
    for s in base.sentences:
        rule = bool(chosen) and any(s.start <= a < s.end or a <= s.start < b for a, b in chosen)
        hits = cue.get(s.start, 0)
        role = s.role
        weight = weights.get(role, 0.8) if weights else float(role == name)
        # Any sentence of a section the field's cue words may count in (a symptom told without a
        # cue word: "confirmed all services were down"); the summary: its lead and own section.
        if not (
            rule
            or hits
            or (wide and weight > 0)
            or role == name
            or (name == "summary" and s.start in base.lead)
        ):
            continue
        if not rule and (s.start in excluded or (weights and weight <= 0)):
            continue
        negated = bool(hits) and not _affirmed(field_cue(name), s.text.lower())
        if not rule and negated and told:
            continue  # what did not happen is no trigger and no symptom
        features = dict(base.common[s.start])
        if rule:
            features["rule"] = 1.0
        if role == name:
            features["in_role"] = 1.0
        if weight:
            features["role_weight"] = weight
        if hits:
            features["cue"] = round(math.log1p(hits), 6)
        other = sum(o.get(s.start, 0) for o in others)
        if other:
            features["other_cue"] = round(math.log1p(other), 6)
        if negated:
            features["negated"] = 1.0
        cands.append((Candidate(str(s.start), float(rule), features), s))
    return cands


def fitted(ctx: Context, name: str, rules: Found, weights: Weights | None) -> Found:
    """The field as the rules drafted it (`rules`); where the weights have a model for the field,
    with the best other sentence the model scores at or above its threshold added (MAX_ADDED)."""
    ctx.memo.setdefault("rule_evidence", {})[name] = [(q.start, q.end) for q in rules.evidence.get(name, [])]
    model = (weights or linear.shipped()).text.evidence.get(name)  # type: ignore[call-overload]
    if model is None:
        return rules
    cands = [(c, s) for c, s in sentence_candidates(ctx, name) if not c.rule_value]
    for c, _s in cands:
        c.p = score(c.features, model)
    ranked = sorted(cands, key=lambda cs: (-cs[0].p, cs[1].start))
    added = [s for c, s in ranked[:MAX_ADDED] if c.p >= model.threshold]
    if not added:
        return rules
    value = rules.record.get(name)
    text = value.get(ctx.lang, "") if isinstance(value, dict) else ""
    out = Found()
    out.put(
        name,
        {ctx.lang: "\n\n".join([text] * bool(text) + [join(added, ctx.lang)])},
        rules.evidence.get(name, []) + [sentence_evidence(ctx, s) for s in added],
        rules.confidence.get(name) or confidence(0.4, "cue"),
    )
    return out
