"""The ingest flow with a model endpoint: the run artifact carries the model's cost, and the key
is nowhere Prefect or we write (real Prefect test harness, stub endpoint on 127.0.0.1)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli import run
from tests.flows.model import answers
from tests.flows.model.stub import Stub, answer

PAGES = Path(__file__).resolve().parents[2] / "data" / "postmortems"
KEY = "sk-flow-test-secret-987654"
pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_the_run_artifact_has_the_model_column_and_the_key_is_written_nowhere(
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    data_dir: Path,
    stub: Stub,
    tmp_path: Path,
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.client.schemas.sorting import ArtifactSort, FlowRunSort

    stub.script(answer(answers.GOOD))
    monkeypatch.setenv("INCIDENTS_LLM_BASE_URL", stub.url)
    monkeypatch.setenv("INCIDENTS_LLM_MODEL", "stub-model")
    monkeypatch.setenv("INCIDENTS_LLM_API_KEY", KEY)
    page = tmp_path / answers.PAGE
    shutil.copy(PAGES / answers.PAGE, page)
    result = run(capsys, "ingest", str(page), "--url", answers.URL)
    assert result.code == 0, result.err
    assert result.out.startswith("drafted")
    with get_client(sync_client=True) as client:
        [artifact] = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["ingest-report"])),
            sort=ArtifactSort.CREATED_DESC,
            limit=1,
        )
        [flow_run] = client.read_flow_runs(sort=FlowRunSort.START_TIME_DESC, limit=1)
    table = json.loads(artifact.data) if isinstance(artifact.data, str) else artifact.data
    (row,) = table
    assert row["model"].startswith("model stub-model: 7 fields, 0 refused, 1500 tokens")
    assert stub.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"
    written = "".join(
        p.read_text(encoding="utf-8", errors="replace") for p in data_dir.rglob("*") if p.is_file()
    )
    # Prefect stores an in-process run's Settings with the flow run: the key goes in masked
    assert flow_run.parameters["settings"]["llm_api_key"] == "**********"
    seen = written + result.out + result.err + caplog.text + json.dumps(flow_run.parameters, default=str)
    assert KEY not in seen
