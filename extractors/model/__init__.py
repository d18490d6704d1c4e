"""Model-assisted drafting, the pure part: the prompt, the answer's schema, and the checks and
merge that keep every model claim resting on a quote from the source (the HTTP call is flows/model/)."""

from __future__ import annotations

from extractors.model.answer import Answer, AnswerError, answer_schema, parse_answer
from extractors.model.merge import merge_answers, with_notes
from extractors.model.prompt import PROMPT_VERSION, chunks, messages
from extractors.model.quotes import Folded, locate

__all__ = [
    "PROMPT_VERSION",
    "Answer",
    "AnswerError",
    "Folded",
    "answer_schema",
    "chunks",
    "locate",
    "merge_answers",
    "messages",
    "parse_answer",
    "with_notes",
]
