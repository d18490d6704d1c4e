"""Extraction benchmark: ours vs bare trafilatura on scrapinghub and on rendered postmortem pages.

usage: .venv/bin/python bench/extract.py [--workers N] [--sweep] [--quick]

Reads ../shared (relative to the repository); exits 0 with a note when it is absent. Prints:
token precision / recall / F1 (the scrapinghub method: 4-token shingles of `\\w+` runs, averaged
per page), the share of section headings kept, language accuracy, docs/s and peak RSS. Each
configuration runs in its own process (spawned), so peak RSS is per worker and nothing is shared.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SCRAPINGHUB = SHARED / "corpus" / "extraction" / "scrapinghub"
POSTMORTEMS = SHARED / "corpus" / "postmortems"
RENDER = SHARED / "tools" / "render_pages.py"
WARMUP = 3

# --- scoring (scrapinghub/article-extraction-benchmark's method, as its README describes) ----------


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text or "")


# Japanese and Chinese have no spaces: a `\w+` run is a whole line of text, and a hard line wrap
# in a plain-text report splits it where the HTML reference does not. Scored per character instead.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_CJK_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")


def _cjk_tokens(text: str) -> list[str]:
    return _CJK_TOKEN.findall(text or "")


def _shingles(tokens: list[str]) -> Counter[tuple[str, ...]]:
    if len(tokens) < 4:
        return Counter([tuple(tokens)]) if tokens else Counter()
    return Counter(tuple(tokens[i : i + 4]) for i in range(len(tokens) - 3))


def page_scores(truth: str, pred: str, cjk: bool = False) -> tuple[float | None, float | None, bool]:
    """(precision, recall, exact) of one page; None where undefined (no prediction / no truth)."""
    tokens = _cjk_tokens if cjk else _tokens
    t, p = tokens(truth), tokens(pred)
    if t == p:
        return (1.0 if p else None), (1.0 if t else None), True
    st, sp = _shingles(t), _shingles(p)
    tp = sum((st & sp).values())
    fp = sum((sp - st).values())
    fn = sum((st - sp).values())
    precision = tp / (tp + fp) if sp else None
    recall = tp / (tp + fn) if st else None
    return precision, recall, False


def corpus_scores(pairs: list[tuple[str, str]], bootstrap: int = 1000, cjk: bool = False) -> dict[str, float]:
    scores = [page_scores(t, p, cjk) for t, p in pairs]

    def f1_of(sample: list[tuple[float | None, float | None, bool]]) -> tuple[float, float, float]:
        ps = [s[0] for s in sample if s[0] is not None]
        rs = [s[1] for s in sample if s[1] is not None]
        p = sum(ps) / len(ps) if ps else 0.0
        r = sum(rs) / len(rs) if rs else 0.0
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)

    p, r, f1 = f1_of(scores)
    rng = random.Random(0)
    boots = sorted(f1_of([rng.choice(scores) for _ in scores])[2] for _ in range(bootstrap)) or [f1]
    mean = sum(boots) / len(boots)
    sd = (sum((b - mean) ** 2 for b in boots) / len(boots)) ** 0.5
    return {
        "precision": p,
        "recall": r,
        "f1": f1,
        "pm": 1.96 * sd,
        "accuracy": sum(s[2] for s in scores) / len(scores),
    }


# --- inputs -------------------------------------------------------------------------------------------


def load_scrapinghub() -> list[dict[str, Any]]:
    truth = json.loads((SCRAPINGHUB / "ground-truth.json").read_text())
    items = []
    for key in sorted(truth):
        data = gzip.decompress((SCRAPINGHUB / "html" / f"{key}.html.gz").read_bytes())
        items.append({"id": key, "data": data, "url": truth[key]["url"], "truth": truth[key]["articleBody"]})
    return items


def _render_module() -> Any:
    spec = importlib.util.spec_from_file_location("render_pages", RENDER)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reference(body_html: str) -> tuple[str, list[str]]:
    """The article's text and its headings, from the article HTML render_pages wraps in chrome."""
    from lxml import html

    root = html.fragment_fromstring(body_html or "<p></p>", create_parent="div")
    # a rendered blog page (pepabo's) carries its own site chrome: its <article> is the article
    articles = root.findall(".//article")
    if len(articles) == 1:
        root = articles[0]
        # and its own <aside> (recruiting box) and <footer> (author box) are that site's chrome
        for chrome in root.xpath(".//aside|.//footer|.//nav"):
            chrome.drop_tree()
    for bad in root.xpath(".//script|.//style|.//noscript"):
        bad.drop_tree()
    for br in root.iter("br"):
        br.tail = "\n" + (br.tail or "")
    heads = [" ".join(h.text_content().split()) for h in root.iter("h1", "h2", "h3", "h4", "h5", "h6")]
    # block boundaries become newlines so words of adjacent blocks do not fuse into one token
    for el in root.iter():
        if el.tag in (
            "p",
            "li",
            "tr",
            "td",
            "th",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "div",
            "pre",
            "dd",
            "dt",
        ):
            el.tail = "\n" + (el.tail or "")
    return root.text_content(), [h for h in heads if h]


