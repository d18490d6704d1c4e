"""Usage and config errors: one line naming what is wrong and the fix, exit 2, before Prefect
starts; a read-only data directory is one line too; the messages list what would have been right."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flows.settings import Settings
from flows.store.queue import QueueStore
from tests.cli import run
from tests.conftest import DATA
from tests.flows.factories import make_draft

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "examples" / "postmortem.html"
ONLY = "only http and https URLs, saved pages and WARC files are ingested"


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    return lines[0]


@pytest.mark.parametrize(
    "source",
    [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "ftp://ftp.example.org/postmortem.html",
        "data:text/html,x",
    ],
)
def test_other_schemes_are_refused_by_name(capsys, data_dir: Path, source: str) -> None:
    result = run(capsys, "ingest", source)
    assert result.code == 2
    line = _one_line(result.err)
    assert ONLY in line and source.split(":")[0] + ": URLs are not supported" in line


@pytest.mark.parametrize("command", ["ingest", "draft"])
def test_a_url_for_a_saved_page_must_be_http(capsys, data_dir: Path, command: str) -> None:
    result = run(capsys, command, str(PAGE), "--url", "javascript:alert(1)")
    assert result.code == 2
    assert "must be an http or https URL" in _one_line(result.err)


def test_sources_that_can_only_fail_are_reported_at_once(capsys, data_dir: Path, tmp_path: Path) -> None:
    """Like any failed source (the run would go on), but with nothing left to draft, without
    waiting for Prefect; with no source through and some failed, the run exits 1."""
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    missing = tmp_path / "missing.html"
    result = run(capsys, "ingest", str(missing), str(pdf), str(tmp_path))
    assert result.code == 1, result.err
    assert result.out.splitlines() == [
        f"failed  {missing}: no such file (give a URL, a saved page or a WARC file)",
        f"failed  {pdf}: unsupported file type .pdf; give .html, .htm, .xhtml, .md, .markdown, .txt, .warc, .warc.gz",
        f"failed  {tmp_path}: is a directory: give page files (.html, .md, .txt) or WARC files",
    ]
    assert run(capsys, "ingest", "--strict", str(missing)).code == 1


def test_errors_before_any_flow_never_start_prefect(data_dir: Path, tmp_path: Path) -> None:
    """A missing file (a failed source and nothing else: exit 1), an ftp URL and a missing --from-file (usage
    errors), --help: answered without importing Prefect (1.5 s) or starting its server (7-10 s)."""
    code = (
        "import sys\nfrom flows.cli import main\n"
        f"codes = [main(['ingest', {str(tmp_path / 'missing.html')!r}]), main(['ingest', 'ftp://x.example/a']),"
        " main(['ingest', '--from-file', 'missing.txt']), main(['ingest', '--help'])]\n"
        "print(codes, 'prefect' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )
    assert done.stdout.strip().splitlines()[-1] == "[1, 2, 2, 0] False", done.stdout + done.stderr


def test_from_file_problems_name_the_file_and_line(capsys, data_dir: Path, tmp_path: Path) -> None:
    result = run(capsys, "ingest", "--from-file", str(tmp_path / "urls.txt"))
    assert result.code == 2 and "--from-file" in _one_line(result.err) and "no such file" in result.err
    listing = tmp_path / "urls.txt"
    listing.write_text("# postmortems\nhttps://blog.example.org/a\nmissing.html\nftp://x.example/b\n")
    result = run(capsys, "ingest", "--from-file", str(listing))
    assert result.code == 2
    assert f"{listing}:4: ftp://x.example/b" in _one_line(result.err)


TWO_KINDS = """\
[[source]]
name = "fine"
feed = "https://a.example/feed.xml"

[[source]]
name = "both"
feed = "https://a.example/feed.xml"
sitemap = "https://a.example/sitemap.xml"
"""
BAD_CRON = """\
[[source]]
name = "nightly"
feed = "https://a.example/feed.xml"
schedule = "61 * * * *"
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, "no such sources file"),
        ("[[source]\nname = 'x'\n", "is not valid TOML"),
        (TWO_KINDS, ":5: source 'both': give exactly one of urls, feed, sitemap, index (got feed, sitemap)"),
        (BAD_CRON, ":1: source 'nightly': schedule: '61 * * * *' is not a valid cron expression"),
    ],
)
@pytest.mark.parametrize("command", [["ingest"], ["schedule", "--dry-run"]])
def test_sources_file_errors_exit_2_naming_file_and_line(
    capsys, data_dir: Path, tmp_path: Path, text: str | None, expected: str, command: list[str]
) -> None:
    path = tmp_path / "sources.toml"
    if text is not None:
        path.write_text(text)
    result = run(capsys, *command, "--sources", str(path))
    assert result.code == 2, result
    line = _one_line(result.err)
    assert str(path) in line and expected in line


