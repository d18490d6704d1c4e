"""Related incidents: shared cause and components rank, the organisation makes a recurrence."""

from __future__ import annotations

from flows.related import rank_related
from schema.record import Record, RecordBody


def _record(record_id: str, **fields: object) -> Record:
    base: dict[str, object] = {"id": record_id, "org": "Acme", "org_slug": "acme", "title": {"en": record_id}}
    return Record.model_validate(base | fields)


def test_shared_cause_and_components_rank_with_reasons() -> None:
    subject = RecordBody.model_validate(
        {"org": "Acme", "org_slug": "acme", "root_cause": "expired-certificate", "components": ["dns", "cdn"]}
    )
    records = [
        _record(
            "IL-0001", root_cause="expired-certificate", components=["cdn"], org="Other", org_slug="other"
        ),
        _record("IL-0002", root_cause="config-change", components=["dns", "cdn"], date="2024-01-01"),
        _record("IL-0003", root_cause="config-change", components=["database"]),
        _record("IL-0004", root_cause="expired-certificate", components=[], date="2023-01-01"),
    ]
    ranked = rank_related(subject, records)
    assert [r.record_id for r in ranked] == ["IL-0002", "IL-0001", "IL-0004"]
    assert ranked[0].why == ("shared components: dns, cdn", "same organisation: Acme")
    assert ranked[1].why == ("same root cause: expired-certificate", "shared components: cdn")
    assert ranked[0].may_recur and not ranked[1].may_recur and ranked[2].may_recur


def test_unknown_cause_relates_nothing_and_own_id_is_excluded() -> None:
    subject = RecordBody.model_validate({"root_cause": "unknown"})
    records = [_record("IL-0001", root_cause="unknown"), _record("IL-0002", root_cause="unknown")]
    assert rank_related(subject, records) == []
    me = _record("IL-0003", root_cause="expired-certificate")
    assert rank_related(me, [me], exclude="IL-0003") == []


def test_ties_break_newest_first() -> None:
    subject = RecordBody.model_validate({"root_cause": "expired-certificate"})
    records = [
        _record("IL-0001", root_cause="expired-certificate", date="2021-05-01"),
        _record("IL-0002", root_cause="expired-certificate", date="2024-02-01"),
        _record("IL-0003", root_cause="expired-certificate"),
    ]
    assert [r.record_id for r in rank_related(subject, records)] == ["IL-0002", "IL-0001", "IL-0003"]


def test_generic_terms_alone_never_relate_two_incidents() -> None:
    # flows/data/related.json: monitoring and config-change are too common to tie incidents alone.
    subject = RecordBody.model_validate({"root_cause": "config-change", "components": ["monitoring", "dns"]})
    records = [
        _record("IL-0001", root_cause="config-change", components=["monitoring"]),
        _record("IL-0002", root_cause="software-bug", components=["monitoring", "dns"]),
        _record("IL-0003", root_cause="network", components=["monitoring"], org="Other", org_slug="other"),
    ]
    ranked = rank_related(subject, records)
    assert [r.record_id for r in ranked] == ["IL-0002"]
    assert ranked[0].why == ("shared components: monitoring, dns",)
