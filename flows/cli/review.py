"""`incidents review ...`: list, show, approve and reject drafts in records/queue/."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from flows.cli.common import DataDir, JsonFlag, make_settings
from flows.lifecycle import EDITS_HELP, lifecycle_lines
from flows.review import REJECT_CODES, Reviews
from flows.store import journal
from flows.store.atomic import dumps_model
from flows.store.damaged import summary_line
from flows.triage import DOUBTFUL, LANES, lane_of, skipped_pages, triage_text, unskip
from schema.draft import Draft
from schema.errors import InputError, RecordInvalid

app = typer.Typer(
    help=(
        "The review queue: list, show, approve, reject, reopen, correct, stats, skipped, unskip, "
        "and serve (the reviewers' web page)."
    ),
    no_args_is_help=True,
)

StatusOpt = Annotated[
    str | None, typer.Option("--status", help="pending, approved, rejected or superseded (default: all).")
]
Reviewer = Annotated[str, typer.Option("--reviewer", help="Who takes the decision (name or handle).")]
Comment = Annotated[
    str | None,
    typer.Option("--comment", help="An optional note on the decision, kept in the audit log."),
]
LaneOpt = Annotated[
    str | None,
    typer.Option("--lane", help='doubtful (the gate said "not a postmortem" but queued it) or postmortem.'),
]


def _reviews(data_dir: Path | None) -> Reviews:
    """The data directory's reviews, interrupted decisions finished first: each said on stderr."""
    reviews = Reviews(make_settings(data_dir))
    for note in reviews.notes:
        print(f"note: {note}", file=sys.stderr)
    return reviews


def _first(text: dict[str, str]) -> str:
    return next(iter(text.values()), "") if text else ""


def _summary_line(draft: Draft) -> str:
    title = _first(draft.record.title) or "(no title)"
    org = draft.record.org or "?"
    lane = lane_of(draft) if lane_of(draft) == DOUBTFUL else ""
    return f"{draft.draft_id}  {draft.status:<8}  {lane:<8}  {org} · {title[:80]}  <{draft.source.url}>"


