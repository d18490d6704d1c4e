"""Pipeline throughput: N pages over K loopback hosts through the real ingest flow.

usage: .venv/bin/python bench/pipeline.py [--sizes 200,2000] [--hosts 4] [--workers 2]

Prints, per N: pipeline pages/s (first run, Prefect's ephemeral server already up) next to bare
single-process `trafilatura.extract` over the same pages in the same run, as a ratio; the time of
a re-run over the unchanged sources as a share of the first run (the server answers 304 to
If-None-Match, as real blogs do); and peak RSS of the ingest process and of its extraction
workers. Each N runs in a fresh child process so peak RSS is its own. Politeness interval is 0.
Targets: pipeline >= 0.7 x bare with 2 workers, re-run <= 10% of the first run, flat memory.
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
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PAGES = ROOT / "tests" / "data" / "pipeline"
TEMPLATES = ["en-queue-outage.html", "ko-db-failover.html", "ja-cdn-cache.html"]


def page(i: int) -> bytes:
    """Page i: one of our three postmortems, made unique by a numbered sentence."""
    text = (PAGES / TEMPLATES[i % len(TEMPLATES)]).read_text(encoding="utf-8")
    return text.replace("</h1>", f"</h1>\n<p>Report number {i} of this series.</p>", 1).encode()


def serve(hosts: list[str], n_per_host: int) -> tuple[list[ThreadingHTTPServer], list[str]]:
    bodies: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real blog servers do
        disable_nagle_algorithm = True  # else headers and body in two writes wait 40 ms for an ACK

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
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
            self.send_header("Content-Type", "text/html; charset=utf-8")
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
            bodies[path] = page(h * n_per_host + j)
            urls.append(f"http://{host}:{port}{path}")
    return servers, urls


def serve_forever(hosts: list[str], n_per_host: int, replies: multiprocessing.Queue) -> None:
    _, urls = serve(hosts, n_per_host)
    replies.put(urls)
    threading.Event().wait()


def child(n: int, hosts: int, workers: int) -> None:
    """One measured run in this (fresh) process: warm-up, first run, re-run; JSON on stdout."""
    data_dir = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
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

    from flows.pipeline import IngestRequest, ingest_flow, warm_workers
    from flows.settings import Settings

    @flow
    def warm() -> int:
        return 1

    listing = data_dir / "sources.txt"
    request = IngestRequest(from_file=str(listing), workers=workers)
    warm_workers(request)  # as the CLI does: the workers warm while Prefect starts
    warm()  # start Prefect's ephemeral server outside the measurement
    # The blog runs in a process of its own: in this one it would compete with the ingest for the GIL.
    ctx = multiprocessing.get_context("spawn")
    replies = ctx.Queue()
    blog = ctx.Process(target=serve_forever, args=(addresses, n // hosts, replies), daemon=True)
    blog.start()
    urls = replies.get(timeout=120)
    listing.write_text("\n".join(urls))
    settings = Settings(data_dir=data_dir)
    t0 = time.perf_counter()
    first = ingest_flow(request, settings)
    t1 = time.perf_counter()
    second = ingest_flow(request, settings)
    t2 = time.perf_counter()
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
                "rss_workers_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
            }
        )
    )


def bare(n: int) -> float:
    """Pages/s of bare single-process trafilatura.extract (our settings) over the same pages."""
    import trafilatura

    pages = [page(i) for i in range(min(n, 300))]
    t0 = time.perf_counter()
    for body in pages:
        trafilatura.extract(body.decode("utf-8"), include_comments=False, fast=True, output_format="markdown")
    return len(pages) / (time.perf_counter() - t0)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="200,2000")
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--child", type=int)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.hosts, a.workers)
        return 0
    rows = []
    for n in [int(x) for x in a.sizes.split(",")]:
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                str(n),
                "--hosts",
                str(a.hosts),
                "--workers",
                str(a.workers),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return 1
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        result["bare_pps"] = bare(n)
        rows.append(result)
    head = f"{'N':>6} {'pipeline p/s':>13} {'bare p/s':>9} {'ratio':>6} {'re-run':>7} {'RSS MB':>7}"
    print(f"{head} {'workers MB':>10}  outcomes")
    for r in rows:
        pps = r["n"] / r["first_s"]
        print(
            f"{r['n']:>6} {pps:>13.1f} {r['bare_pps']:>9.1f} {pps / r['bare_pps']:>6.2f} "
            f"{r['rerun_s'] / r['first_s']:>7.1%} {r['rss_mb']:>7.0f} {r['rss_workers_mb']:>10.0f}  "
            f"first {r['first']} / re-run {r['rerun']}"
        )
    if len(rows) >= 2:
        print(f"peak RSS N={rows[-1]['n']} / N={rows[0]['n']}: {rows[-1]['rss_mb'] / rows[0]['rss_mb']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
