"""Records we write ourselves for the library's tests: English, Korean and Japanese, sharing causes and components."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "data"


def record(record_id: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": record_id,
        "org": "Example",
        "org_slug": "example",
        "date": "2025-01-01",
        "title": {"en": f"Incident {record_id}"},
        "sources": [{"url": f"https://status.example/{record_id}", "kind": "status-page"}],
        "review": {"written_by": "session", "reviewed_at": "2025-02-01T00:00:00Z", "reviewed_by": "tester"},
    }
    base.update(fields)
    return base


RECORDS = [
    # The Korean one: a node image (AMI) rolled out by the daily rollover broke kubelet; its summary
    # has "커널" (kernel, two characters) and "롤오버" (rollover) inside sentences.
    record(
        "IL-0101",
        org="Nimbus Korea",
        org_slug="nimbus-korea",
        date="2024-10-31",
        title={"ko": "회수된 노드 AMI 때문에 쿠버네티스 노드가 간헐적으로 NotReady 가 됐다"},
        summary={
            "ko": "매일 노드를 롤오버하는 모듈이 커널 문제로 회수된 최신 AMI 를 골라 노드가 간헐적으로 NotReady 를 보고했다.",
            "en": "The daily node rollover picked the newest AMI, later recalled for a kernel problem, and nodes flapped NotReady.",
        },
        root_cause="upgrade-migration",
        components=["node-image", "linux-kernel", "kubelet"],
        symptoms=["nodes-not-ready"],
        contributing=["no-progressive-rollout"],
        domain=["kubernetes", "aws"],
        sources=[{"url": "https://tech.nimbus.example/ko/2024/ami-rollover", "kind": "blog"}],
    ),
    # The Japanese one: same cause, shares the node image; "障害" (outage, two characters) and
    # "不具合" (defect) inside sentences.
    record(
        "IL-0102",
        org="Sakura Cloud Works",
        org_slug="sakura-cloud-works",
        date="2025-03-02",
        title={"ja": "ノードイメージ更新後にカーネルの不具合でGPUノードが再作成され続けた"},
        summary={
            "ja": "新しいノードイメージに含まれるカーネルの不具合により、GPUノードの障害が数時間続いた。"
        },
        lessons={"ja": "イメージの更新は段階的に展開するべきだった。"},
        root_cause="upgrade-migration",
        components=["node-image", "gpu-driver"],
        symptoms=["nodes-recreated-in-loop", "gpu-unavailable"],
        domain=["kubernetes", "ai-infra"],
        severity="sev2",
        sources=[{"url": "https://blog.sakura.example/2025/03/gpu-nodes", "kind": "blog"}],
    ),
    # An English one that shares only a component with the Korean one.
    record(
        "IL-0103",
        org="Harbor Bank",
        org_slug="harbor-bank",
        date="2023-06-15",
        title={"en": "A kubelet memory leak made nodes NotReady during the payment peak"},
        summary={
            "en": "A memory leak in the kubelet of one node pool made nodes NotReady, and payments timed out."
        },
        root_cause="software-bug",
        components=["kubelet"],
        symptoms=["nodes-not-ready", "request-timeouts"],
        contributing=["change-during-peak"],
        domain=["kubernetes", "payments"],
        severity="sev1",
        sources=[{"url": "https://harbor.example/postmortems/kubelet-leak", "kind": "provider-pir"}],
    ),
    # Unrelated: a DNS misconfiguration.
    record(
        "IL-0104",
        org="Harbor Bank",
        org_slug="harbor-bank",
        date="2022-01-20",
        title={"en": "A DNS zone change removed the records of the login service"},
        summary={
            "en": "A zone file change deleted records, and customers could not log in for forty minutes."
        },
        root_cause="config-change",
        components=["dns"],
        symptoms=["login-failure", "dns-resolution-failure"],
        domain=["dns"],
        sources=[{"url": "https://harbor.example/postmortems/dns-zone", "kind": "provider-pir"}],
    ),
]


def write_records(records_dir: Path, *, with_il_0042: bool = True) -> list[str]:
    """Write the test records (and tests/data/records/IL-0042.json) into records_dir; their ids."""
    records_dir.mkdir(parents=True, exist_ok=True)
    for each in RECORDS:
        (records_dir / f"{each['id']}.json").write_text(
            json.dumps(each, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
    ids = [each["id"] for each in RECORDS]
    if with_il_0042:
        source = DATA / "records" / "IL-0042.json"
        (records_dir / "IL-0042.json").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
        ids.append("IL-0042")
    return sorted(ids)
