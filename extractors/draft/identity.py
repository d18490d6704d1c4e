"""Identity fields: organisation and its slug, publication date, title and language."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from extractors.draft.evidence import Context, Found, confidence, evidence
from extractors.draft.linear import OrgWeights, page_score
from extractors.language import document_language
from schema.document import Document

DATA = Path(__file__).parent / "data"


@cache
def publishers() -> dict[str, Any]:
    return json.loads((DATA / "publishers.json").read_text(encoding="utf-8"))


def detect_language(doc: Document) -> str:
    """The page's language: the project's one language rule (extractors/language.py)."""
    return document_language(doc.language, doc.text)


def draft_language(ctx: Context) -> Found:
    found = Found()
    lang = ctx.lang
    method = "metadata" if lang == (doc_lang := (ctx.doc.language or "").split("-")[0]) else "rule"
    value = max(ctx.doc.language_confidence, 0.8) if method == "metadata" else 0.85
    found.put("", None, conf=confidence(value, method), key="language")
    if doc_lang and lang != doc_lang:
        found.reasons.append(f"language: script says {lang}, detector said {doc_lang}")
    return found


# --- organisation -------------------------------------------------------------------------------


def _host(url: str | None) -> str:
    if not url:
        return ""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.lower().rstrip(".")


def slugify(text: str) -> str:
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def domain_slug(url: str | None) -> str | None:
    """The publisher's name as the domain spells it: blog.rust-lang.org -> rust-lang.

    Shared hosts name the publisher one level down (hyperconnect.github.io) or in the first path
    segment (medium.com/@acme)."""
    host = _host(url)
    if not host or re.fullmatch(r"[\d.:]+", host):
        return None
    data = publishers()
    labels = host.split(".")
    for suffix in data["hosting"]:
        if host.endswith("." + suffix):
            return slugify(host[: -len(suffix) - 1].split(".")[-1]) or None
    for suffix in data["path_hosting"]:
        if host.endswith("." + suffix) and host[: -len(suffix) - 1] not in data["skip_labels"]:
            # acme-eng.medium.com: the publisher is the subdomain, not the post's path
            return slugify(host[: -len(suffix) - 1].split(".")[-1]) or None
        if host == suffix or host.endswith("." + suffix):
            path = urlsplit(url or "").path.strip("/").split("/")
            return slugify(path[0].lstrip("@")) if path and path[0] else slugify(suffix.split(".")[0])
    n = 3 if ".".join(labels[-2:]) in data["second_level"] else 2
    core = labels[-n] if len(labels) >= n else labels[0]
    if core in data["skip_labels"] and len(labels) > n:
        core = labels[-n - 1]
    return slugify(core) or None


def _registry(url: str | None) -> dict[str, str] | None:
    host = _host(url)
    for suffix, entry in sorted(publishers()["hosts"].items(), key=lambda kv: -len(kv[0])):
        if host == suffix or host.endswith("." + suffix):
            return entry
    return None


def clean_site_name(name: str) -> str:
    """Drop generic words: 'The Python Package Index Blog' -> 'Python Package Index'."""
    words = sorted(publishers()["site_words"], key=len, reverse=True)
    out = name.strip()
    for _ in range(4):
        before = out
        for w in words:
            out = re.sub(rf"(?i)^{re.escape(w)}(?:\s+|$)|(?:\s+|^){re.escape(w)}$", "", out).strip()
            # CJK site words attach without a space: ペパボテックブログ, 株式会社ことのは
            if not w.isascii() and out.endswith(w) and len(out) > len(w):
                out = out[: -len(w)].strip()
            if not w.isascii() and out.startswith(w) and len(out) > len(w):
                out = out[len(w) :].strip()
        out = out.strip(" -|·:—")
        if out == before:
            break
    return out


_HOST_LIKE = re.compile(r"^(?:https?://)?[\w-]+(?:\.[\w-]+)+/?$")


# The word every team line of a language holds.
_TEAM_WORD = {"en": "team", "ko": "팀", "ja": "チーム"}


@cache
def _team_patterns() -> dict[str, re.Pattern[str]]:
    lines = publishers()["team_lines"]
    return {lang: re.compile(p) for lang, p in lines.items() if not lang.startswith("_")}


def team_name(ctx: Context, slug: str | None) -> str | None:
    """The publisher as the page's own text names it ("the Binder team", "한빛로 SRE팀"): the name
    most often given; one that matches the domain's name wins a tie."""
    counts: dict[str, int] = {}
    text = ctx.doc.text[:50000]
    lower = text.lower()
    for lang, pattern in _team_patterns().items():
        if _TEAM_WORD[lang] not in lower:
            continue  # the pattern's scan costs more than this test
        for m in pattern.finditer(text):
            name = clean_site_name(m.group(1))
            if name and len(name) >= 2 and not _HOST_LIKE.match(name):
                counts[name] = counts.get(name, 0) + 1
    if not counts:
        return None
    key = slugify(slug or "").replace("-", "")

    def rank(name: str) -> tuple[int, int]:
        own = slugify(name).replace("-", "")
        related = bool(key and own and (own in key or key in own))
        return int(related), counts[name]

    return max(sorted(counts), key=rank)


