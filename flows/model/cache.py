"""Model answers cached on disk by (content digest, model, prompt version): a re-run costs nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from flows.store.atomic import dumps_json, write_text


def answer_key(messages: list[dict[str, str]], model: str, prompt_version: str) -> str:
    """The digest of what is asked (the page's text, the rule-based draft, the languages and
    vocabularies are all in the messages), of the model and of the prompt's version."""
    content = hashlib.sha256(json.dumps(messages, ensure_ascii=False, sort_keys=True).encode()).hexdigest()
    return hashlib.sha256(f"{content}\n{model}\n{prompt_version}".encode()).hexdigest()


class AnswerCache:
    """One JSON file per answer under `folder` (data dir's cache/model/), written atomically."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # absent, or damaged: asked again
        return data if isinstance(data, dict) and isinstance(data.get("content"), str) else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, dumps_json(entry))