def test_cron_expressions_are_read_by_a_real_parser() -> None:
    from flows.sources import cron_problem

    assert cron_problem("0 6 * * *") is None
    assert cron_problem("*/15 9-17 * * mon-fri") is None
    assert "not a valid cron expression" in (cron_problem("0 25 * * *") or "")
    assert "5 fields" in (cron_problem("0 6 * *") or "")


def test_an_ambiguous_id_prefix_lists_the_drafts_it_matches(capsys, data_dir: Path) -> None:
    queue = QueueStore(Settings(data_dir=data_dir).queue_dir)
    ids = []
    for n in range(1, 40):
        draft = make_draft(n)
        queue.add(draft)
        ids.append(draft.draft_id)
    prefix = next(
        i[:3] for i in ids if sum(other.startswith(i[:3]) for other in ids) > 1
    )  # "d-" and one hex digit: shared by several of 39 drafts
    result = run(capsys, "review", "show", prefix)
    assert result.code == 1
    line = _one_line(result.err)
    assert "ambiguous" in line
    assert all(i in line for i in ids if i.startswith(prefix))
    unique = ids[0][:12]
    assert run(capsys, "review", "show", unique).code == 0


def test_a_wrong_vocabulary_term_lists_the_nearest_valid_ones(capsys, data_dir: Path) -> None:
    record = json.loads((DATA / "records" / "IL-0042.json").read_text())
    record["root_cause"] = "certificate-expired"
    path = data_dir / "records" / "IL-0042.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    result = run(capsys, "validate")
    assert result.code == 1
    assert "did you mean expired-certificate?" in result.out + result.err


@pytest.mark.parametrize("field", ["url", "sources"])
def test_validate_refuses_records_that_link_elsewhere_than_http(capsys, data_dir: Path, field: str) -> None:
    record = json.loads((DATA / "records" / "IL-0042.json").read_text())
    if field == "url":
        record["url"] = "javascript:alert(1)"
    else:
        record["sources"][0]["url"] = "file:///etc/passwd"
    path = data_dir / "records" / "IL-0042.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    result = run(capsys, "validate")
    assert result.code == 1
    assert "is not an http or https URL" in result.out + result.err


def test_prefect_queue_services_are_quiet_unless_verbose() -> None:
    """`EventsWorker - Still processing items` logs outside `prefect.*`, past PREFECT_LOGGING_LEVEL."""
    from flows.cli.ingest import quiet_prefect

    try:
        quiet_prefect(verbose=False)
        assert not logging.getLogger("EventsWorker").isEnabledFor(logging.WARNING)
        quiet_prefect(verbose=True)
        assert logging.getLogger("EventsWorker").isEnabledFor(logging.WARNING)
    finally:
        logging.getLogger("EventsWorker").setLevel(logging.NOTSET)


# -- a read-only data directory: a bind mount in a private mount namespace (root or not) --


