"""A person-readable listing of a draft: each field, its value, confidence and evidence quotes."""

from __future__ import annotations

import json
import textwrap

from schema.draft import Draft

QUOTE_WIDTH = 100
FIELD_ORDER = (
    "org",
    "org_slug",
    "date",
    "date_kind",
    "title",
    "language",
    "summary",
    "trigger",
    "detection",
    "symptoms_text",
    "lessons",
    "root_cause",
    "contributing",
    "symptoms",
    "components",
    "domain",
    "severity",
    "impact",
    "timeline",
    "remediation",
    "action_items",
    "sources",
)


def _value(value: object) -> str:
    if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
        return "\n".join(f"[{k}] {v}" for k, v in value.items())
    if isinstance(value, list) and value and all(isinstance(v, dict) and "text" in v for v in value):
        return "\n".join("- " + " / ".join(f"[{k}] {t}" for k, t in v["text"].items()) for v in value)
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) if value else "(none)"
    if value is None or value == {} or value == "unknown":
        return "(not found)" if value != "unknown" else "unknown"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def explain_draft(draft: Draft) -> str:
    """Every field with its value, how sure the drafter is and the quotes it rests on."""
    record = draft.record.model_dump()
    record["language"] = draft.source.language
    pm = draft.postmortem
    lines = [
        f"draft {draft.draft_id}  status {draft.status}  version {draft.version}",
        f"source {draft.source.url}"
        + (f"  (canonical {draft.source.canonical_url})" if draft.source.canonical_url else ""),
        f"postmortem: {'yes' if pm.verdict else 'NO'} (score {pm.score:.2f})"
        + (f" - {'; '.join(pm.reasons)}" if pm.reasons else ""),
        "",
    ]
    keys = list(FIELD_ORDER) + sorted(
        k for k in set(draft.evidence) | set(draft.confidence) if k not in FIELD_ORDER
    )
    for key in keys:
        if "." in key and key not in draft.evidence:
            continue
        value = record.get(key) if key in record else None
        if "." in key:
            head, _, tail = key.partition(".")
            parent = record.get(head)
            value = parent.get(tail) if isinstance(parent, dict) else tail
        conf = draft.confidence.get(key)
        how = f"  [{conf.method} {conf.value:.2f}]" if conf else ""
        lines.append(f"{key}{how}")
        lines.extend("    " + line for line in _value(value).splitlines() or [""])
        for ev in draft.evidence.get(key, []):
            where = f"{ev.section} " if ev.section else ""
            quote = textwrap.shorten(ev.quote.replace("\n", " "), QUOTE_WIDTH * 3, placeholder=" …")
            wrapped = textwrap.wrap(f'"{quote}"', QUOTE_WIDTH) or ['""']
            lines.append(f"    < {where}@{ev.start}-{ev.end}: {wrapped[0]}")
            lines.extend("      " + w for w in wrapped[1:])
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
