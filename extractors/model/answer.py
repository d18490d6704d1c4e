"""The model's answer: its JSON Schema (sent as response_format) and its parsing and validation."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from schema.errors import IngestError
from schema.vocab import Kind

# Localized text fields the model may write (and translate), in the record's order.
TEXT_FIELDS = ("title", "summary", "trigger", "detection", "symptoms_text", "lessons")
ITEM_FIELDS = ("remediation", "action_items")
# Vocabulary fields and their vocabularies; the single-valued ones replace, the lists add.
TERM_FIELDS: dict[str, Kind] = {
    "root_cause": "root_causes",
    "severity": "severity",
    "components": "components",
    "symptoms": "symptoms",
    "contributing": "contributing",
    "domain": "domains",
}
SINGLE_TERMS = ("root_cause", "severity")
DURATION_FIELDS = ("detected_after", "resolved_after")


class AnswerError(IngestError):
    """A model answer that is not the JSON we asked for (broken, truncated, wrong shape)."""


class _Lenient(BaseModel):
    # json_object mode promises JSON, not our shape: unknown keys are ignored, missing lists empty.
    model_config = ConfigDict(extra="ignore")


class TextAnswer(_Lenient):
    field: str
    text: dict[str, str]
    quotes: list[str] = Field(default_factory=list)


class TermAnswer(_Lenient):
    field: str
    term: str
    quotes: list[str] = Field(default_factory=list)


class DurationAnswer(_Lenient):
    field: str
    value: str
    quotes: list[str] = Field(default_factory=list)


class Answer(_Lenient):
    texts: list[TextAnswer] = Field(default_factory=list)
    items: list[TextAnswer] = Field(default_factory=list)
    terms: list[TermAnswer] = Field(default_factory=list)
    durations: list[DurationAnswer] = Field(default_factory=list)


def answer_schema(languages: tuple[str, ...]) -> dict[str, Any]:
    """The JSON Schema of an Answer for these languages, in the strict subset OpenAI-compatible
    servers accept (every property required, no additional properties); llama.cpp, vLLM and
    Ollama turn it into a grammar."""

    def obj(props: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}

    quotes = {"type": "array", "items": {"type": "string"}}
    text = obj({lang: {"type": "string"} for lang in languages})

    def entry(fields: tuple[str, ...], value: dict[str, Any], key: str) -> dict[str, Any]:
        return {
            "type": "array",
            "items": obj({"field": {"enum": list(fields)}, key: value, "quotes": quotes}),
        }

    return obj(
        {
            "texts": entry(TEXT_FIELDS, text, "text"),
            "items": entry(ITEM_FIELDS, text, "text"),
            "terms": entry(tuple(TERM_FIELDS), {"type": "string"}, "term"),
            "durations": entry(DURATION_FIELDS, {"type": "string"}, "value"),
        }
    )


def parse_answer(content: str | None) -> Answer:
    """The Answer in a reply's content; AnswerError when it is not one (the caller drops it whole)."""
    if not content or not content.strip():
        raise AnswerError("the model's answer is empty")
    body = content.strip()
    if body.startswith("```"):
        # Some servers in json_object mode still fence the JSON: ```json ... ```
        body = body.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise AnswerError(f"the model's answer is not JSON ({exc.msg} at character {exc.pos})") from exc
    if not isinstance(data, dict):
        raise AnswerError("the model's answer is not a JSON object")
    try:
        return Answer.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise AnswerError(f"the model's answer has the wrong shape at {where}: {first['msg']}") from exc