def _read_only(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`incidents ARGS` with data_dir mounted read-only for that process alone."""
    if not shutil.which("unshare"):
        pytest.skip("needs the unshare command (util-linux) to mount a folder read-only")
    script = 'mount --bind -o ro "$0" "$0" && exec "$@"'
    cmd = ["unshare", "-rm", "sh", "-c", script, str(data_dir), sys.executable, "-m", "flows", *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, check=False)
    if "mount" in done.stderr and "ermission" in done.stderr:
        pytest.skip("this machine does not let a test mount a folder read-only (user namespaces are off)")
    return done


@pytest.fixture
def archived(data_dir: Path) -> Path:
    """A data directory holding one capture and one draft, made without Prefect."""
    from flows.jobs import Job
    from flows.scheduler import ingest_jobs

    job = Job(source=str(PAGE), kind="page", url="https://status.larkspur.example/postmortems/api-outage")
    outcomes = ingest_jobs([job], settings=Settings(data_dir=data_dir))
    assert [o.status for o in outcomes] == ["drafted"]
    return data_dir


def test_a_read_only_data_directory_can_be_listed_shown_and_verified(archived: Path) -> None:
    listed = _read_only(archived, "archive", "list", "--data-dir", str(archived))
    assert listed.returncode == 0, listed.stderr
    capture = listed.stdout.split()[0]
    assert capture.startswith("c-")
    shown = _read_only(archived, "archive", "show", capture, "--data-dir", str(archived))
    assert shown.returncode == 0 and "expired" in shown.stdout, shown.stderr
    verified = _read_only(archived, "archive", "verify", "--data-dir", str(archived))
    assert verified.returncode == 0 and verified.stdout.startswith("ok:"), verified.stderr


def test_a_read_only_data_directory_is_one_line_for_ingest_and_approve(archived: Path) -> None:
    before = sorted(p.relative_to(archived) for p in archived.rglob("*"))
    ingest = _read_only(
        archived, "ingest", str(DATA / "pipeline" / "en-queue-outage.html"), "--data-dir", str(archived)
    )
    assert ingest.returncode == 2
    line = _one_line(ingest.stderr)
    assert str(archived) in line and "read-only" in line and "--data-dir" in line
    approve = _read_only(
        archived, "review", "approve", "d-", "--reviewer", "alice", "--data-dir", str(archived)
    )
    assert approve.returncode == 1
    assert "read-only" in _one_line(approve.stderr)
    assert sorted(p.relative_to(archived) for p in archived.rglob("*")) == before  # nothing half-written


def test_a_disk_that_fills_up_mid_run_fails_the_source_in_words() -> None:
    import errno

    from flows.jobs import failure

    outcome = failure("a.html", OSError(errno.ENOSPC, "No space left on device", "/data/raw/warc/x.warc.gz"))
    assert outcome.status == "failed"
    assert outcome.reason and outcome.reason.startswith(
        "cannot write /data/raw/warc/x.warc.gz: the file system is full"
    )
    assert "internal error" not in outcome.reason


def test_a_bad_setting_is_a_config_error_naming_the_variable(
    capsys, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INCIDENTS_MIN_INTERVAL", "soon")
    result = run(capsys, "review", "list")
    assert result.code == 2
    line = _one_line(result.err)
    assert "INCIDENTS_MIN_INTERVAL" in line and "incidents settings" in line


def test_empty_binary_and_unreadable_files_are_known_before_prefect(
    capsys, data_dir: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"")
    binary = tmp_path / "binary.html"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    unreadable = tmp_path / "locked.html"
    unreadable.write_text("<p>secret</p>")
    unreadable.chmod(0)
    cases = [
        (empty, "is empty: give a saved page or a WARC file with content"),
        (binary, "is a binary file, not a page (.html, .md, .txt are text)"),
    ]
    if not os.access(unreadable, os.R_OK):  # root reads anything: then it is not unreadable
        cases.append((unreadable, "cannot be read (Permission denied); check its permissions"))
    good = tmp_path / "good.html"
    good.write_text("<h1>Outage</h1><p>The database failed.</p>")
    for path, why in cases:  # a usage error, one line and exit 2, before Prefect (no run at all)
        result = run(capsys, "ingest", str(good), str(path))
        assert result.code == 2 and result.out == "", result.err
        assert _one_line(result.err) == f"error: {path}: {why}"
    both = run(capsys, "ingest", str(empty), str(binary))
    assert both.code == 2 and _one_line(both.err).endswith("(and 1 more such file(s))")
    assert not (data_dir / "raw").exists() or not list((data_dir / "raw").glob("*.warc*"))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--feed", "ftp://ftp.example.org/feed.xml"], "--feed: 'ftp://ftp.example.org/feed.xml': only http"),
        (["--sitemap", "file:///etc/sitemap.xml"], "--sitemap: 'file:///etc/sitemap.xml': only http"),
        (["http://127.0.0.1:9/post"], "http://127.0.0.1:9/post: 127.0.0.1 is a loopback address"),
        (["http://localhost/post"], "localhost is a loopback address"),
        (["http://10.1.2.3/post"], "10.1.2.3 is a private address"),
        (["--feed", "http://192.168.1.5/feed.xml"], "192.168.1.5 is a private address"),
        (["--from-file", "LIST"], "http://[::1]/post: ::1 is a loopback address"),
    ],
)
def test_schemes_and_guarded_addresses_are_usage_errors(
    capsys, data_dir: Path, args: list[str], expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("INCIDENTS_ALLOW_HOSTS", raising=False)
    listing = data_dir / "urls.txt"
    listing.write_text("# one a line\nhttps://blog.example.org/a\nhttp://[::1]/post\n")
    result = run(capsys, "ingest", *[str(listing) if arg == "LIST" else arg for arg in args])
    assert result.code == 2, result
    line = _one_line(result.err)
    assert expected in line, line
    if "address" in expected:
        assert "INCIDENTS_ALLOW_HOSTS" in line


def test_a_sources_file_with_another_scheme_or_a_guarded_host_exits_2(
    capsys, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("INCIDENTS_ALLOW_HOSTS", raising=False)
    path = tmp_path / "sources.toml"
    path.write_text('[[source]]\nname = "ftp"\nfeed = "ftp://ftp.example.org/feed.xml"\n')
    result = run(capsys, "ingest", "--sources", str(path))
    assert result.code == 2 and f"{path}:1: source 'ftp': feed:" in _one_line(result.err)
    path.write_text('[[source]]\nname = "lan"\nurls = ["http://192.168.0.7/postmortem"]\n')
    result = run(capsys, "ingest", "--sources", str(path))
    assert result.code == 2 and "192.168.0.7 is a private address" in _one_line(result.err)
    # allowed by INCIDENTS_ALLOW_HOSTS: no longer refused up front
    monkeypatch.setenv("INCIDENTS_ALLOW_HOSTS", "192.168.0.0/16")
    from flows.cli.ingest import _check_addresses

    _check_addresses(["http://192.168.0.7/postmortem"], Settings(data_dir=data_dir))
