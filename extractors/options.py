"""The one options object every extractor takes (frozen; built once by the caller)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExtractOptions:
    """Extraction settings. Defaults are the ones measured best by bench/extract.py.

    trafilatura settings (scrapinghub corpus, 181 pages, 2 cores): include_comments=False takes
    the comment section out of the text (+0.007 F1 over defaults); fast=True skips trafilatura's
    own readability/jusText comparison (about 1.5x faster, same F1), our fallback covers the cases
    it would have rescued; favor_precision / favor_recall: see bench/extract.py's settings sweep.
    """

    favor_precision: bool = False
    favor_recall: bool = False
    fast: bool = True
    include_tables: bool = True
    include_links: bool = True
    # fallback to readability-lxml when the main text is shorter than this share of the page's
    # visible text, or below min_text_chars; see extractors/html.py for how they were tuned
    fallback_ratio: float = 0.1
    min_text_chars: int = 100
    # bounds on the work one page may cause (see extractors/limits.py)
    max_bytes: int = 8 * 1024 * 1024
    max_depth: int = 400
    max_elements: int = 200_000
    max_line_chars: int = 2_000_000
