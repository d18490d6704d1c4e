"""Pipeline throughput: N pages over K loopback hosts through the real ingest flow.

usage: .venv/bin/python bench/pipeline.py [--sizes 200,2000] [--hosts 4] [--workers 2]
                                          [--pages auto|corpus|fixtures]

Prints, per N: pipeline pages/s (first run, Prefect's ephemeral server already up) next to bare
single-process `trafilatura.extract` over the same pages in the same run, as a ratio; the time of
a re-run over the unchanged sources as a share of the first run (the server answers 304 to
If-None-Match, as real blogs do); and peak RSS of the ingest process and of its extraction
workers. Each N runs in a fresh child process so peak RSS is its own. Politeness interval is 0.
Last, the CPU stage alone (extraction + drafting on the same workers, pages in memory): the
ceiling the pipeline's own costs (fetch, archive, queue, Prefect) are taken from.
Targets: pipeline >= 0.7 x bare with 2 workers, re-run <= 10% of the first run, flat memory.

Pages: `corpus` wraps the 42 real postmortems of ../shared/corpus in blog chrome
(../shared/tools/render_pages.py), the size and shape of pages curators meet; `fixtures` uses our
three small test pages (tests/data/pipeline), which is all a fresh clone has. `auto` picks corpus
when ../shared is there. Page i is template i mod T made unique by a numbered sentence.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._temp import temp_dir  # noqa: E402

SHARED = ROOT.parent / "shared"
FIXTURES = ROOT / "tests" / "data" / "pipeline"
TEMPLATES = ["en-queue-outage.html", "ko-db-failover.html", "ja-cdn-cache.html"]


def templates(kind: str) -> tuple[str, list[Path]]:
    """The pages to serve, and which kind they are."""
    corpus = SHARED / "corpus" / "postmortems"
    if kind == "corpus" or (kind == "auto" and corpus.is_dir()):
        from bench._corpus import render_postmortems

        return "corpus", sorted(render_postmortems(SHARED).glob("*/page.html"))
    return "fixtures", [FIXTURES / name for name in TEMPLATES]


def page(paths: list[Path], i: int) -> bytes:
    """Page i: template i mod T, made unique by a numbered sentence (ASCII, so any charset holds it)."""
    body = paths[i % len(paths)].read_bytes()
    return body.replace(b"</h1>", f"</h1>\n<p>Report number {i} of this series.</p>".encode(), 1)


def serve(
    paths: list[Path], hosts: list[str], n_per_host: int
) -> tuple[list[ThreadingHTTPServer], list[str]]:
    bodies: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real blog servers do
        disable_nagle_algorithm = True  # else headers and body in two writes wait 40 ms for an ACK

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body = bodies.get(self.path)
            if body is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            etag = '"' + hashlib.sha1(body).hexdigest() + '"'
            if self.headers.get("If-None-Match") == etag:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html")  # the page's own <meta> names its charset
            self.send_header("Content-Length", str(len(body)))
            self.send_header("ETag", etag)
            self.end_headers()
            self.wfile.write(body)

    servers, urls = [], []
    port = 0
    for h, host in enumerate(hosts):
        server = ThreadingHTTPServer((host, port), Handler)
        server.daemon_threads = True
        port = server.server_address[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        for j in range(n_per_host):
            path = f"/posts/{h}-{j}.html"
            bodies[path] = page(paths, h * n_per_host + j)
            urls.append(f"http://{host}:{port}{path}")
    return servers, urls


def serve_forever(
    paths: list[Path], hosts: list[str], n_per_host: int, replies: multiprocessing.Queue
) -> None:
    _, urls = serve(paths, hosts, n_per_host)
    replies.put(urls)
    threading.Event().wait()


class Workers(threading.Thread):
    """Samples this process's grandchildren (the fork server's extraction workers) from /proc:
    each one's peak RSS (VmHWM) and CPU time, per phase. Linux only; empty elsewhere."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.phase = "first"
        self.seen: dict[int, dict[str, object]] = {}
        self.stopped = threading.Event()
        self.tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    @staticmethod
    def _stat(pid: str) -> tuple[int, float] | None:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return int(fields[1]), int(fields[11]) + int(fields[12])  # ppid, utime + stime

    def sample(self) -> None:
        if not Path("/proc").is_dir():
            return
        stats = {pid: st for pid in os.listdir("/proc") if pid.isdigit() and (st := self._stat(pid))}
        children = {pid for pid, (ppid, _) in stats.items() if ppid == os.getpid()}
        for pid, (ppid, ticks) in stats.items():
            if str(ppid) not in children:
                continue
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            hwm = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM")), 0)
            entry = self.seen.setdefault(int(pid), {"phase": self.phase, "hwm_kb": 0, "cpu_s": 0.0})
            # max: an exiting worker (a zombie) shows no memory any more
            entry["hwm_kb"] = max(entry["hwm_kb"], hwm)  # type: ignore[call-overload]
            entry["cpu_s"] = max(entry["cpu_s"], ticks / self.tick)  # type: ignore[call-overload]

    def run(self) -> None:
        while not self.stopped.wait(0.1):
            self.sample()

    def figures(self, phase: str) -> tuple[float, float]:
        """Peak RSS (MB) of the phase's largest worker, and its workers' CPU seconds together."""
        mine = [e for e in self.seen.values() if e["phase"] == phase]
        peak = max((e["hwm_kb"] for e in mine), default=0) / 1024  # type: ignore[type-var]
        return peak, sum(e["cpu_s"] for e in mine)  # type: ignore[misc]