def draft_org(ctx: Context, source_url: str, model: OrgWeights | None = None) -> Found:
    """The organisation: the rules' pick (a known publisher, the site name, a team line, the
    domain), or with a fitted `model` the best-scored candidate (`org_candidates`) when it is
    confident, else the publisher the domain spells, else unknown."""
    found = Found()
    doc = ctx.doc
    url = doc.canonical_url or doc.url or source_url
    entry = _registry(url)
    slug = domain_slug(url)
    cands = org_candidates(ctx, source_url)
    ctx.memo["org_candidates"] = cands
    if model is not None:
        return _fitted_org(doc, cands, model, entry is not None)
    org, method, value = None, "metadata", 0.0
    rule = next((c for c in cands if c.features.get("rule_pick")), None)
    if rule is not None:
        org = rule.name
        method, value = _RULE_CONFIDENCE[rule.source]
        if entry:
            slug = entry["slug"]
    if org:
        quotes = []
        at = doc.text.find(org)
        if at >= 0:
            quotes.append(evidence(doc, at, at + len(org), None))
        found.put("org", org, quotes, confidence(value, method))
    if org and not entry:
        slug = _own_slug(org, slug)
    if slug:
        found.put("org_slug", slug, conf=confidence(value if entry else 0.7, "metadata" if entry else "rule"))
    return found


# The rules' confidence in each source (the order they are tried in, best first).
_RULE_CONFIDENCE: dict[str, tuple[str, float]] = {
    "registry": ("metadata", 0.9),
    "site": ("metadata", 0.75),
    "team": ("rule", 0.6),
    "domain": ("rule", 0.5),
}
# Where a title names its site: "Outage report | Acme Blog".
_TITLE_SEPARATORS = (" | ", " - ", " – ", " — ", " :: ", " · ")
MAX_ORG_WORDS = 5  # a title's site part or an author longer than this is no organisation's name


@dataclass
class OrgCandidate:
    """One name the page might be published by: where it was found and its features
    (linear.ORG_FEATURES); `slug` is the org_slug it would give."""

    name: str
    slug: str | None
    source: str  # the first source that named it (registry, site, team, domain, title, author)
    features: dict[str, float] = field(default_factory=dict)
    p: float = 0.0


# A word of Latin letters and CJK together; a name ending in a possessive or a Korean or Japanese
# particle (a sentence's subject or object, not a publisher's name).
_MIXED = re.compile(
    r"[A-Za-z][\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af][A-Za-z]"
)
_PARTICLE_END = re.compile(r"(?:'s|’s|[와과의는은이가을를에도]|에서|の|は|が|を|に|で|と)$")


def _key(name: str) -> str:
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", name).casefold())


