"""The model's part of a draft for a person: which fields it wrote or translated, what it refused."""

from __future__ import annotations

from schema.draft import Draft


def explain_model(draft: Draft) -> str:
    """Lines to print after explain_draft's; empty for a draft no model touched."""
    notes = draft.model
    if notes is None:
        return ""
    lines = [f"model {notes.model}  prompt {notes.prompt_version}"]
    for name, how in notes.fields.items():
        translated = (
            f"  machine-translated: {', '.join(how.machine_translated)}" if how.machine_translated else ""
        )
        lines.append(f"    {name}: {how.method}{translated}")
    lines += [f"    refused {r.field}: {r.reason}" for r in notes.refusals]
    if notes.note:
        lines.append(f"    note: {notes.note}")
    return "\n".join(lines) + "\n"