def child(n: int, hosts: int, workers: int, paths: list[Path]) -> None:
    """One measured run in this (fresh) process: warm-up, first run, re-run; JSON on stdout."""
    data_dir = temp_dir("bench-pipeline-")
    addresses = [f"127.0.0.{i + 2}" for i in range(hosts)]
    os.environ.update(
        {
            "INCIDENTS_ALLOW_HOSTS": ",".join(addresses),
            "INCIDENTS_MIN_INTERVAL": "0",
            "PREFECT_HOME": str(data_dir / "prefect"),
            "PREFECT_LOGGING_LEVEL": "WARNING",
            "PREFECT_SERVER_LOGGING_LEVEL": "CRITICAL",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
        }
    )
    from prefect import flow

    from flows.pipeline import IngestRequest, run_ingest, warm_workers
    from flows.settings import Settings

    @flow
    def warm() -> int:
        return 1

    listing = data_dir / "sources.txt"
    request = IngestRequest(from_file=str(listing), workers=workers)
    settings = Settings(data_dir=data_dir)
    warm_workers(request, settings)  # as the CLI does: the workers warm while Prefect starts
    warm()  # start Prefect's ephemeral server outside the measurement
    # The blog runs in a process of its own: in this one it would compete with the ingest for the GIL.
    ctx = multiprocessing.get_context("spawn")
    replies = ctx.Queue()
    blog = ctx.Process(target=serve_forever, args=(paths, addresses, n // hosts, replies), daemon=True)
    blog.start()
    urls = replies.get(timeout=120)
    listing.write_text("\n".join(urls))
    workers_seen = Workers()
    workers_seen.start()
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    first = run_ingest(request, settings)
    t1 = time.perf_counter()
    cpu1 = time.process_time()
    workers_seen.phase = "rerun"
    second = run_ingest(request, settings)
    t2 = time.perf_counter()
    cpu2 = time.process_time()
    workers_seen.stopped.set()
    workers_seen.join()
    worker_peak, worker_cpu = workers_seen.figures("first")
    blog.terminate()
    print(
        json.dumps(
            {
                "n": len(urls),
                "first_s": t1 - t0,
                "rerun_s": t2 - t1,
                "first": {s: sum(o.status == s for o in first) for s in {o.status for o in first}},
                "rerun": {s: sum(o.status == s for o in second) for s in {o.status for o in second}},
                "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "rss_workers_mb": worker_peak,
                "cpu_main_s": cpu1 - cpu0,
                "cpu_workers_s": worker_cpu,
                "cpu_main_rerun_s": cpu2 - cpu1,
            }
        )
    )


def bare(n: int, paths: list[Path], **options: object) -> float:
    """Pages/s of bare single-process trafilatura.extract over the same pages (bytes, as served)."""
    import trafilatura

    pages = [page(paths, i) for i in range(min(n, 300))]
    trafilatura.extract(pages[0], **options)  # its first call loads models and caches
    t0 = time.perf_counter()
    for body in pages:
        trafilatura.extract(body, **options)
    return len(pages) / (time.perf_counter() - t0)


def stage_alone(n: int, paths: list[Path], workers: int) -> dict[str, float]:
    """The CPU stage with nothing around it: extraction + drafting of the same pages, in memory,
    on `workers` warm worker processes (no fetching, archiving, queueing or Prefect), in pages/s;
    and, in this one process, the ms a page of our extraction and of drafting alone. The
    pipeline cannot beat the first figure: it is the ceiling its orchestration is measured from."""
    from extractors import extract_document
    from extractors.draft import draft_document
    from flows.ingest import DraftTask, Job, draft_for_queue
    from flows.pool import make_pool

    now = "2026-01-01T00:00:00Z"
    tasks = []
    for i in range(min(n, 600)):
        url = f"http://127.0.0.2/posts/{i}.html"
        job = Job(source=url, kind="url")
        tasks.append(DraftTask(job, page(paths, i), url, url, "text/html", None, "sha256:", now))
    with make_pool(workers) as pool:
        list(pool.map(draft_for_queue, tasks[: 4 * workers]))  # every worker up and warm
        t0 = time.perf_counter()
        list(pool.map(draft_for_queue, tasks))  # one page a call, as the ingest submits them
        pps = len(tasks) / (time.perf_counter() - t0)
    sample = tasks[:126]
    for t in sample[:8]:
        draft_for_queue(t)  # this process warm too
    extract_s = draft_s = float("inf")
    for _ in range(3):  # the best of three: this machine's speed wanders
        t0 = time.perf_counter()
        docs = [extract_document(t.data, url=t.url, content_type=t.content_type) for t in sample]
        t1 = time.perf_counter()
        for doc, t in zip(docs, sample, strict=True):
            draft_document(doc, source_url=t.url, snapshot=None, snapshot_digest=t.digest, now=now)
        extract_s, draft_s = min(extract_s, t1 - t0), min(draft_s, time.perf_counter() - t1)
    per_page = 1000 / len(sample)
    return {"pps": pps, "extract_ms": extract_s * per_page, "draft_ms": draft_s * per_page}


# Trafilatura's fast settings as our extractor calls it; its defaults (fallbacks on) are slower.
FAST = {"include_comments": False, "fast": True, "output_format": "markdown"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="200,2000")
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--pages", choices=["auto", "corpus", "fixtures"], default="auto")
    ap.add_argument("--child", type=int)
    ap.add_argument("--paths", help=argparse.SUPPRESS)  # the parent's page list, for a child
    a = ap.parse_args()
    if a.child:
        child(a.child, a.hosts, a.workers, [Path(p) for p in json.loads(Path(a.paths).read_text())])
        return 0
    kind, paths = templates(a.pages)
    listing = temp_dir("bench-pipeline-") / "paths.json"
    listing.write_text(json.dumps([str(p) for p in paths]))
    size = sum(p.stat().st_size for p in paths) / len(paths) / 1024
    print(f"pages: {kind}, {len(paths)} templates, mean {size:.0f} KiB; {a.hosts} hosts, {a.workers} workers")
    rows = []
    for n in [int(x) for x in a.sizes.split(",")]:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", str(n), "--hosts", str(a.hosts)]
            + ["--workers", str(a.workers), "--paths", str(listing)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return 1
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        result["bare_pps"] = bare(n, paths, **FAST)
        result["bare_default_pps"] = bare(n, paths)
        rows.append(result)
    head = f"{'N':>6} {'pipeline p/s':>13} {'bare p/s':>9} {'ratio':>6} {'(defaults)':>10} {'re-run':>7}"
    print(f"{head} {'RSS MB':>7} {'worker MB':>9} {'CPU ms/page':>20}  outcomes")
    for r in rows:
        pps = r["n"] / r["first_s"]
        cpu = f"{1000 * r['cpu_main_s'] / r['n']:.1f} + {1000 * r['cpu_workers_s'] / r['n']:.1f}"
        cpu += f" / {1000 * r['cpu_main_rerun_s'] / r['n']:.1f}"
        print(
            f"{r['n']:>6} {pps:>13.1f} {r['bare_pps']:>9.1f} {pps / r['bare_pps']:>6.2f} "
            f"{pps / r['bare_default_pps']:>10.2f} {r['rerun_s'] / r['first_s']:>7.1%} "
            f"{r['rss_mb']:>7.0f} {r['rss_workers_mb']:>9.0f} {cpu:>20}  "
            f"first {r['first']} / re-run {r['rerun']}"
        )
    print(
        "bare p/s: trafilatura.extract with fast=True, one process; (defaults): the ratio against its"
        " default settings.\nCPU ms/page: the ingest process + its extraction workers on the first run"
        " / the ingest process on the re-run;"
        f" bare is {1000 / rows[-1]['bare_pps']:.1f}. worker MB: the largest worker's peak RSS."
    )
    alone = stage_alone(rows[-1]["n"], paths, a.workers)
    bare_pps = rows[-1]["bare_pps"]
    print(
        f"CPU stage alone (extract + draft in memory, {a.workers} warm workers; no fetch, archive,"
        f" queue or Prefect): {alone['pps']:.1f} p/s, {alone['pps'] / bare_pps:.2f} x bare.\n"
        f"One process, ms a page: our extraction {alone['extract_ms']:.1f}, drafting"
        f" {alone['draft_ms']:.1f}; bare {1000 / bare_pps:.1f}."
    )
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        print(
            f"peak RSS N={last['n']} / N={first['n']}: ingest process {last['rss_mb'] / first['rss_mb']:.2f},"
            f" worker {last['rss_workers_mb'] / max(first['rss_workers_mb'], 1):.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