def _named(ctx: Context, url: str, domain: str | None) -> list[tuple[str, str, str | None]]:
    """(source, name, slug) of every name the identity sources give, in the rules' order."""
    doc = ctx.doc
    entry = _registry(url)
    named: list[tuple[str, str, str | None]] = []
    if entry:
        named.append(("registry", entry["org"], entry["slug"]))
    site = doc.site_name if doc.site_name and not _HOST_LIKE.match(doc.site_name.strip()) else None
    if site and (cleaned := clean_site_name(site)):
        named.append(("site", cleaned, None))
    if team := team_name(ctx, domain):
        named.append(("team", team, None))
    if domain:
        named.append(("domain", domain, domain))
    if doc.title:
        title = re.sub(r"\s+", " ", doc.title).strip()
        for sep in _TITLE_SEPARATORS:
            if sep in title:
                tail = clean_site_name(title.rpartition(sep)[2])
                if tail and len(tail.split()) <= MAX_ORG_WORDS and not _HOST_LIKE.match(tail):
                    named.append(("title", tail, None))
                break
    author = (doc.author or "").strip()
    if author and len(author.split()) <= MAX_ORG_WORDS and not _HOST_LIKE.match(author):
        named.append(("author", author, None))
    return named


def org_candidates(ctx: Context, source_url: str) -> list[OrgCandidate]:
    """Every name the page's identity sources give, once each (in source order), with features."""
    doc = ctx.doc
    url = doc.canonical_url or doc.url or source_url
    domain = domain_slug(url)
    named = _named(ctx, url, domain)
    rule_source = next((src for src, *_ in named if src in _RULE_CONFIDENCE), None)
    by_key: dict[str, OrgCandidate] = {}
    sources: dict[str, set[str]] = {}
    for src, name, slug in named:
        key = _key(name)
        if not key:
            continue
        if key not in by_key:
            own = slug if slug else _own_slug(name, domain)
            by_key[key] = OrgCandidate(name, own, src)
            sources[key] = set()
        sources[key].add(src)
    text = doc.text[:50000]
    folded_title = _key(doc.title or "")
    domain_key = (domain or "").replace("-", "")
    out = list(by_key.values())
    for cand in out:
        key = _key(cand.name)
        srcs = sources[key]
        f: dict[str, float] = {"src_" + src: 1.0 for src in srcs}
        if cand.source == rule_source:
            f["rule_pick"] = 1.0
        f["sources"] = round(math.log1p(len(srcs)), 6)
        own = slugify(cand.name).replace("-", "")
        if domain_key and own and "domain" not in srcs and _related(own, domain_key):
            f["related"] = 1.0
        if n := text.count(cand.name):
            f["in_text"] = round(math.log1p(n), 6)
        if key in folded_title:
            f["in_title"] = 1.0
        if re.search(r"[A-Za-z]", cand.name):
            f["latin"] = 1.0
        f["words"] = float(min(4, len(cand.name.split())))
        if _MIXED.search(cand.name):
            f["mixed_script"] = 1.0
        if _PARTICLE_END.search(cand.name):
            f["particle_end"] = 1.0
        cand.features = f
    return out


def _fitted_org(doc: Document, cands: list[OrgCandidate], model: OrgWeights, known: bool) -> Found:
    """The rules' pick when `model` is confident in it (its probability reaches the threshold),
    else the publisher the domain spells, else unknown: a guess is worse than either."""
    found = Found()
    for c in cands:
        c.p = page_score(c.features, model)
    best = next((c for c in cands if c.features.get("rule_pick")), None)
    method, value = "rule", 0.5
    if best is not None and best.p >= model.threshold:
        method = "metadata" if best.source in ("registry", "site") else "rule"
        value = best.p
    elif best is not None:
        doubted = best
        best = next((c for c in cands if c.features.get("src_domain")), None)
        found.reasons.append(
            f"org: {doubted.name!r} doubted (p {doubted.p:.2f} < {model.threshold:g}); "
            + (f"the domain's {best.name!r}" if best else "unknown")
        )
    if best is None:
        return found
    quotes = []
    at = doc.text.find(best.name)
    if at >= 0:
        quotes.append(evidence(doc, at, at + len(best.name), None))
    found.put("org", best.name, quotes, confidence(value, method))
    if best.slug:
        registry = known and best.source == "registry"
        found.put(
            "org_slug",
            best.slug,
            conf=confidence(value if registry else 0.7, "metadata" if registry else "rule"),
        )
    return found


