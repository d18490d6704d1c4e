"""Rule-only against rule-plus-model drafts, side by side, on the labelled corpus pages.

usage: .venv/bin/python bench/eval_draft.py --model [--shared ../shared] [--pages DIR]
   or: .venv/bin/python bench/eval_model.py [--shared ../shared] [--pages DIR] [--limit N]

With INCIDENTS_LLM_BASE_URL (and _MODEL, _API_KEY) set, the model is that endpoint's. Without it,
a STUB on 127.0.0.1 answers: it restates the rule-based draft's text (quoting the source where the
rule did), writes a placeholder "translation", and adds one invented quote, one unknown term and
one underivable duration a page. Its figures show the plumbing and the checks (every invention
refused, no quote fabricated, what the round trip costs), never a model's quality; the report
says STUB on every line that would otherwise be read as one. Answers are cached under
--data-dir or INCIDENTS_DATA_DIR (a second run against an endpoint then costs nothing), else a
temp dir.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._temp import temp_dir  # noqa: E402
from extractors import extract_document  # noqa: E402
from extractors.draft import draft_document  # noqa: E402
from flows.model import refine_with_model  # noqa: E402
from flows.settings import Settings  # noqa: E402


def _stub_answer(body: dict[str, Any]) -> dict[str, Any]:
    """What the bench stub says to one request: built from the request alone (see the docstring)."""
    user = body["messages"][1]["content"]
    task = json.loads(user.split("TASK:\n", 1)[1].split("\n", 1)[0])
    source = (
        user.split(":\n", 1)[1] if "SOURCE" not in user else user[user.index("SOURCE") :].split(":\n", 1)[1]
    )
    src = task["source_language"]
    rule = task["rule_based_draft"]
    texts = []
    for name in task["fields"]["texts"]:
        value = (rule.get(name) or {}).get(src)
        if not value:
            continue
        first = value.split("\n")[0][:200]
        if first not in source:
            continue
        text = {
            lang: value if lang == src else f"[stub translation to {lang}] {first[:80]}"
            for lang in task["languages"]
        }
        texts.append({"field": name, "text": text, "quotes": [first]})
    texts.append(
        {
            "field": "lessons",
            "text": dict.fromkeys(task["languages"], "x"),
            "quotes": ["A sentence this page never had."],
        }
    )
    terms = [
        {
            "field": "components",
            "term": "stub-invented-term",
            "quotes": [texts[0]["quotes"][0]] if texts[:-1] else [],
        }
    ]
    durations = [
        {"field": "resolved_after", "value": "PT999H", "quotes": [t["quotes"][0] for t in texts[:1]]}
    ]
    return {"texts": texts, "items": [], "terms": terms, "durations": durations}


@contextmanager
def bench_stub() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            content = json.dumps(_stub_answer(body), ensure_ascii=False)
            prompt = sum(len(m["content"]) for m in body["messages"]) // 3
            reply = {
                "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": len(content) // 3},
            }
            data = json.dumps(reply, ensure_ascii=False).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _scorer(shared: Path) -> Any:
    spec = importlib.util.spec_from_file_location("score", shared / "eval" / "score.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _score(
    sc: Any, rec: dict[str, Any], draft: dict[str, Any], label: dict[str, Any], visible: str
) -> dict[str, list[int]]:
    """The comparable metrics of eval_draft.py for one page: metric -> [hits, total]."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])

    def tally(metric: str, ok: bool, n: int = 1) -> None:
        out[metric][0] += int(ok) if n == 1 else ok
        out[metric][1] += n

    rc = label.get("root_cause") or {}
    if rc.get("best") and rc["best"] != "unknown":
        tally("root_cause", rec.get("root_cause") in {rc["best"], *(rc.get("acceptable") or [])})
    for f in sc.SET_FIELDS:
        gold = label.get(f) or {}
        must, may = set(gold.get("must") or []), set(gold.get("may") or [])
        got = set(rec.get(f) or [])
        out["vocab_recall"][0] += len(must & got)
        out["vocab_recall"][1] += len(must)
        out["vocab_precision"][0] += len(got & (must | may))
        out["vocab_precision"][1] += len(got)
    for key in ("detected_after", "resolved_after"):
        gold_s = sc.seconds((label.get("timeline") or {}).get(key))
        got_s = sc.seconds((rec.get("timeline") or {}).get(key))
        if gold_s is not None:
            tally("timeline_correct", got_s is not None and abs(got_s - gold_s) <= max(600, 0.1 * gold_s))
        else:
            tally("timeline_invented", got_s is not None)
    evidence = draft.get("evidence") or {}
    for field in sc.EVIDENCE_FIELDS:
        gold_quotes = (label.get("evidence") or {}).get(field) or []
        if gold_quotes:
            got_quotes = [i.get("quote", "") for i in evidence.get(field, [])]
            tally("evidence_all", any(sc.overlap(g, q) >= 0.6 for g in gold_quotes for q in got_quotes))
    for items in evidence.values():
        for item in items:
            tally(
                "quotes_fabricated",
                bool(sc.squash(item["quote"])) and sc.squash(item["quote"]) not in visible,
            )
    summary = rec.get("summary") or {}
    tally("summary_in_en_and_ko", {"en", "ko"} <= set(summary))
    return out


