"""The one options object every extractor takes (frozen; built once by the caller)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExtractOptions:
    """Extraction settings. Defaults are the ones measured best by bench/extract.py --sweep.

    trafilatura settings, scrapinghub corpus (181 pages, 2 shared cores), F1 of our whole path:
    favor_recall 0.967 (chosen), balanced 0.965, favor_precision 0.969 but it drops sections
    of the postmortem pages (headings kept 96.9% against 98.6%); fast=False 0.963 and about
    1.3x slower (fast skips trafilatura's own readability/jusText comparison, our fallback
    covers the pages it rescued); include_comments is always False: with it, a blog template's
    "Comments are closed." and reader comments land in the text.
    """

    favor_precision: bool = False
    favor_recall: bool = True
    fast: bool = True
    include_tables: bool = True
    # include_links changes what trafilatura keeps, not only the markup: on scrapinghub, per-page
    # F1 over bare trafilatura (fast, no comments) is +0.0033 with it and +0.0009 without (one
    # deals page: 0.91 with, 0.53 without). Without it links are read from the page instead.
    include_links: bool = True
    # trafilatura's MIN_EXTRACTED_SIZE: below it, its "baseline" replaces the main text with all
    # of the <article>'s text in one paragraph (headings and lists lost; extractors/html.py
    # rebuilds the structure). Not 0: it also gates trafilatura's own recovery passes, and at 0
    # scrapinghub lost text on two pages (F1 1.0 -> 0.30 and 0.64).
    min_extracted_size: int = 250
    # readability-lxml runs when the main text is shorter than min_text_chars, or than
    # fallback_ratio of the page's visible text, and wins only when it is readability_gain times
    # longer. Tuned on scrapinghub: with "run at < 10%, longer wins" readability ran on 24 pages
    # and won 13, 12 of them worse (F1 0.73-0.99 against trafilatura's 0.96-1.0: it keeps bylines,
    # captions, teasers). The one page it rescues had 276 characters extracted (1.8% of its
    # visible text, readability 6.5x more); the shortest page trafilatura got right had 465, and
    # pages at 1.1-2.6% of their visible text were right (F1 0.81-1.0), so the ratio only catches
    # near-empty results. Harmful readability wins were at most 1.7x longer than trafilatura's.
    fallback_ratio: float = 0.01
    min_text_chars: int = 400
    readability_gain: float = 2.0
    # bounds on the work one page may cause, checked before the expensive steps: bytes before
    # decoding (scrapinghub's largest page is 1.5 MB), elements after parsing (its largest tree
    # has 1,596). trafilatura's time grows faster than the tree: 0.7 s of CPU for a page of
    # 10,000 paragraphs, 1.6 s for 20,000, 4.3 s for 40,000; 30,000 bounds a page at about 3 s.
    max_bytes: int = 8 * 1024 * 1024
    max_elements: int = 30_000