def load_postmortems(out: Path) -> list[dict[str, Any]]:
    subprocess.run([sys.executable, str(RENDER), str(POSTMORTEMS), str(out)], check=True, capture_output=True)
    render = _render_module()
    items = []
    for doc in sorted(p for p in POSTMORTEMS.iterdir() if (p / "meta.json").exists()):
        info = json.loads((doc / "meta.json").read_text())
        _, body = render.article_html(doc)
        body = re.sub(r"\A\s*<h1[^>]*>.*?</h1>", "", body, count=1, flags=re.S)
        src = next(doc.glob("source.*"))
        if src.suffix == ".txt":
            # PGP armor (the "BEGIN PGP SIGNED MESSAGE" header, the signature block) is not article text
            body = re.sub(r"-----BEGIN PGP SIGNED MESSAGE-----\n(?:[^\n]+\n)*\n", "", body)
            body = re.sub(
                r"-----BEGIN PGP SIGNATURE-----.*?-----END PGP SIGNATURE-----", "", body, flags=re.S
            )
        truth, heads = _reference(body)
        page = (out / doc.name / "page.html").read_bytes()
        base = {
            "id": doc.name,
            "url": info.get("url"),
            "lang": info.get("language"),
            "truth": truth,
            "heads": heads,
        }
        items.append({**base, "data": page, "kind": "page"})
        items.append({**base, "data": src.read_bytes(), "kind": "source", "source_name": src.name})
        if (info.get("encoding") or "").lower() == "iso-2022-jp":
            # the same page as an ISO-2022-JP site would serve it: bytes in that encoding, <meta> saying so
            text = page.decode("utf-8").replace('<meta charset="utf-8">', '<meta charset="iso-2022-jp">')
            items.append({**base, "data": text.encode("iso2022_jp", "replace"), "kind": "page-iso2022jp"})
    return items


# --- extractors (run in worker processes) -------------------------------------------------------------