def main(shared: Path, pages: Path, *, limit: int = 0, data_dir: Path | None = None) -> int:
    """Print the side-by-side table; 0 when done (it measures, it does not gate)."""
    sc = _scorer(shared)
    base = Settings()
    stub = not base.llm_base_url
    # INCIDENTS_DATA_DIR keeps the answers between runs (a re-run against an endpoint is free)
    env_dir = os.environ.get("INCIDENTS_DATA_DIR")
    data_dir = data_dir or (Path(env_dir) if env_dir else temp_dir("eval-model-"))
    labels = sorted((shared / "eval" / "labels").glob("*.json"))[: limit or None]
    rule_hits: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    model_hits: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    cost = {"pages": 0, "fields": 0, "refused": 0, "tokens": 0, "cached": 0, "seconds": 0.0, "notes": 0}
    with bench_stub() if stub else _endpoint(base.llm_base_url) as url:
        settings = base.model_copy(
            update={"llm_base_url": url, "llm_model": base.llm_model or "stub", "data_dir": data_dir}
        )
        for lf in labels:
            label = json.loads(lf.read_text(encoding="utf-8"))
            page = pages / label["slug"] / "page.html"
            if not page.exists():
                continue
            doc = extract_document(page.read_bytes(), url=label["url"], content_type="text/html")
            rule = draft_document(
                doc,
                source_url=label["url"],
                snapshot=None,
                snapshot_digest="bench",
                now="2026-01-01T00:00:00Z",
            )
            refined, report = refine_with_model(rule, doc, settings)
            visible = sc.page_text(page)
            for hits, draft in ((rule_hits, rule), (model_hits, refined)):
                data = draft.model_dump(mode="json")
                for k, (g, t) in _score(sc, data["record"], data, label, visible).items():
                    hits[k][0] += g
                    hits[k][1] += t
            cost["pages"] += 1
            cost["fields"] += report.fields
            cost["refused"] += report.refused
            cost["tokens"] += report.tokens
            cost["cached"] += report.cached
            cost["seconds"] += report.seconds
            cost["notes"] += bool(report.notes)
    who = (
        "STUB (no endpoint set; plumbing and checks only, not a model's quality)"
        if stub
        else f"{base.llm_model} at {base.llm_base_url}"
    )
    print(f"rule-only vs rule+model: {who}")
    print(f"{'metric':24} {'rule':>14} {'rule+model':>14}")
    for k in sorted(set(rule_hits) | set(model_hits)):
        cells = []
        for hits in (rule_hits, model_hits):
            g, t = hits[k]
            cells.append(f"{g / t:.3f} {g:>3}/{t:<3}" if t else "-")
        print(f"{k:24} {cells[0]:>14} {cells[1]:>14}")
    n = max(1, cost["pages"])
    print(
        f"model: {cost['pages']} pages; a page: {cost['fields'] / n:.1f} fields, "
        f"{cost['refused'] / n:.1f} refusals, {cost['tokens'] / n:.0f} tokens, {cost['seconds'] / n:.2f} s; "
        f"{cost['cached']} answers cached, {cost['notes']} pages with notes" + (" [STUB]" if stub else "")
    )
    return 0


@contextmanager
def _endpoint(url: str) -> Iterator[str]:
    yield url


def _cli() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--pages", help="rendered pages (default: render into a temp dir)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N labelled pages")
    ap.add_argument("--data-dir", help="where answers are cached (default: a temp dir)")
    a = ap.parse_args()
    shared = Path(a.shared)
    if a.pages:
        pages = Path(a.pages)
    else:
        from bench._corpus import render_postmortems

        pages = render_postmortems(shared)
    return main(shared, pages, limit=a.limit, data_dir=Path(a.data_dir) if a.data_dir else None)


if __name__ == "__main__":
    sys.exit(_cli())
