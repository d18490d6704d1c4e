"""Impact {scope, users, region}: from the impact section and prose (counts, user groups, regions)."""

from __future__ import annotations

import re
from functools import cache

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
from extractors.draft.negation import negated

MAX_QUOTES = 4
MAX_CUE_QUOTES = 3
MIN_SENTENCE = 20
SCOPE_CHARS = 300
# Who was affected, counted with its unit: people, customers, requests or organisations, never
# another count (error types, servers, packages, services). PEOPLE outrank REQUESTS when a page
# gives both ("70% of requests failed ... 900 users"). A number right after '#', a letter, ':' or
# '.' is an identifier, a version or a clock time ("PR #3 builds", "v2 users", "10:00 users"), no count;
# the words between a number and its noun are no numbers ("May 2 about 900 users" counts 900).
PEOPLE_NOUNS = (
    r"users?|customers?|accounts?|people|members?|developers?|players?|merchants?|sellers?|subscribers?|"
    r"organi[sz]ations?|orgs?|tenants?|companies|teams?|"
    r"명|곳|사용자|고객|계정|이용자|회원|人|名|社|ユーザー|アカウント|お客様|会員"
)
REQUEST_NOUNS = (
    r"requests?|api calls?|calls?|transactions?|orders?|payments?|builds?|jobs?|"
    r"건|件|リクエスト|요청|결제|주문"
)
USER_NOUNS = PEOPLE_NOUNS + "|" + REQUEST_NOUNS
_PEOPLE_TAIL = re.compile(rf"(?i)(?:{PEOPLE_NOUNS})$")
# Counter words that follow their number directly (900명, 300人, 12社, 5件): no words between.
COUNTERS = r"명|곳|건|人|名|社|件"
_WORD_NOUNS = "|".join(n for n in USER_NOUNS.split("|") if n not in COUNTERS.split("|"))
# A number: not part of an identifier, a version, a date or a clock time (no '#', letter, ':', '.',
# ',', '/' or '-' before it), and ending in a digit ("2023-07-20, our users" and "3. 요청" are none).
_NUMBER = r"(?<![#.:,/\-A-Za-z0-9])\d(?:[\d,.]*\d)?\s*(?:%|percent|万|만|억|k\b|million|thousand)?"
COUNT = re.compile(
    rf"(?i)(?:about|approximately|around|over|more than|up to|nearly|roughly|약|約|およそ|最大)?\s*{_NUMBER}"
    rf"(?:\s*(?:of\s+(?:all\s+|our\s+)?)?(?:(?!\d)[\w\-]+\s+){{0,2}}(?:{_WORD_NOUNS})|\s?(?:{COUNTERS}))"
)
_DIGIT = re.compile(r"\d")


def _count(text: str) -> re.Match[str] | None:
    """COUNT's first hit; a sentence without a digit has none, and most have none (a cheap test
    first: COUNT's optional lead words make it slow to fail)."""
    return COUNT.search(text) if _DIGIT.search(text) else None


CLOUD_REGION = re.compile(
    r"\b(?:us|eu|ap|sa|ca|me|af|il)-(?:east|west|north|south|central|northeast|southeast|northwest|southwest)-\d\b"
    r"|\b(?:asia|europe|us|northamerica|southamerica|australia)-[a-z]+\d\b"
    r"|\b(?:East|West|North|South|Central)\s+(?:US|Europe|Asia|India|Japan|Korea)(?:\s+\d)?\b"
)
_COMPASS = ("East", "West", "North", "South", "Central")


def _cloud_region(text: str) -> re.Match[str] | None:
    """CLOUD_REGION's first hit: its names hold a hyphen or a compass word, which few sentences do."""
    return CLOUD_REGION.search(text) if "-" in text or any(w in text for w in _COMPASS) else None


PLACES = re.compile(
    r"\b(?:Japan|Korea|South Korea|United States|the US|Europe|EU|Asia|North America|South America|"
    r"Australia|India|China|Germany|France|Brazil|UK|United Kingdom|Singapore|Indonesia|Taiwan|Vietnam)\b"
    r"|한국|국내|일본|미국|유럽|동남아|인도네시아|대만|日本|国内|韓国|米国|欧州|アジア"
)


def _count_in(ctx: Context, s: Sentence) -> re.Match[str] | None:
    """_count of a sentence, once a page: the cue scoring and the users' count both ask."""
    memo = ctx.memo.setdefault("impact_count", {})
    if s.start not in memo:
        memo[s.start] = _count(s.text)
    return memo[s.start]


