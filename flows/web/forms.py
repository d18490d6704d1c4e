"""The draft form: which control each record field gets, and a posted form back to record edits."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Literal

from schema.types import DURATION_PATTERN, LANG_PATTERN
from schema.vocab import LABEL_LANGUAGES, Kind, label, vocabulary

Control = Literal[
    "localized", "vocab-one", "vocab-many", "items", "impact", "timeline", "org", "date", "choice"
]


@dataclass(frozen=True)
class FieldSpec:
    name: str
    label: str
    control: Control
    vocab: Kind | None = None
    choices: tuple[str, ...] = ()
    multiline: bool = True


# Grouped as the incident library shows a record (REVIEW-UX.md).
GROUPS: list[tuple[str, list[FieldSpec]]] = [
    (
        "What happened",
        [
            FieldSpec("title", "Title", "localized", multiline=False),
            FieldSpec("summary", "Summary", "localized"),
            FieldSpec("symptoms", "Symptoms", "vocab-many", vocab="symptoms"),
            FieldSpec("symptoms_text", "Symptoms as told", "localized"),
            FieldSpec("impact", "Impact", "impact"),
        ],
    ),
    (
        "Why",
        [
            FieldSpec("trigger", "Trigger", "localized"),
            FieldSpec("root_cause", "Root cause", "vocab-one", vocab="root_causes"),
            FieldSpec("contributing", "Contributing factors", "vocab-many", vocab="contributing"),
        ],
    ),
    (
        "How it was found and fixed",
        [
            FieldSpec("detection", "Detection", "localized"),
            FieldSpec("timeline", "Timeline", "timeline"),
            FieldSpec("remediation", "Remediation", "items"),
        ],
    ),
    (
        "What was learned",
        [
            FieldSpec("lessons", "Lessons", "localized"),
            FieldSpec("action_items", "Action items", "items"),
        ],
    ),
    (
        "Classification",
        [
            FieldSpec("org", "Organisation", "org"),
            FieldSpec("date", "Date", "date"),
            FieldSpec("date_kind", "Date is when it was", "choice", choices=("published", "occurred")),
            FieldSpec("components", "Components", "vocab-many", vocab="components"),
            FieldSpec("domain", "Domain", "vocab-many", vocab="domains"),
            FieldSpec("severity", "Severity", "vocab-one", vocab="severity"),
        ],
    ),
]
FIELDS = {spec.name: spec for _, specs in GROUPS for spec in specs}
# Set below the groups: related records (suggested at approval), the sources' kind and license.
EXTRA_FIELDS = ("related", "recurrence_of", "org_slug", "sources")

_LANG = re.compile(LANG_PATTERN)
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(d|h|m|s)", re.IGNORECASE)
# What show_duration turns back into "1d 4h 5m": days, hours, minutes, seconds. Any other ISO 8601
# duration (P1W, P1M) is accepted as the schema accepts it (DURATION_PATTERN) and shown as stored.
_DHMS_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")


def parse_duration(text: str) -> str | None:
    """'2h 27m' (or '1d 3h', '45m', '90s', or ISO 8601 as stored) -> 'PT2H27M'; '' -> None."""
    text = text.strip()
    if not text:
        return None
    if text.upper().startswith("P"):
        if not re.fullmatch(DURATION_PATTERN, text.upper()):
            raise ValueError(f"{text!r} is not a duration (write e.g. 2h 27m)")
        return text.upper()
    rest = _DURATION_PART.sub("", text).strip(" ,")
    parts = _DURATION_PART.findall(text)
    if rest or not parts:
        raise ValueError(f"{text!r} is not a duration (write e.g. 2h 27m, 1d 4h, 45m)")
    total: dict[str, float] = {"d": 0, "h": 0, "m": 0, "s": 0}
    for number, unit in parts:
        total[unit.lower()] += float(number)
    if any(v != int(v) for k, v in total.items() if k != "s"):
        raise ValueError(f"{text!r}: write whole days, hours and minutes (1h 30m, not 1.5h)")
    days, hours, minutes, seconds = (total[k] for k in "dhms")
    out = f"P{int(days)}D" if days else "P"
    clock = "".join(
        f"{int(v) if float(v).is_integer() else v}{u}"
        for v, u in ((hours, "H"), (minutes, "M"), (seconds, "S"))
        if v
    )
    return out + (f"T{clock}" if clock else "") if out != "P" or clock else "PT0M"


def show_duration(value: str | None) -> str:
    """'PT2H27M' -> '2h 27m' (what the reviewer types); anything else as it is."""
    if not value:
        return ""
    match = _DHMS_DURATION.fullmatch(value)
    if not match:
        return value
    parts = [f"{n}{u}" for n, u in zip(match.groups(), ("d", "h", "m", "s"), strict=True) if n]
    return " ".join(parts) or value


def local_language(lang: str | None) -> str | None:
    """The second label a page shows beside English: the draft's language when the vocabulary
    labels it (ko, ja), else none."""
    return lang if lang in LABEL_LANGUAGES and lang != "en" else None


def vocab_options(kind: Kind, lang: str | None = None) -> list[dict[str, Any]]:
    """Terms with their English label, the label in `lang` (ko, ja), every label and alias to
    match on, and the definition, for the type-ahead picker."""
    local = local_language(lang)
    out = []
    for key, term in vocabulary(kind).terms.items():
        names = [*term.labels.values(), *(a for forms in term.aliases.values() for a in forms)]
        out.append(
            {
                "term": key,
                "en": label(kind, key, "en"),
                "local": label(kind, key, local) if local else "",
                "aliases": names,
                "definition": term.definition,
            }
        )
    return out


def term_label(kind: Kind, key: str, lang: str | None = None) -> str:
    """A term as the page shows it: its English label, and its label in the draft's language."""
    en = label(kind, key, "en")
    local = local_language(lang)
    return f"{en} · {label(kind, key, local)}" if local and key in vocabulary(kind).terms else en


