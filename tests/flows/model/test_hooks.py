"""The two drafting paths with and without a model: `incidents draft` and the ingest's queue."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from extractors import extract_document
from extractors.draft import draft_document
from flows.ingest import Job, ingest_jobs
from flows.settings import Settings
from flows.store.atomic import dumps_model
from schema.draft import Draft
from tests.cli import run
from tests.flows.model import answers
from tests.flows.model.stub import Stub, answer

PAGES = Path(__file__).resolve().parents[2] / "data" / "postmortems"
NOW = "2026-02-03T04:05:06.000000Z"
FIXTURES = ["ko-postmortem.html", "ja-postmortem.html", "en-timeline-utc.html", "en-no-timeline.html"]


def _rule_text(page: Path, url: str, now: str, snapshot: str | None, digest: str) -> str:
    data = page.read_bytes()
    doc = extract_document(data, url=url, content_type="text/html")
    return dumps_model(
        draft_document(doc, source_url=url, snapshot=snapshot, snapshot_digest=digest, now=now)
    )


@pytest.mark.parametrize("name", FIXTURES)
def test_without_an_endpoint_the_cli_draft_is_byte_identical(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    import hashlib

    monkeypatch.setattr("flows.cli.draft.utc_now", lambda: NOW)
    monkeypatch.setenv("INCIDENTS_LLM_BASE_URL", "")
    monkeypatch.setenv("INCIDENTS_LLM_MODEL", "would-be-used")
    page = PAGES / name
    result = run(capsys, "draft", str(page), "--url", answers.URL)
    assert result.code == 0 and result.err == ""
    digest = "sha256:" + hashlib.sha256(page.read_bytes()).hexdigest()
    assert result.out == _rule_text(page, answers.URL, NOW, None, digest)
    assert '"model"' not in result.out


def test_the_cli_draft_with_an_endpoint_is_refined(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, stub: Stub, tmp_path: Path
) -> None:
    stub.script(answer(answers.GOOD))
    monkeypatch.setenv("INCIDENTS_LLM_BASE_URL", stub.url)
    monkeypatch.setenv("INCIDENTS_LLM_MODEL", "stub-model")
    monkeypatch.setenv("INCIDENTS_DATA_DIR", str(tmp_path))
    result = run(capsys, "draft", str(PAGES / answers.PAGE), "--url", answers.URL)
    assert result.code == 0
    draft = json.loads(result.out)
    assert set(draft["record"]["summary"]) == {"ko", "en"}
    assert draft["model"]["model"] == "stub-model"
    assert result.err.startswith("model stub-model: 7 fields, 0 refused, 1500 tokens")


def test_the_cli_draft_reads_the_endpoint_from_a_dot_env_too(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, stub: Stub, tmp_path: Path
) -> None:
    stub.script(answer(answers.GOOD))
    for name in ("INCIDENTS_LLM_BASE_URL", "INCIDENTS_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(
        f"INCIDENTS_LLM_BASE_URL={stub.url}\nINCIDENTS_LLM_MODEL=stub-model\nINCIDENTS_DATA_DIR={tmp_path}\n"
    )
    result = run(capsys, "draft", str(PAGES / answers.PAGE), "--url", answers.URL)
    assert result.code == 0
    assert json.loads(result.out)["model"]["model"] == "stub-model"


def _ingest(data_dir: Path, **llm: object) -> tuple[list, Path]:  # type: ignore[type-arg]
    page = data_dir.parent / answers.PAGE
    shutil.copy(PAGES / answers.PAGE, page)
    settings = Settings(data_dir=data_dir, llm_retry_backoff=0.01, llm_pause=0.0, **llm)  # type: ignore[arg-type]
    outcomes = ingest_jobs([Job(source=str(page), kind="page", url=answers.URL)], settings=settings)
    return outcomes, page


def test_without_an_endpoint_the_queued_draft_is_the_rule_drafters_byte_for_byte(data_dir: Path) -> None:
    import hashlib

    (outcome,), page = _ingest(data_dir)
    assert outcome.status == "drafted" and outcome.model is None
    assert "model" not in outcome.model_dump(mode="json")
    queued = (data_dir / "records" / "queue" / f"{outcome.draft_id}.json").read_text(encoding="utf-8")
    draft = Draft.model_validate_json(queued)
    digest = "sha256:" + hashlib.sha256(page.read_bytes()).hexdigest()
    assert queued == _rule_text(page, answers.URL, draft.history[0].at, draft.source.snapshot, digest)


def test_the_ingest_queues_the_refined_draft_and_reports_its_cost(data_dir: Path, stub: Stub) -> None:
    stub.script(answer(answers.GOOD))
    (outcome,), _ = _ingest(data_dir, llm_base_url=stub.url, llm_model="stub-model")
    assert outcome.status == "drafted"
    assert outcome.model is not None and "1500 tokens" in outcome.model
    queued = Draft.model_validate_json(
        (data_dir / "records" / "queue" / f"{outcome.draft_id}.json").read_text(encoding="utf-8")
    )
    assert set(queued.record.summary) == {"ko", "en"} and queued.model is not None


def test_a_refined_draft_is_approved_into_a_bilingual_record(
    capsys: pytest.CaptureFixture[str], data_dir: Path, stub: Stub
) -> None:
    stub.script(answer(answers.GOOD))
    (outcome,), _ = _ingest(data_dir, llm_base_url=stub.url, llm_model="stub-model")
    approved = run(
        capsys, "review", "approve", outcome.draft_id, "--reviewer", "alice", "--data-dir", str(data_dir)
    )
    assert approved.code == 0, approved.err
    record = json.loads((data_dir / "records" / "IL-0001.json").read_text(encoding="utf-8"))
    assert set(record["summary"]) == {"ko", "en"} and set(record["remediation"][0]["text"]) == {"ko", "en"}
    assert run(capsys, "validate", "--data-dir", str(data_dir)).code == 0


def test_the_ingest_goes_on_when_the_endpoint_fails(data_dir: Path, stub: Stub) -> None:
    stub.script(answer(answers.BROKEN_JSON))
    (outcome,), _ = _ingest(data_dir, llm_base_url=stub.url, llm_model="stub-model")
    assert outcome.status == "drafted"
    assert outcome.model is not None and "not JSON" in outcome.model
    queued = Draft.model_validate_json(
        (data_dir / "records" / "queue" / f"{outcome.draft_id}.json").read_text(encoding="utf-8")
    )
    assert queued.model is not None and "rule-based draft stands" in (queued.model.note or "")
    assert set(queued.record.summary) == {"ko"}


def test_explain_lists_what_the_model_wrote_translated_and_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, stub: Stub, tmp_path: Path
) -> None:
    good = json.loads(json.dumps(answers.GOOD))
    good["terms"].append({"field": "components", "term": "flux-capacitor", "quotes": [answers.LOCK_KO]})
    stub.script(answer(good))
    monkeypatch.setenv("INCIDENTS_LLM_BASE_URL", stub.url)
    monkeypatch.setenv("INCIDENTS_DATA_DIR", str(tmp_path))
    result = run(capsys, "draft", str(PAGES / answers.PAGE), "--explain")
    assert result.code == 0
    assert "    summary: model  machine-translated: en" in result.out
    assert "    refused components: a term outside the components vocabulary" in result.out
    assert "flux-capacitor" not in result.out


@pytest.mark.parametrize("name", FIXTURES[:2])
def test_without_an_endpoint_explain_is_unchanged(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    from extractors.draft import explain_draft

    monkeypatch.setattr("flows.cli.draft.utc_now", lambda: NOW)
    page = PAGES / name
    result = run(capsys, "draft", str(page), "--url", answers.URL, "--explain")
    doc = extract_document(page.read_bytes(), url=answers.URL, content_type="text/html")
    import hashlib

    digest = "sha256:" + hashlib.sha256(page.read_bytes()).hexdigest()
    draft = draft_document(doc, source_url=answers.URL, snapshot=None, snapshot_digest=digest, now=NOW)
    assert result.out == explain_draft(draft) + "\n"


def test_a_bad_model_setting_is_one_clear_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INCIDENTS_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("INCIDENTS_LLM_TIMEOUT", "soon")
    result = run(capsys, "draft", str(PAGES / answers.PAGE))
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: INCIDENTS_LLM_TIMEOUT: ") and len(result.err.splitlines()) == 1
    # without an endpoint, an unrelated bad setting does not stop `draft` (it reads none)
    monkeypatch.delenv("INCIDENTS_LLM_BASE_URL")
    assert run(capsys, "draft", str(PAGES / answers.PAGE)).code == 0