@cache
def _not_impact() -> Lexicon:
    c = cues()
    # Not the what-if list: an impact is often told as what a fault can do ("this regression can
    # affect many libraries", 영향을 줄 수 있습니다); what could have happened is no impact.
    return cue_pattern([*c["not_summary"], *c["counterfactual"], *c["about_post"], *c["apology"]])


def _impact_sentences(ctx: Context) -> tuple[list[Sentence], str]:
    section = [s for s in ctx.by_role("impact") if s.kind != "code"]
    if section:
        return section, "heading"
    cued = ctx.cue_counts(field_cue("impact"))
    # Impact is told anywhere but in plans and lessons: summaries, cause sections, timelines.
    # Nor in the greeting or the author's introduction ("Hi everyone, I'm Kim"), in what would or
    # could have happened ("the bug could have corrupted uploads"), or in an apology ("we apologize
    # to everyone affected").
    skip = ("skip", "action_items", "lessons", "remediation", "contributing")
    near = [
        s
        for s in ctx.sentences
        if s.role not in skip and not (s.start in cued and _not_impact().search(s.text.lower()))
    ]
    scored = []
    # A sentence this short is a label or a heading; Japanese and Chinese say as much in half the
    # characters ("40分間、誰も決済できずにいました。" is 18).
    least = MIN_SENTENCE // 2 if ctx.lang in ("ja", "zh") else MIN_SENTENCE
    for i, s in enumerate(near):
        n = cued.get(s.start, 0) + (2 if _count_in(ctx, s) else 0)
        if n >= 1 and len(s.text) >= least and prose(s):  # prose last: few sentences get there
            scored.append((-n, i, s))
    # The sentences with most impact cues, told in page order.
    chosen = sorted(sorted(scored, key=lambda t: (t[0], t[1]))[:MAX_CUE_QUOTES], key=lambda t: t[1])
    return [t[2] for t in chosen], "cue"


def draft_impact(ctx: Context) -> Found:
    found = Found()
    doc = ctx.doc
    sentences, method = _impact_sentences(ctx)
    impact = {"scope": "unknown", "users": "unknown", "region": "unknown"}
    quotes = []
    if sentences:
        chosen: list[Sentence] = []
        used = 0
        for s in sentences:
            if chosen and used + len(s.text) > SCOPE_CHARS:
                break
            chosen.append(s)
            used += len(s.text)
        impact["scope"] = squeeze(" ".join(s.text for s in chosen))
        scope_q = [sentence_evidence(ctx, s) for s in chosen]
        found.put("impact.scope", None, scope_q, confidence(0.6 if method == "heading" else 0.35, method))
        # The scope is short; its evidence is every sentence that told it (a long first sentence
        # must not hide the others).
        quotes += scope_q + [sentence_evidence(ctx, s) for s in sentences[len(chosen) : MAX_CUE_QUOTES]]
    # Membership by start offset: sentences are disjoint spans, and comparing dataclasses field by
    # field in `in` over lists cost more than all the searches here.
    taken = {s.start for s in sentences}
    pool = sentences + [s for s in ctx.sentences if s.role in ("summary", "impact") and s.start not in taken]
    in_pool = {s.start for s in pool}
    best: tuple[int, int, Sentence, re.Match[str]] | None = None
    for order, s in enumerate(pool):
        m = _count_in(ctx, s)
        if not m or re.fullmatch(r"\s*\d{1,2}\s*(?:명|건)?\s*", m.group(0)):
            continue
        if negated(s.text, m.start(), m.end()):
            continue  # "No customers were affected" counts nobody
        rank = 0 if _PEOPLE_TAIL.search(m.group(0).strip()) else 1
        if best is None or (rank, order) < best[:2]:
            best = (rank, order, s, m)
        if rank == 0:
            break  # the first count of people wins: nothing later can beat it
    if best is not None:
        _r, _o, s, m = best
        q = evidence(doc, s.start + m.start(), s.start + m.end(), s.heading)
        if q.quote:
            impact["users"] = q.quote
            found.put("impact.users", None, [q, sentence_evidence(ctx, s)], confidence(0.5, "rule"))
            quotes.append(sentence_evidence(ctx, s))
    for s in pool + [x for x in ctx.sentences if x.role not in ("skip",) and x.start not in in_pool]:
        m = _cloud_region(s.text) or (PLACES.search(s.text) if s.start in in_pool else None)
        if m:
            q = evidence(doc, s.start + m.start(), s.start + m.end(), s.heading)
            impact["region"] = q.quote
            found.put("impact.region", None, [q, sentence_evidence(ctx, s)], confidence(0.5, "rule"))
            quotes.append(sentence_evidence(ctx, s))
            break
    found.put("impact", impact, quotes[: MAX_QUOTES + 2], confidence(0.5, method) if sentences else None)
    return found
