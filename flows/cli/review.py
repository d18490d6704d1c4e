"""`incidents review ...`: list, show, approve and reject drafts in records/queue/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from flows.cli.common import DataDir, JsonFlag, make_settings
from flows.review import REJECT_CODES, Reviews
from flows.store.atomic import dumps_model
from flows.store.queue import QueueStore
from schema.draft import Draft
from schema.errors import InputError, RecordInvalid

app = typer.Typer(
    help="The review queue: list, show, approve, reject, reopen, stats, and serve (the reviewers' web page).",
    no_args_is_help=True,
)

StatusOpt = Annotated[
    str | None, typer.Option("--status", help="pending, approved or rejected (default: all).")
]
Reviewer = Annotated[str, typer.Option("--reviewer", help="Who takes the decision (name or handle).")]


def _first(text: dict[str, str]) -> str:
    return next(iter(text.values()), "") if text else ""


def _summary_line(draft: Draft) -> str:
    title = _first(draft.record.title) or "(no title)"
    org = draft.record.org or "?"
    return f"{draft.draft_id}  {draft.status:<8}  {org} · {title[:80]}  <{draft.source.url}>"


@app.command("list")
def list_drafts(status: StatusOpt = None, as_json: JsonFlag = False, data_dir: DataDir = None) -> None:
    """List drafts, newest decisions last."""
    if status not in (None, "pending", "approved", "rejected"):
        raise typer.BadParameter("must be pending, approved or rejected", param_hint="--status")
    queue = QueueStore(make_settings(data_dir).queue_dir)
    drafts = list(queue.drafts(status))  # type: ignore[arg-type]
    if as_json:
        rows = [
            {
                "draft_id": d.draft_id,
                "status": d.status,
                "org": d.record.org,
                "title": d.record.title,
                "url": d.source.url,
                "version": d.version,
            }
            for d in drafts
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    for draft in drafts:
        print(_summary_line(draft))
    if not drafts:
        print(f"no {status or ''} drafts".replace("  ", " "))


@app.command("show")
def show(draft_id: str, as_json: JsonFlag = False, data_dir: DataDir = None) -> None:
    """Show one draft (an id or a unique prefix of one)."""
    draft = QueueStore(make_settings(data_dir).queue_dir).get(draft_id)
    if as_json:
        print(dumps_model(draft), end="")
        return
    from extractors.draft import explain_draft

    print(explain_draft(draft))


def _read_edits(path: Path) -> dict:
    if not path.is_file():
        raise InputError(f"edits file {path} does not exist (give a JSON file of record fields)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordInvalid(f"edits file {path} is not valid JSON: {exc}") from exc
    return data


@app.command("approve")
def approve(
    draft_id: str,
    reviewer: Reviewer,
    edits: Annotated[
        Path | None, typer.Option("--edits", help="JSON file: a partial record merged over the draft.")
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Approve a draft: write records/IL-NNNN.json, mark the draft approved, append to the audit log."""
    changes = _read_edits(edits) if edits else None
    record = Reviews(make_settings(data_dir)).approve(draft_id, reviewer=reviewer, edits=changes)
    print(f"approved {draft_id} as {record.id}")


@app.command("reject")
def reject(
    draft_id: str,
    reviewer: Reviewer,
    reason: Annotated[str, typer.Option("--reason", help="Why: kept with the draft and in the audit log.")],
    code: Annotated[
        str | None,
        typer.Option("--code", help="Reason code: " + ", ".join(REJECT_CODES) + "."),
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Reject a draft, keeping it and the reason."""
    draft = Reviews(make_settings(data_dir)).reject(draft_id, reviewer=reviewer, reason=reason, code=code)
    print(f"rejected {draft.draft_id}")


@app.command("reopen")
def reopen(
    draft_id: str,
    reviewer: Reviewer,
    reason: Annotated[str, typer.Option("--reason", help="Why it goes back in the queue.")] = "",
    data_dir: DataDir = None,
) -> None:
    """Put a rejected draft back in the queue; its history, the rejection too, is kept."""
    draft = Reviews(make_settings(data_dir)).reopen(draft_id, reviewer=reviewer, reason=reason)
    print(f"reopened {draft.draft_id}")


@app.command("stats")
def stats(as_json: JsonFlag = False, data_dir: DataDir = None) -> None:
    """What reviewers did: acceptance rate, rejection reasons, most-edited fields per drafter version."""
    figures = Reviews(make_settings(data_dir)).stats()
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
    print(f"serving {settings.data_dir} at http://{host}:{port}/ (Ctrl-C stops)")
    run(settings, host, port)
