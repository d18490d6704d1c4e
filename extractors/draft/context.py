"""The page context every field drafter reads: the Document's sentences, their section roles and
one-pass cue counts, worked out once per page."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from extractors.draft.cues import _field_cues
from extractors.draft.lexicon import Lexicon, counts_within_each
from extractors.sentences import split_sentences, trim
from schema.document import Block, Document, Section
from schema.headings import exact_role, heading_role

_LATIN_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=\S)")
_CJK_END = re.compile(r"(?<=[。！？])[」』）)]*\s*(?=\S)")
# Abbreviations that end in a period but not a sentence.
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|approx|Mr|Ms|Dr|St|No|Inc|Ltd|U\.S|cf)\.)$", re.I)
_SPACE = re.compile(r"\s")
# Front matter a page shows as text (+++ TOML +++ or --- YAML ---, or several key = "value" pairs).
_FRONT_MATTER = re.compile(r"^\s*(?:\+\+\+|---)\s*\w+\s*[:=]|(?:\b\w+ = \"[^\"]*\"\s*){2,}")


def _front_matter(text: str) -> bool:
    # Every match holds one of these: a substring test spares most blocks the regex's word-by-word scan.
    return ("+++" in text or "---" in text or ' = "' in text) and bool(_FRONT_MATTER.search(text))


def own_split_sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Split text[start:end] into sentence spans, trimmed of surrounding whitespace."""
    end = len(text) if end is None else end
    cuts = [start]
    chunk = text[start:end]
    for pattern in (_LATIN_END, _CJK_END, re.compile(r"\n+")):
        for m in pattern.finditer(chunk):
            before = chunk[: m.start()]
            if pattern is _LATIN_END and _ABBREV.search(before):
                continue
            cuts.append(start + m.end())
    cuts = sorted(set(cuts)) + [end]
    spans = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        a, b = trim(text, a, b)
        if b > a:
            spans.append((a, b))
    return spans


def _split(text: str, lang: str, start: int, end: int) -> list[tuple[int, int]]:
    """The extraction package's splitter; ours when it fails (same contract)."""
    try:
        spans = split_sentences(text, lang, start=start, end=end)
    except Exception:  # noqa: BLE001 - a splitter bug must not cost the whole draft
        return own_split_sentences(text, start, end)
    # Re-trim and keep only spans inside the block: a quote must be an exact slice.
    out = []
    for a, b in spans:
        a, b = trim(text, max(a, start), min(b, end))
        if b > a:
            # Their splitter may keep line breaks inside a sentence; ours cuts there too.
            out.extend(own_split_sentences(text, a, b) if "\n" in text[a:b] else [(a, b)])
    return out


# A heading that is a timeline entry's time and nothing else: "2024-03-03 22:40 UTC", "14:05",
# "March 3, 9:05 PM PDT", "오후 11시 13분", "14時05分".
_STAMP_TIME = re.compile(r"\d{1,2}:\d{2}|\d{1,2}\s*(?:時|시)")
_STAMP_REST = re.compile(
    r"(?i)[\d\s:\-/.,()+~–年月日時分秒년월일시분초오전후午前後]+|\b(?:utc|gmt|[a-z]{1,2}[sd]?t|am|pm|a\.m\.|p\.m\."
    r"|jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b"
)
MAX_STAMP = 40

# A label that opens a paragraph or list item and names a section ("Impact: ...", "Resolution:",
# "Review actions:", "원인:", "対応："): posts without headings write their sections so. At most
# this many characters before the colon (a heading, not a sentence with a colon in it).
MAX_LABEL = 32
_LABEL = re.compile(r"^\s*[*_]*([^\n:：]{2," + str(MAX_LABEL) + r"}?)[*_]*\s*[:：]")
# Roles a label may give. Not the timeline: its entries carry their own times, and a label line
# ("Key events") does not make a list of facts ("Repaired: 2023-08-10") a timeline.
_LABEL_ROLES = frozenset(
    {
        "summary",
        "impact",
        "trigger",
        "root_cause",
        "contributing",
        "detection",
        "symptoms_text",
        "remediation",
        "lessons",
        "action_items",
    }
)


def label_role(text: str) -> tuple[str, int, bool] | None:
    """The role a leading label names ("other" for a label of no section: "Context:", "Note:"),
    where the label ends, and whether it is the whole block (then it heads the blocks that follow
    it); None when the block does not open with a label."""
    # For speed: a label ends in a colon, and most blocks have none (_LABEL is slow to fail).
    m = _LABEL.match(text) if ":" in text or "：" in text else None
    if not m or any(c.isdigit() for c in m.group(1)):
        return None  # "2023-08-04 09:14: ..." is a timeline entry, not a label
    # Only a heading of the lexicon as it stands: keywords would find 対応 in any sentence.
    role = exact_role(m.group(1))
    return (role if role in _LABEL_ROLES else "other"), m.end(), not text[m.end() :].strip()


