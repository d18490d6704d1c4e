"""refine_with_model: the rule-based draft refined by a model, every claim checked (the one hook)."""

from __future__ import annotations

import concurrent.futures as cf
import threading
import time
from dataclasses import dataclass, field

from extractors.model import (
    PROMPT_VERSION,
    Answer,
    AnswerError,
    answer_schema,
    chunks,
    merge_answers,
    messages,
    parse_answer,
    with_notes,
)
from flows.model.cache import AnswerCache, answer_key
from flows.model.client import ChatClient, ModelUnavailable
from flows.model.pause import PAUSES
from flows.settings import Settings
from schema.document import Document
from schema.draft import Draft, ModelNotes

# Characters per token for the budget's estimate before sending (actual usage is counted after):
# about 4 for English, about 1 for Korean and Japanese; 2 keeps a mixed page under the budget.
CHARS_PER_TOKEN = 2.0
# The instructions, vocabularies and rule-based draft: 8,180 and 9,050 characters for the Korean
# and an English fixture, mostly ASCII (about 2,300 tokens at 4 characters a token), plus room.
PROMPT_OVERHEAD_TOKENS = 2500


@dataclass
class ModelReport:
    """What the model cost and did for one draft: for the run report and its artifact."""

    model: str
    requests: int = 0
    cached: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    chunks: int = 0
    fields: int = 0
    refused: int = 0
    notes: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def count(self, *, cached: int = 0, retries: int = 0, prompt: int = 0, completion: int = 0) -> None:
        """Add one request's figures (chunks are asked from several threads)."""
        with self._lock:
            self.cached += cached
            self.requests += 0 if cached else 1
            self.retries += retries
            self.prompt_tokens += prompt
            self.completion_tokens += completion

    def note(self, text: str) -> None:
        with self._lock:
            self.notes.append(text)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def line(self) -> str:
        """One line: `model NAME: 4 fields, 1 refused, 5210 tokens, 12.3 s` (+ cached, notes)."""
        parts = [
            f"{self.fields} fields",
            f"{self.refused} refused",
            f"{self.tokens} tokens",
            f"{self.seconds:.1f} s",
        ]
        if self.cached:
            parts.append(f"{self.cached}/{self.chunks} cached")
        text = f"model {self.model}: " + ", ".join(parts)
        return text + ("; " + "; ".join(self.notes) if self.notes else "")


def _ask(
    client: ChatClient,
    cache: AnswerCache,
    doc: Document,
    draft: Draft,
    span: tuple[int, int],
    part: tuple[int, int],
    languages: tuple[str, ...],
    report: ModelReport,
) -> Answer:
    schema = answer_schema(languages)
    plain = messages(doc, span, draft, languages, part=part)
    key = answer_key(plain, client.model, PROMPT_VERSION)
    hit = cache.get(key)
    if hit is not None:
        report.count(cached=1)
        return parse_answer(hit["content"])
    url = client.settings.llm_base_url
    if paused := PAUSES.reason(url):
        raise ModelUnavailable(paused)
    try:
        reply = client.complete(
            plain,
            schema,
            messages_with_schema=messages(doc, span, draft, languages, schema=schema, part=part),
        )
    except ModelUnavailable as exc:
        PAUSES.start(url, str(exc), client.settings.llm_pause)
        raise
    report.count(retries=reply.retries, prompt=reply.prompt_tokens, completion=reply.completion_tokens)
    if reply.finish_reason == "length":
        raise AnswerError("the model's answer was cut off at the token limit")
    answer = parse_answer(reply.content)
    # Only answers we could read are kept: a broken one is asked again on the next run.
    cache.put(key, {"model": client.model, "prompt_version": PROMPT_VERSION, "content": reply.content})
    return answer


def refine_with_model(
    draft: Draft,
    document: Document,
    settings: Settings,
    *,
    client: ChatClient | None = None,
) -> tuple[Draft, ModelReport]:
    """The draft with the model's checked fields merged in, and what it cost. Without an endpoint
    (INCIDENTS_LLM_BASE_URL empty) the draft comes back as it is, the same object. Never raises for
    the endpoint's or the answer's faults: the rule-based draft then stands, with a note."""
    report = ModelReport(model=settings.llm_model or "(default)")
    if not settings.llm_base_url:
        return draft, report
    started = time.monotonic()
    # The source's own language too: the model rewrites it (every item needs it) and translates.
    source_lang = draft.source.language or document.language
    languages = settings.llm_language_list
    if source_lang and source_lang not in languages:
        languages = (source_lang, *languages)
    spans = chunks(document, max(1000, settings.llm_chunk_chars))
    report.chunks = len(spans)
    # The budget, estimated before sending: chunks beyond it are not sent (page order kept).
    allowed: list[tuple[int, int]] = []
    spent = 0
    for a, b in spans:
        cost = PROMPT_OVERHEAD_TOKENS + int((b - a) / CHARS_PER_TOKEN) + settings.llm_max_tokens
        if allowed and spent + cost > settings.llm_token_budget:
            report.notes.append(
                f"token budget {settings.llm_token_budget}: "
                f"{len(spans) - len(allowed)} of {len(spans)} parts not sent"
            )
            break
        spent += cost
        allowed.append((a, b))
    cache = AnswerCache(settings.data_dir / "cache" / "model")
    own = client is None
    chat = client or ChatClient(settings)
    answers: list[Answer | None] = [None] * len(allowed)
    try:
        if len(allowed) == 1:
            answers[0] = _one(chat, cache, document, draft, allowed[0], (1, 1), languages, report)
        else:
            with cf.ThreadPoolExecutor(max_workers=max(1, settings.llm_concurrency)) as pool:
                futures = [
                    pool.submit(
                        _one, chat, cache, document, draft, span, (i + 1, len(spans)), languages, report
                    )
                    for i, span in enumerate(allowed)
                ]
                answers = [f.result() for f in futures]
    finally:
        if own:
            chat.close()
    got = [a for a in answers if a is not None]
    report.notes.sort()  # chunks end in any order; the report reads the same each run
    report.seconds = round(time.monotonic() - started, 3)
    model = settings.llm_model or "(default)"
    note = "; ".join(report.notes) or None
    if not got:
        notes = ModelNotes(
            model=model,
            prompt_version=PROMPT_VERSION,
            note=(note or "no usable answer") + "; the rule-based draft stands",
        )
        return with_notes(draft, notes), report
    merged = merge_answers(draft, document, got, model=model, languages=languages, note=note)
    assert merged.model is not None
    report.fields = len(merged.model.fields)
    report.refused = len(merged.model.refusals)
    return merged, report


def _one(
    client: ChatClient,
    cache: AnswerCache,
    doc: Document,
    draft: Draft,
    span: tuple[int, int],
    part: tuple[int, int],
    languages: tuple[str, ...],
    report: ModelReport,
) -> Answer | None:
    """One chunk's answer, or None with a note in the report (the other chunks go on)."""
    where = f"part {part[0]} of {part[1]}: " if part[1] > 1 else ""
    try:
        return _ask(client, cache, doc, draft, span, part, languages, report)
    except (ModelUnavailable, AnswerError) as exc:
        report.note(f"{where}{exc}")
        return None
