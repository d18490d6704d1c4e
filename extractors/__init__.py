"""Pure extraction: page bytes to Document (and, in extractors/draft/, Document to Draft)."""

from __future__ import annotations

from extractors.api import DraftResult, draft_page
from extractors.extract import extract_document, sniff_format
from extractors.options import ExtractOptions

__all__ = ["DraftResult", "ExtractOptions", "draft_page", "extract_document", "sniff_format"]
