"""`incidents learn`: refit the drafter's weights on the reviewers' approvals (flows/learn.py)."""

from __future__ import annotations

from typing import Annotated

import typer

from flows.cli.common import DataDir, make_settings, usage_error


def _pct(got: int, of: int) -> str:
    return f"{got / of:.2f} ({got}/{of})" if of else "  -  "


def register(app: typer.Typer) -> None:
    @app.command("learn")
    def learn(
        data_dir: DataDir = None,
        evaluate: Annotated[
            bool,
            typer.Option(
                "--evaluate",
                help="Replay the approvals in decision order and print how drafts made with weights "
                "fitted on earlier approvals only score (a learning curve); writes nothing.",
            ),
        ] = False,
        steps: Annotated[int, typer.Option("--steps", help="Points of the learning curve.", min=1)] = 5,
    ) -> None:
        """Refit the drafter's weights on the shipped labels plus this data directory's approvals."""
        from flows import learn as flow

        settings = make_settings(data_dir)
        if not settings.data_dir.is_dir():
            usage_error(f"{settings.data_dir}: no data directory here; pass --data-dir DIR")
        if evaluate:
            curve = flow.evaluate(settings, steps)
            if not curve:
                print("no approvals to replay: approve drafts first (`incidents review approve`)")
                return
            print(
                f"{'approvals':>11}  {'root cause top-1':>18} {'(shipped)':>12}  "
                f"{'vocab P':>13} {'vocab R':>13}  {'(shipped P / R)':>15}"
            )
            for s in curve:
                v, b = s.vocabulary, s.vocabulary_before
                print(
                    f"{s.first:>5}-{s.last:<5}  {_pct(s.root_cause.top1, s.root_cause.pages):>18} "
                    f"{_pct(s.before.top1, s.before.pages):>12}  "
                    f"{_pct(v.correct, v.kept):>13} {_pct(v.found, v.required):>13}  "
                    f"{_pct(b.correct, b.kept)} / {_pct(b.found, b.required)}"
                )
            return
        done = flow.learn(settings)
        if not done.approvals:
            print(
                f"no approvals to learn from ({done.rejections} rejection(s), {done.skipped} approval(s) "
                f"without a readable snapshot); the shipped weights {done.weights.version} apply"
            )
            return
        print(
            f"learned from {done.approvals} approval(s) ({done.rejections} rejection(s) counted, "
            f"{done.skipped} approval(s) without a readable snapshot skipped); weights "
            f"{done.weights.version} written to {flow.weights_path(settings)}"
        )