@app.command("list")
def list_drafts(
    status: StatusOpt = None, lane: LaneOpt = None, as_json: JsonFlag = False, data_dir: DataDir = None
) -> None:
    """List drafts, newest decisions last; the gate's doubtful drafts say `doubtful`."""
    if status not in (None, "pending", "approved", "rejected", "superseded"):
        raise typer.BadParameter("must be pending, approved, rejected or superseded", param_hint="--status")
    if lane not in (None, *LANES):
        raise typer.BadParameter("must be " + " or ".join(LANES), param_hint="--lane")
    drafts, damaged = _reviews(data_dir).queue.scan(status)  # type: ignore[arg-type]
    if damaged:
        print(summary_line(damaged, "draft"), file=sys.stderr)
    drafts = [d for d in drafts if lane is None or lane_of(d) == lane]
    if as_json:
        rows = [
            {
                "draft_id": d.draft_id,
                "status": d.status,
                "org": d.record.org,
                "title": d.record.title,
                "url": d.source.url,
                "version": d.version,
                "lane": lane_of(d),
            }
            for d in drafts
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    for draft in drafts:
        print(_summary_line(draft))
    if not drafts:
        print(f"no {status or ''} {lane or ''} drafts".replace("   ", " ").replace("  ", " "))


@app.command("show")
def show(draft_id: str, as_json: JsonFlag = False, data_dir: DataDir = None) -> None:
    """Show one draft (an id or a unique prefix of one)."""
    draft = _reviews(data_dir).queue.get(draft_id)
    if as_json:
        print(dumps_model(draft), end="")
        return
    from extractors.draft import explain_draft

    print(explain_draft(draft) + triage_text(draft), end="")
    lines = lifecycle_lines(make_settings(data_dir), draft)
    if lines:
        print("\n".join(lines))


def _read_edits(path: Path) -> dict:
    if not path.is_file():
        raise InputError(f"edits file {path} does not exist (give a JSON file of record fields)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordInvalid(f"edits file {path} is not valid JSON: {exc}") from exc
    return data


@app.command("approve", epilog=EDITS_HELP.replace("\n", "\n\n"))
def approve(
    draft_id: str,
    reviewer: Reviewer,
    edits: Annotated[
        Path | None, typer.Option("--edits", help="JSON file: a partial record merged over the draft.")
    ] = None,
    source_of: Annotated[
        str | None,
        typer.Option(
            "--source-of",
            metavar="IL-NNNN",
            help="Add the draft as another write-up (a source) of this record, not a new record.",
        ),
    ] = None,
    comment: Comment = None,
    data_dir: DataDir = None,
) -> None:
    """Approve a draft: write records/IL-NNNN.json, mark the draft approved, append to the audit log.

    A draft of a changed source (`changed` at ingest) updates its record: the same id, a new version.
    """
    changes = _read_edits(edits) if edits else None
    reviews = _reviews(data_dir)
    supersedes = reviews.queue.get(draft_id).supersedes or ""
    record = reviews.approve(draft_id, reviewer=reviewer, edits=changes, source_of=source_of, comment=comment)
    if source_of:
        print(f"approved {draft_id} as a source of {record.id}")
    elif supersedes == record.id:
        print(f"approved {draft_id} as {record.id} (updated: a new version, the earlier one in history)")
    else:
        print(f"approved {draft_id} as {record.id}")


@app.command("correct", epilog=EDITS_HELP.replace("\n", "\n\n"))
def correct(
    record_id: Annotated[str, typer.Argument(metavar="IL-NNNN", help="The record to correct.")],
    reviewer: Reviewer,
    edits: Annotated[
        Path, typer.Option("--edits", help="JSON file: the fields to change (null clears one).")
    ],
    comment: Comment = None,
    data_dir: DataDir = None,
) -> None:
    """Correct an approved record: the edits become its next version; the earlier one is kept in
    records/history/IL-NNNN/ and the change in the audit log."""
    record = _reviews(data_dir).correct(
        record_id, reviewer=reviewer, edits=_read_edits(edits), comment=comment
    )
    print(f"corrected {record.id} (updated_at {record.updated_at})")


@app.command("reject")
def reject(
    draft_id: str,
    reviewer: Reviewer,
    reason: Annotated[str, typer.Option("--reason", help="Why: kept with the draft and in the audit log.")],
    code: Annotated[
        str | None,
        typer.Option("--code", help="Reason code: " + ", ".join(REJECT_CODES) + "."),
    ] = None,
    comment: Comment = None,
    data_dir: DataDir = None,
) -> None:
    """Reject a draft, keeping it and the reason."""
    draft = _reviews(data_dir).reject(draft_id, reviewer=reviewer, reason=reason, code=code, comment=comment)
    print(f"rejected {draft.draft_id}")


@app.command("reopen")
def reopen(
    draft_id: str,
    reviewer: Reviewer,
    reason: Annotated[str, typer.Option("--reason", help="Why it goes back in the queue.")] = "",
    comment: Comment = None,
    data_dir: DataDir = None,
) -> None:
    """Put a rejected draft back in the queue; its history, the rejection too, is kept."""
    draft = _reviews(data_dir).reopen(draft_id, reviewer=reviewer, reason=reason, comment=comment)
    print(f"reopened {draft.draft_id}")


@app.command("stats")
def stats(as_json: JsonFlag = False, data_dir: DataDir = None) -> None:
    """What reviewers did: acceptance rate, rejection reasons, most-edited fields per drafter version."""
    figures = _reviews(data_dir).stats()
    unreadable = figures["unreadable"]
    for line in unreadable["audit_lines"]:
        print(line, file=sys.stderr)
    if unreadable["drafts"]:
        print(summary_line(unreadable["drafts"], "draft"), file=sys.stderr)
    if as_json:
        print(json.dumps(figures, ensure_ascii=False, indent=2))
        return
    rate = figures["acceptance_rate"]
    queue = figures["queue"]
    print(
        f"decisions {figures['decisions']}: approved {figures['approved']}, rejected {figures['rejected']}"
        + (f" (acceptance {rate:.0%})" if rate is not None else "")
    )
    print(f"queue: {queue['pending']} pending, {queue['approved']} approved, {queue['rejected']} rejected")
    if figures["rejection_reasons"]:
        print("rejection reasons:")
        for code, count in figures["rejection_reasons"].items():
            print(f"  {count:>5}  {code}")
    for drafter, slot in figures["drafters"].items():
        print(f"{drafter}: {slot['approved']} approved, {slot['approved_with_edits']} with edits")
        for name, count in slot["most_edited_fields"].items():
            print(f"  {count:>5}  {name}")


@app.command("serve")
def serve(
    host: Annotated[
        str, typer.Option("--host", help="Address to bind (other than loopback needs a token).")
    ] = ("127.0.0.1"),
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8765,
    data_dir: DataDir = None,
) -> None:
    """The reviewers' web page: the queue, each draft beside its archived source, decisions, records."""
    from flows.web.app import serve as run
    from flows.web.security import check_bind

    settings = make_settings(data_dir)
    try:
        check_bind(host, settings.review_token.get_secret_value())
    except InputError as exc:  # a configuration to fix, not a failure: exit 2 like other usage errors
        raise typer.BadParameter(str(exc), param_hint="--host") from exc
    for note in journal.recover(settings.data_dir):  # before the app opens it: said here, once
        print(f"note: {note}", file=sys.stderr)
    print(f"serving {settings.data_dir} at http://{host}:{port}/ (Ctrl-C stops)")
    run(settings, host, port)


@app.command("skipped")
def skipped(as_json: JsonFlag = False, data_dir: DataDir = None) -> None:
    """Pages the postmortem gate skipped (a confident "not a postmortem"), each with why."""
    pages = skipped_pages(make_settings(data_dir))
    if as_json:
        print(json.dumps([p.as_dict() for p in pages], ensure_ascii=False, indent=2))
        return
    for page in pages:
        print(f"{page.url}  {page.reason}")
    if not pages:
        print("no skipped pages")


@app.command("unskip")
def unskip_pages(
    reviewer: Reviewer,
    urls: Annotated[
        list[str] | None, typer.Argument(help="Skipped pages' URLs (as `review skipped` lists them).")
    ] = None,
    every: Annotated[bool, typer.Option("--all", help="Draft every skipped page.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Draft skipped pages from their archived snapshots and queue them (in the doubtful lane)."""
    if bool(urls) == every:
        raise typer.BadParameter("give the skipped pages' URLs, or --all", param_hint="URLS")
    settings = make_settings(data_dir)
    wanted = [p.url for p in skipped_pages(settings) if p.draftable] if every else list(urls or [])
    if every and not wanted:
        print("no skipped pages to draft")
        return
    for draft in unskip(settings, wanted, reviewer=reviewer):
        url = draft.source.canonical_url or draft.source.url
        print(f"drafted  {draft.draft_id}  {url}  ({lane_of(draft)})")