def languages_of(record: dict[str, Any], primary: str | None) -> list[str]:
    """The languages a draft's localized fields use, its own language first."""
    langs: list[str] = [primary] if primary else []
    for spec in FIELDS.values():
        value = record.get(spec.name)
        if spec.control == "localized" and isinstance(value, dict):
            langs += [k for k in value if k not in langs]
        elif spec.control == "items" and isinstance(value, list):
            for item in value:
                langs += [k for k in item.get("text", {}) if k not in langs]
    return langs or ["en"]


def from_form(
    form: Any, machine: dict[str, Any], langs: list[str]
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The record as the form has it (unvalidated), and problems the form itself shows (durations)."""
    values = copy.deepcopy(machine)
    problems: list[tuple[str, str]] = []
    # The draft's languages, and any the reviewer added (a translation): every `field.xx` posted.
    extra = {
        key.split(".", 1)[1]
        for key in form
        if "." in key
        and key.split(".", 1)[0] in FIELDS
        and FIELDS[key.split(".", 1)[0]].control in ("localized", "items")
        and _LANG.fullmatch(key.split(".", 1)[1])
    }
    posted_langs = [
        lang for lang in [*langs, *sorted(extra - set(langs))] if any(f"{n}.{lang}" in form for n in FIELDS)
    ]
    for name, spec in FIELDS.items():
        if spec.control in ("vocab-one", "org", "date", "choice") and name not in form:
            continue  # a single-value control not on the form leaves the draft's value
        values[name] = _field_value(form, name, spec.control, machine, posted_langs, problems)
    if values.get("org") != machine.get("org"):
        from extractors.draft.identity import slugify

        values["org_slug"] = slugify(values["org"] or "") or None
    values["related"], values["recurrence_of"] = _related(form)
    values["sources"] = _sources(form, machine.get("sources") or [])
    if values["date_kind"] is None:
        values["date_kind"] = machine.get("date_kind", "published")
    return values, problems


def _field_value(
    form: Any,
    name: str,
    control: str,
    machine: dict[str, Any],
    langs: list[str],
    problems: list[tuple[str, str]],
) -> Any:
    """One field's value as its control posts it; a duration that does not parse joins `problems`."""
    if control == "localized":
        before = machine.get(name) or {}
        text = {
            lang: _same_text(str(form.get(f"{name}.{lang}", "")), before.get(lang))
            for lang in langs
            if f"{name}.{lang}" in form
        }
        kept = {k: v for k, v in before.items() if k not in text}
        return kept | {k: v for k, v in text.items() if v}
    if control == "vocab-one":
        return str(form.get(name)).strip() or "unknown"
    if control == "vocab-many":
        return [str(v).strip() for v in form.getlist(name) if str(v).strip()]
    if control == "items":
        return _items(form, name, machine.get(name) or [], langs)
    if control == "impact":
        return {
            key: str(form.get(f"impact.{key}", "")).strip() or "unknown"
            for key in ("scope", "users", "region")
        }
    if control == "timeline":
        timeline: dict[str, Any] = {}
        for key in ("detected_after", "resolved_after"):
            raw = str(form.get(f"timeline.{key}", ""))
            try:
                timeline[key] = parse_duration(raw)
            except ValueError as exc:
                problems.append((f"timeline.{key}", str(exc)))
                timeline[key] = raw  # shown again as typed, to fix; never saved (problems)
        return timeline
    return str(form.get(name)).strip() or None  # org, date, choice


def _related(form: Any) -> tuple[list[str], str | None]:
    """Related records: the suggestions ticked, and any typed ("IL-0042, IL-0107"), in that order;
    and the recurrence, ticked or typed."""
    related = [str(v).strip() for v in form.getlist("related") if str(v).strip()]
    related += [r for r in re.split(r"[\s,]+", str(form.get("related_more", ""))) if r and r not in related]
    recurrence = (
        str(form.get("recurrence_of", "")).strip() or str(form.get("recurrence_of_more", "")).strip() or None
    )
    return related, recurrence


def _sources(form: Any, machine_sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each source's kind and license (its URL and archived capture are facts, not edits)."""
    sources = copy.deepcopy(machine_sources)
    for i, source in enumerate(sources):
        if f"sources.{i}.kind" in form:
            source["kind"] = str(form.get(f"sources.{i}.kind")).strip() or source.get("kind")
        if f"sources.{i}.license" in form:
            source["license"] = str(form.get(f"sources.{i}.license")).strip() or "unknown"
    return sources


def _same_text(posted: str, before: str | None) -> str:
    """What the reviewer typed, or the draft's own text when only the browser's line ends (CRLF)
    or surrounding blanks differ: an untouched field is no edit."""
    text = posted.replace("\r\n", "\n").replace("\r", "\n").strip()
    if before is not None and before.strip() == text:
        return before
    return text


def _items(form: Any, name: str, original: list[dict[str, Any]], langs: list[str]) -> list[dict[str, Any]]:
    """One item per line of each language's text area; other languages of an item are kept."""
    per_lang = {
        lang: [line.strip() for line in str(form.get(f"{name}.{lang}", "")).splitlines() if line.strip()]
        for lang in langs
        if f"{name}.{lang}" in form
    }
    if not per_lang:
        return original
    count = max(len(lines) for lines in per_lang.values())
    items = []
    for i in range(count):
        text = dict(original[i]["text"]) if i < len(original) else {}
        for lang, lines in per_lang.items():
            if i < len(lines):
                text[lang] = lines[i]
            else:
                text.pop(lang, None)
        if text:
            items.append({"text": text})
    return items


def edits_between(machine: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """Only the fields the reviewer changed: what `Reviews.approve` merges and the audit log diffs."""
    names = [*FIELDS, *EXTRA_FIELDS]
    return {name: values[name] for name in names if name in values and values[name] != machine.get(name)}


def items_text(items: list[dict[str, Any]], lang: str) -> str:
    return "\n".join(item.get("text", {}).get(lang, "") for item in items if item.get("text", {}).get(lang))
