"""JSON Schemas generated from the models (committed as schema/*.schema.json, checked for staleness)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from schema.draft import Draft
from schema.record import Record

SchemaName = Literal["record", "draft"]
SCHEMA_DIR = Path(__file__).parent
_MODELS: dict[str, type[BaseModel]] = {"record": Record, "draft": Draft}
_IDS = {
    "record": "https://github.com/incident-ingest/incident-ingest/schema/record.schema.json",
    "draft": "https://github.com/incident-ingest/incident-ingest/schema/draft.schema.json",
}


def json_schema(name: SchemaName) -> dict[str, Any]:
    # Validation mode: what we accept. (Serialization mode hides Record behind its key-order hook.)
    schema = _MODELS[name].model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": _IDS[name], **schema}


def schema_text(name: SchemaName) -> str:
    return json.dumps(json_schema(name), ensure_ascii=False, indent=2) + "\n"


def schema_path(name: SchemaName) -> Path:
    return SCHEMA_DIR / f"{name}.schema.json"
