"""The README's sample page drafts as a reader would: the right cause, symptoms, components and trigger."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from extractors import draft_page
from extractors.draft.negation import negated
from schema.draft import Draft

ROOT = Path(__file__).resolve().parents[3]


@cache
def sample() -> Draft:
    data = (ROOT / "examples" / "postmortem.html").read_bytes()
    return draft_page(data, url="https://example.org/postmortem/", now="2026-01-01T00:00:00Z").draft


def test_root_cause_is_the_expired_certificate() -> None:
    draft = sample()
    assert draft.record.root_cause == "expired-certificate"
    quotes = " ".join(e.quote for e in draft.evidence["root_cause"])
    assert "expired" in quotes


def test_no_data_was_lost_is_no_data_loss() -> None:
    record = sample().record
    assert "data-loss" not in record.symptoms
    assert "elevated-error-rate" in record.symptoms


def test_api_servers_are_not_kubernetes() -> None:
    record = sample().record
    assert "kube-apiserver" not in record.components and "kubernetes" not in record.domain
    assert {"certificate", "load-balancer"} <= set(record.components)


def test_trigger_is_the_expiry_not_the_fix() -> None:
    trigger = (sample().record.trigger or {}).get("en", "")
    assert "expires" in trigger
    assert "new certificate" not in trigger and "rolled out" not in trigger


def test_timeline_still_measured_from_first_impact() -> None:
    timeline = sample().record.timeline
    assert (timeline.detected_after, timeline.resolved_after) == ("PT17M", "PT2H5M")


@pytest.mark.parametrize(
    ("sentence", "mention", "expected"),
    [
        ("No data was lost.", "lost", True),
        ("The outage could have caused data loss.", "data loss", True),
        ("Data loss was avoided thanks to the replicas.", "Data loss", True),
        ("We lost data from the last hour.", "lost data", False),
        ("The API failed, but no data was lost.", "failed", False),
        ("The API failed, but no data was lost.", "lost", True),
        ("데이터 손실은 없었습니다.", "손실", True),
        ("일부 데이터 손실이 발생했습니다.", "손실", False),
        ("서버에 접속할 수 없었습니다.", "접속", False),
        ("データの損失はありませんでした。", "損失", True),
        ("一部のデータが損失しました。", "損失", False),
        ("サーバーに接続できませんでした。", "接続", False),
        # Not happened (yet): perfect tenses, unknowns and possibilities in all three languages.
        ("We have not found any data loss.", "data loss", True),
        ("We are not aware of any data loss.", "data loss", True),
        ("The bug was a potential data loss.", "data loss", True),
        ("We have lost data from the last hour.", "lost data", False),
        ("개인정보 유출은 확인되지 않았습니다.", "유출", True),
        ("데이터 손실이 발생할 가능성이 있었습니다.", "손실", True),
        ("개인정보가 유출되었습니다.", "유출", False),
        ("不正アクセスは確認されていません。", "不正アクセス", True),
        ("データの損失はございません。", "損失", True),
        ("不正アクセスが確認されました。", "不正アクセス", False),
    ],
)
def test_negation_and_hypotheticals(sentence: str, mention: str, expected: bool) -> None:
    start = sentence.index(mention)
    assert negated(sentence, start, start + len(mention)) is expected


def page(body: str) -> bytes:
    return f"<html><head><title>Outage</title></head><body><article><h1>API outage</h1>{body}</article></body></html>".encode()


def test_api_server_is_kube_apiserver_on_a_kubernetes_page() -> None:
    body = (
        "<p>On June 3 our Kubernetes API server stopped answering for 40 minutes; deploys failed and "
        "the cluster could not schedule new pods.</p><h2>Root cause</h2><p>The API server ran out of "
        "memory after an etcd compaction stalled.</p>"
    )
    draft = draft_page(page(body), url="https://e.example/k8s/", now="2026-01-01T00:00:00Z").draft
    assert "kube-apiserver" in draft.record.components


def test_korean_and_japanese_negated_losses_are_no_symptom() -> None:
    for body in (
        "<p>6월 3일 오후 2시부터 40분 동안 결제 API 장애가 발생했습니다. 데이터 손실은 없었습니다.</p>",
        "<p>6月3日14時から40分間、決済APIで障害が発生しました。データ損失はありませんでした。</p>",
    ):
        draft = draft_page(page(body), url="https://e.example/x/", now="2026-01-01T00:00:00Z").draft
        assert "data-loss" not in draft.record.symptoms, draft.record.symptoms