def stamp_heading(heading: str) -> bool:
    """Whether a heading is only a date and clock time (a timeline entry's time)."""
    heading = heading.strip().lstrip("#").strip()
    return (
        len(heading) <= MAX_STAMP
        and bool(_STAMP_TIME.search(heading))
        and len(_STAMP_REST.sub("", heading)) <= 2
    )


# A heading that opens with a timeline entry's time and goes on with the event ("2022-06-02 10:00 -
# Problem starts", "21:00 - Team alerted"): an entry of the timeline, whatever its words name.
MAX_ENTRY_HEADING = 160


def entry_heading(heading: str) -> bool:
    """Whether a heading is a timeline entry: only a time (stamp_heading), or a time first and the
    event after it."""
    heading = heading.strip().lstrip("#").strip()
    m = _STAMP_TIME.search(heading, 0, 30)
    return (
        m is not None
        and len(heading) <= MAX_ENTRY_HEADING
        and len(_STAMP_REST.sub("", heading[: m.end()])) <= 2
    )


Open = tuple[str, bool] | None  # an open label's role, and whether its list has begun


def _labelled_role(block_text: str, kind: str, role: str, labelled: Open) -> tuple[str, Open, int]:
    """A block's role where labels stand in for headings: a block that opens with a label has
    the label's role; a label alone ("Resolution:") gives its role to the blocks after it, until
    the next heading, label, or the paragraph after its list. The section's own role stands
    where nothing is labelled. Also how many leading characters are the label and not the
    block's content (all of them for a label alone: the block becomes "skip")."""
    if kind not in ("paragraph", "list_item"):
        return role, labelled, 0
    found = label_role(block_text)
    if found is None:
        if labelled is None or (kind == "paragraph" and labelled[1]):
            return role, None, 0
        return labelled[0], (labelled[0], labelled[1] or kind == "list_item"), 0
    label, end, alone = found
    if alone:
        return "skip", ((label, False) if label != "other" else None), len(block_text)
    if label == "other":  # "Identified: ...": an entry of the open list, if any
        return (labelled[0] if labelled else role), labelled, 0
    return label, None, end


@dataclass(frozen=True)
class Sentence:
    """One sentence of the document, where it sits and what its section is about."""

    start: int
    end: int
    text: str
    role: str  # the section role ("other" when no heading says)
    heading: str | None
    kind: str  # the block kind: paragraph, list_item, table_row, ...
    block: int  # index of the block in Document.blocks (-1: no blocks)