def _own_slug(org: str, domain: str | None) -> str | None:
    """The slug of the organisation the page names ("Binder" on blog.jupyter.org -> binder): the
    domain's name only where it is the organisation's own (example-corp.io for "Example Corp") or
    the name has no Latin letters to spell a slug with (ペパボ)."""
    own = slugify(org)
    if not own or not domain:
        return domain or own or None
    return domain if _related(own.replace("-", ""), domain.replace("-", "")) else own


def _related(name: str, domain: str) -> bool:
    """Whether a domain spells the organisation's name: one holds the other ("hex" in "hexpm"),
    they share a word's start ("rust-lang", "Rust Project"), or the domain is the name cut short
    ("pypi" from "Python Package Index": its letters in the name's order)."""
    if name in domain or domain in name or name[:4] == domain[:4]:
        return True
    rest = iter(name)
    return all(c in rest for c in domain)


# --- date ---------------------------------------------------------------------------------------

_URL_DATE = re.compile(r"/((?:19|20)\d\d)[/-](\d\d)[/-](\d\d)(?:[/-]|\.html|$)")
_ISO_DATE = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")


def _valid(y: str, m: str, d: str) -> str | None:
    try:
        return date(int(y), int(m), int(d)).isoformat()
    except ValueError:
        return None


def draft_date(ctx: Context, source_url: str) -> Found:
    found = Found()
    doc = ctx.doc
    if doc.published and (m := _ISO_DATE.match(doc.published.strip())) and (iso := _valid(*m.groups())):
        quotes = []
        at = doc.text.find(iso)
        if at >= 0 and at < 2000:
            quotes.append(evidence(doc, at, at + len(iso), None))
        found.put("date", iso, quotes, confidence(0.9, "metadata"))
        found.put("date_kind", "published")
        return found
    # A byline date: a short block near the top that is (or holds) a date, "March 14, 2024 · Priya".
    from extractors.draft.timeline import _dates

    for block in ctx.blocks[:6]:
        if block.kind == "heading" or block.start > 600 or block.end - block.start > 80:
            continue
        if re.search(r"(?i)incident|outage|occurred|발생|장애|発生|障害", doc.text[block.start : block.end]):
            continue  # "Incident date: ..." is when it happened, not when it was published
        found_dates = _dates(doc.text[block.start : block.end], 0)
        full = [(a, b, d) for a, b, d in found_dates if d.year > 1900]
        if full:
            a, b, d = full[0]
            q = evidence(doc, block.start + a, block.start + b, None)
            found.put("date", d.isoformat(), [q], confidence(0.75, "rule"))
            found.put("date_kind", "published")
            return found
    # Blogs put the publication date in the URL (/2023/02/08/slug); incident logs put the incident
    # date there (/incidents/2020-09-21-...), so a dashed date after an "incident" path is skipped.
    url = doc.canonical_url or doc.url or source_url or ""
    path = urlsplit(url).path if url else ""
    m = _URL_DATE.search(path)
    if m and "incident" not in path[: m.start()].lower() and (iso := _valid(*m.groups())):
        found.put("date", iso, [], confidence(0.7, "rule"))
        found.put("date_kind", "published")
    return found


# --- title --------------------------------------------------------------------------------------


def clean_title(title: str, site_name: str | None) -> str:
    title = re.sub(r"\s+", " ", title).strip()
    for sep in (" | ", " - ", " – ", " — ", " :: ", " · "):
        if sep in title:
            head, _, tail = title.rpartition(sep)
            tail_sq = tail.strip().lower()
            if site_name and (tail_sq == site_name.strip().lower() or tail_sq in site_name.lower()):
                title = head.strip()
    return title


def draft_title(ctx: Context) -> Found:
    found = Found()
    doc = ctx.doc
    title = clean_title(doc.title, doc.site_name) if doc.title else None
    heading_blocks = [b for b in ctx.blocks if b.kind == "heading"]
    if not title and heading_blocks:
        b = min(heading_blocks, key=lambda b: (b.level, b.start))
        title = doc.text[b.start : b.end].strip()
    if not title:
        return found
    at = doc.text.find(title)
    if at >= 0:
        found.put(
            "title", {ctx.lang: title}, [evidence(doc, at, at + len(title))], confidence(0.9, "metadata")
        )
    else:
        found.put("title", {ctx.lang: title}, [], confidence(0.8, "metadata"))
    return found
