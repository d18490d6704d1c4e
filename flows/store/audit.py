"""records/audit.jsonl: one JSON line per review decision, appended and fsynced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flows.store.atomic import append_line

_UNSET = object()


def field_diff(before: Any, after: Any, prefix: str = "") -> list[dict[str, Any]]:
    """Field-level changes between two JSON values, dotted paths for nested objects."""
    if isinstance(before, dict) and isinstance(after, dict):
        changes: list[dict[str, Any]] = []
        for key in list(before) + [k for k in after if k not in before]:
            path = f"{prefix}.{key}" if prefix else str(key)
            changes += field_diff(before.get(key, _UNSET), after.get(key, _UNSET), path)
        return changes
    if before == after:
        return []
    return [
        {
            "field": prefix,
            "from": None if before is _UNSET else before,
            "to": None if after is _UNSET else after,
        }
    ]


class AuditLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, entry: dict[str, Any]) -> None:
        append_line(self.path, json.dumps(entry, ensure_ascii=False, sort_keys=False))

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]