@dataclass
class Context:
    """A Document with its sentences and section roles worked out once for all field drafters."""

    doc: Document
    heading_roles: dict[str, str] = field(default_factory=dict)  # overrides computed by the drafter
    memo: dict[str, Any] = field(default_factory=dict)  # work several drafters share (hits, moments)

    @cached_property
    def lang(self) -> str:
        from extractors.language import document_language  # the project's one language rule

        return document_language(self.doc.language, self.doc.text)

    def role_at(self, offset: int) -> tuple[str, str | None]:
        """The role and heading of the innermost section at `offset` that has a role."""
        found = [s for s in self.doc.sections if s.start <= offset < s.end]
        found.sort(key=lambda s: -s.level)
        heading = found[0].heading if found else None
        for section in found:
            role = self.section_role(section)
            if role != "other":
                return role, heading
        return "other", heading

    def section_role(self, section: Section) -> str:
        if section.heading in self.heading_roles:
            return self.heading_roles[section.heading]
        role: str = section.role
        if section.heading and entry_heading(section.heading):
            role = "timeline"  # "21:00 - Team alerted": an entry, whatever its words name
        elif role == "other":
            role = heading_role_by_keyword(section.heading)
        self.heading_roles[section.heading] = role
        return role

    @cached_property
    def blocks(self) -> list[Block]:
        if self.doc.blocks:
            return list(self.doc.blocks)
        # No block structure: every non-empty line is a paragraph.
        out = []
        for m in re.finditer(r"[^\n]+", self.doc.text):
            a, b = trim(self.doc.text, m.start(), m.end())
            if b > a:
                out.append(Block(kind="paragraph", start=a, end=b))
        return out

    @cached_property
    def sentences(self) -> list[Sentence]:
        text = self.doc.text
        out: list[Sentence] = []
        stamp: Block | None = None  # a heading that is only a time ("### 2024-03-03 22:40")
        labelled: Open = None
        for i, block in enumerate(self.blocks):
            if block.kind == "heading":
                stamp = block if entry_heading(text[block.start : block.end]) else None
                labelled = None
                continue
            if block.kind == "code":
                continue
            role, heading = self.role_at(block.start)
            block_text = text[block.start : block.end]  # sliced once for both tests
            role, labelled, label = _labelled_role(block_text, block.kind, role, labelled)
            if _front_matter(block_text):
                role = "skip"  # a page that prints its own front matter: config, not prose
            if block.kind in ("list_item", "table_row"):
                spans = [trim(text, block.start, block.end)]
                if block.kind == "list_item" and block.end - block.start > 300:
                    spans = _split(text, self.lang, block.start, block.end)
            else:
                spans = _split(text, self.lang, block.start, block.end)
            if label and spans and role != "skip":
                # "Impact: users saw errors": the quote is what follows the label.
                spans[0] = trim(text, max(spans[0][0], block.start + label), spans[0][1])
            if stamp is not None and spans:
                # The entry under a time heading is told at that time: its first sentence starts
                # at the heading, so the timeline reads the time and the event together.
                spans[0] = (stamp.start, spans[0][1])
                stamp = None
            for a, b in spans:
                if b > a and text[a:b].strip():
                    out.append(Sentence(a, b, text[a:b], role, heading, block.kind, i))
        return out

    @cached_property
    def folded(self) -> str | None:
        """The text lower-cased so that a case-sensitive search for lower-case ASCII finds every
        hit of the same search with re.IGNORECASE, offsets unchanged; None where it cannot be.

        re.IGNORECASE also matches i to İ and ı, s to ſ (re._casefix); lower() turns İ into two
        characters, so it is mapped first. A case-sensitive search is about 8x faster."""
        folded = self.doc.text.replace("\u0130", "i").lower().replace("\u0131", "i").replace("\u017f", "s")
        return folded if len(folded) == len(self.doc.text) else None

    @cached_property
    def _bounds(self) -> tuple[list[int], list[int]] | None:
        """The sentences' starts and ends, for touching; None unless in order and disjoint."""
        starts = [s.start for s in self.sentences]
        ends = [s.end for s in self.sentences]
        return None if any(b > a for a, b in zip(starts[1:], ends, strict=False)) else (starts, ends)

    @cached_property
    def _lowered(self) -> str | None:
        """text.lower() where its slices are the sentences' own lower(): None when lower() is not
        one character for one (İ), or depends on the neighbours (Σ turns ς at a word's end)."""
        text = self.doc.text
        lower = text.lower()
        return lower if len(lower) == len(text) and "\u03a3" not in text else None

    def cue_counts(self, lexicon: Lexicon) -> dict[int, int]:
        """By sentence start, `lexicon.count(s.text.lower())` of every sentence that has a match:
        one pass over the page rather than one a sentence (these were 400 calls a page)."""
        memo = self.memo.setdefault("cue_counts", {})
        if lexicon in memo:
            return memo[lexicon]
        sents = self.sentences
        if self._lowered is not None and self._bounds is not None:
            # The field cue lists are all asked for on most pages: count them in one pass.
            joint = _field_cues() if lexicon in _field_cues() else (lexicon,)
            found = counts_within_each(joint, self._lowered, *self._bounds)
            for each, counts in zip(joint, found, strict=True):
                memo[each] = {sents[i].start: n for i, n in counts.items()}
        else:
            memo[lexicon] = {s.start: n for s in sents if (n := lexicon.count(s.text.lower()))}
        return memo[lexicon]

    def touching(self, pattern: re.Pattern[str], *, folded: bool = False) -> set[int] | None:
        """The indices of the sentences that a match of `pattern` in the whole text (in
        Context.folded with `folded`) overlaps; None (check every sentence) when the sentences
        are not in order, disjoint, or there is no folded text.

        Every sentence with a match of its own is among them, for a pattern without look-arounds,
        anchors or `\\b` (a match in a sentence is then a match in the text): the scan of the
        text either finds a match that starts inside the sentence, or has consumed the sentence's
        match's start with a match that overlaps it. So one scan of the text spares the
        sentences that cannot match their own search."""
        text = self.folded if folded else self.doc.text
        if self._bounds is None or text is None:
            return None
        starts, ends = self._bounds
        out: set[int] = set()
        for m in pattern.finditer(text):
            i = bisect_right(ends, m.start())  # the first sentence ending after the match starts
            while i < len(starts) and starts[i] < max(m.end(), m.start() + 1):
                out.add(i)
                i += 1
        return out

    def by_role(self, role: str) -> list[Sentence]:
        return [s for s in self.sentences if s.role == role]


def heading_role_by_keyword(heading: str) -> str:
    """A role for a heading the extractor left 'other' (a Document built without roles): the one
    heading classifier's (schema/headings.py), whose last resort is keywords in the heading."""
    return heading_role(heading)