def _decode_like_readme(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def run_bare(item: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    import trafilatura

    # scrapinghub: the decoded str, as its README measures; postmortems: the bytes a fetcher has
    page = _decode_like_readme(item["data"]) if item.get("kind") is None else item["data"]
    text = trafilatura.extract(page, url=item.get("url"), **settings) or ""
    return {"text": text, "heads": None, "lang": None}


def run_ours(item: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    from extractors import ExtractOptions, extract_document
    from schema.errors import ExtractionError

    content_type = None
    if item.get("kind") == "source":
        name = item["source_name"]
        content_type = (
            "text/markdown" if ".md" in name else ("text/plain" if name.endswith(".txt") else "text/html")
        )
    try:
        doc = extract_document(
            item["data"], url=item.get("url"), content_type=content_type, options=ExtractOptions(**settings)
        )
    except ExtractionError as exc:
        return {"text": "", "heads": [], "lang": None, "error": str(exc)}
    # the heading that repeats the title moves to Document.title: it is kept, as the title
    heads = [doc.block_text(b) for b in doc.blocks if b.kind == "heading"] + [doc.title or ""]
    return {"text": doc.text, "heads": heads, "lang": doc.language, "path": doc.extractor.name}


# ours loads langdetect's 55 language profiles on its first non-English page (about 0.5 s, once
# per process): warming up on English pages alone would leave that inside the timed run
_WARM_PAGE = {
    "data": ("<html><body><article><p>" + "Der Dienst war zwei Stunden lang nicht erreichbar. " * 20
             + "</p></article></body></html>").encode(),
    "url": None,
    "kind": "page",
}  # fmt: skip


def _warm_up(runner: str, settings: dict[str, Any], items: list[dict[str, Any]]) -> None:
    for item in [*items[:WARMUP], _WARM_PAGE]:
        RUNNERS[runner](item, settings)


RUNNERS: dict[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]] = {
    "bare": run_bare,
    "ours": run_ours,
}


def _worker(runner: str, settings: dict[str, Any], items: list[dict[str, Any]], warm: bool) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    run = RUNNERS[runner]
    if warm:
        _warm_up(runner, settings, items)
    start = time.perf_counter()
    outputs = [run(item, settings) for item in items]
    elapsed = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"outputs": outputs, "elapsed": elapsed, "rss_mb": rss}


def measure(runner: str, settings: dict[str, Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    """One configuration in one fresh process: outputs, docs/s (after warm-up), peak RSS."""
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        result = pool.submit(_worker, runner, settings, items, True).result()
    result["docs_s"] = len(items) / result["elapsed"] if result["elapsed"] else 0.0
    return result


def _speed_worker(
    configs: list[tuple[str, dict[str, Any]]], items: list[dict[str, Any]]
) -> tuple[list[float], list[float]]:
    """docs/s of each configuration, wall clock and per CPU second, timed page by page in turn in
    one process: on a shared, noisy machine whatever slows one configuration down slows the
    others at the same moment, and CPU time leaves out the time other processes took the core."""
    sys.path.insert(0, str(ROOT))
    for runner, settings in configs:
        _warm_up(runner, settings, items)
    wall = [0.0] * len(configs)
    cpu = [0.0] * len(configs)
    for n, item in enumerate(items):
        order = list(range(len(configs)))
        if n % 2:
            order.reverse()
        for c in order:
            runner, settings = configs[c]
            w, t = time.perf_counter(), time.process_time()
            RUNNERS[runner](item, settings)
            cpu[c] += time.process_time() - t
            wall[c] += time.perf_counter() - w
    return [len(items) / t if t else 0.0 for t in wall], [len(items) / t if t else 0.0 for t in cpu]


def measure_speed(
    configs: list[tuple[str, dict[str, Any]]], items: list[dict[str, Any]]
) -> tuple[list[float], list[float]]:
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        return pool.submit(_speed_worker, configs, items).result()


_POOL_ITEMS: list[dict[str, Any]] = []


def _pool_init(runner: str, settings: dict[str, Any]) -> None:
    """Each worker reads the pages itself (no 31 MB pickled per task) and warms up."""
    sys.path.insert(0, str(ROOT))
    _POOL_ITEMS.extend(load_scrapinghub())
    _warm_up(runner, settings, _POOL_ITEMS)


def _pool_chunk(runner: str, settings: dict[str, Any], indexes: list[int]) -> tuple[int, float, float]:
    cpu = time.process_time()
    for i in indexes:
        RUNNERS[runner](_POOL_ITEMS[i], settings)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return len(indexes), rss, time.process_time() - cpu


def _pause(seconds: float) -> None:
    time.sleep(seconds)


def measure_pool(
    runner: str, settings: dict[str, Any], count: int, workers: int
) -> tuple[float, float, float]:
    """Wall-clock docs/s over a process pool of `workers` (chunks of 8 pages), docs per CPU second
    summed over the workers, and the largest worker's peak RSS."""
    chunks = [list(range(i, min(i + 8, count))) for i in range(0, count, 8)]
    context = get_context("spawn")
    with ProcessPoolExecutor(
        workers, mp_context=context, initializer=_pool_init, initargs=(runner, settings)
    ) as pool:
        # start (and warm) every worker before the clock starts: spawning is not extraction
        list(pool.map(_pause, [1.0] * workers))
        start = time.perf_counter()
        results = list(pool.map(_pool_chunk, [runner] * len(chunks), [settings] * len(chunks), chunks))
        elapsed = time.perf_counter() - start
    cpu = sum(r[2] for r in results)
    return count / elapsed, count / cpu, max(r[1] for r in results)


# --- report --------------------------------------------------------------------------------------------


def _norm(heading: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", heading).casefold().split())


def headings_kept(items: list[dict[str, Any]], outputs: list[dict[str, Any]]) -> tuple[int, int]:
    kept = total = 0
    for item, out in zip(items, outputs, strict=True):
        want = [_norm(h) for h in item["heads"]]
        if out["heads"] is None:  # bare text output: a heading kept is one on a line of its own
            have = {_norm(line) for line in out["text"].splitlines()}
        else:
            have = {_norm(h) for h in out["heads"]}
        total += len(want)
        kept += sum(1 for h in want if h in have)
    return kept, total


def row(name: str, scores: dict[str, float], extra: str = "") -> str:
    return (
        f"| {name} | {scores['f1']:.3f} ± {scores['pm']:.3f} | {scores['precision']:.3f} "
        f"| {scores['recall']:.3f} | {scores['accuracy']:.2f} |{extra}"
    )


BARE_DEFAULTS: dict[str, Any] = {}
# our trafilatura settings for its text output; include_links would put "[text](url)" into the
# text (F1 0.901), so the bare row leaves it out (it is a little faster without, too)
BARE_OURS: dict[str, Any] = {
    "fast": True,
    "favor_recall": True,
    "include_comments": False,
    "include_tables": True,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=0, help="also measure a process pool of 1..N workers")
    parser.add_argument("--sweep", action="store_true", help="score other trafilatura settings for our path")
    parser.add_argument("--quick", action="store_true", help="first 40 scrapinghub pages only")
    args = parser.parse_args()
    if not SCRAPINGHUB.is_dir() or not POSTMORTEMS.is_dir():
        print(f"bench/extract.py: {SHARED} not present; nothing to measure")
        return 0
    sh = load_scrapinghub()
    if args.quick:
        sh = sh[:40]
    print(f"## scrapinghub ({len(sh)} pages)\n")
    print("| extractor | F1 | precision | recall | exact | docs/s (wall / CPU) | peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    configs = [
        ("bare trafilatura (defaults)", "bare", BARE_DEFAULTS),
        ("bare trafilatura (our settings)", "bare", BARE_OURS),
        ("ours", "ours", {}),
    ]
    if args.sweep:
        configs += [
            ("ours, favor_precision", "ours", {"favor_precision": True, "favor_recall": False}),
            ("ours, favor_recall=False", "ours", {"favor_recall": False}),
            ("ours, fast=False", "ours", {"fast": False}),
            ("ours, include_links=False", "ours", {"include_links": False}),
            ("ours, min_extracted_size=0", "ours", {"min_extracted_size": 0}),
            ("ours, no fallback", "ours", {"fallback_ratio": 0.0, "min_text_chars": 0}),
        ]
    # docs/s: the three main configurations timed in turn, page by page, in one process
    rates, cpu_rates = measure_speed([(runner, settings) for _, runner, settings in configs[:3]], sh)
    for idx, (name, runner, settings) in enumerate(configs):
        result = measure(runner, settings, sh)
        scores = corpus_scores([(i["truth"], o["text"]) for i, o in zip(sh, result["outputs"], strict=True)])
        paths = Counter(o.get("path") for o in result["outputs"] if o.get("path"))
        note = f" paths: {dict(paths)}" if paths else ""
        rate = f"{rates[idx]:.1f} / {cpu_rates[idx]:.1f}" if idx < len(rates) else f"({result['docs_s']:.1f})"
        print(row(name, scores, f" {rate} | {result['rss_mb']:.0f} |{note}"))
    print(
        f"\nthroughput ours / bare (our settings): {cpu_rates[2] / cpu_rates[1]:.2f}x per CPU second, "
        f"{rates[2] / rates[1]:.2f}x wall clock (target >= 0.8). docs/s column: wall / per CPU second, "
        "timed in turn; in parentheses: timed alone, not comparable"
    )

    with tempfile.TemporaryDirectory() as tmp:
        pm = load_postmortems(Path(tmp))
    print(
        f"\n## postmortems ({sum(1 for i in pm if i['kind'] == 'page')} rendered pages, their sources, "
        "the ISO-2022-JP page)\n"
    )
    print(
        "| input | extractor | F1 | precision | recall | exact | F1 (CJK per char) | headings kept "
        "| language right |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in ("page", "page-iso2022jp", "source"):
        items = [i for i in pm if i["kind"] == kind]
        for name, runner, settings in [
            ("bare (defaults)", "bare", BARE_DEFAULTS),
            ("bare (our settings)", "bare", BARE_OURS),
            ("ours", "ours", {}),
        ]:
            if kind == "source" and runner == "bare":
                continue
            outputs = measure(runner, settings, items)["outputs"]
            langs = [i["lang"] for i in items]
            for lang in [None, *sorted(set(langs))]:
                sel = [k for k, i in enumerate(items) if lang is None or i["lang"] == lang]
                if lang is not None and len(set(langs)) == 1:
                    continue
                pairs = [(items[k]["truth"], outputs[k]["text"]) for k in sel]
                scores = corpus_scores(pairs, bootstrap=200)
                cjk = corpus_scores(pairs, bootstrap=0, cjk=True)
                kept, total = headings_kept([items[k] for k in sel], [outputs[k] for k in sel])
                right = sum(1 for k in sel if outputs[k]["lang"] == items[k]["lang"])
                lang_cell = f"{right}/{len(sel)}" if runner == "ours" else "-"
                label = f"{kind} {lang or 'all'} ({len(sel)})"
                print(
                    f"{row(label + ' | ' + name, scores)} {cjk['f1']:.3f} | {kept}/{total} "
                    f"({kept / max(total, 1):.1%}) | {lang_cell} |"
                )
            if runner == "ours":
                for k, out in enumerate(outputs):
                    if out["lang"] != items[k]["lang"] or out.get("error"):
                        print(
                            f"    {kind} {items[k]['id']}: language {out['lang']} "
                            f"(want {items[k]['lang']}) {out.get('error', '')}"
                        )

    if args.workers:
        print(f"\n## process pool over scrapinghub ({len(sh)} pages, chunks of 8)\n")
        print(
            f"cores available: {len(os.sched_getaffinity(0))}; "
            f"load average before: {os.getloadavg()[0]:.1f}\n"
        )
        print("| workers | docs/s (wall) | speed-up | docs per CPU second | largest worker RSS MB |")
        print("|---|---|---|---|---|")
        first = None
        for n in range(1, args.workers + 1):
            rate, per_cpu, rss = measure_pool("ours", {}, len(sh), n)
            first = first or rate
            print(f"| {n} | {rate:.1f} | {rate / first:.2f}x | {per_cpu:.1f} | {rss:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
