"""Fetch benchmark: pages/s against the per-host politeness bound, and peak RSS at two sizes.

usage: .venv/bin/python bench/fetch.py [--hosts K] [--interval S] [--sizes 100,2000] [--no-archive]

A loopback server (this process) answers for K hosts, 127.0.0.2 ... 127.0.0.(K+1), with N pages
each (30 KB of HTML, every other one gzip-encoded). For each N a fresh child process fetches all
K*N pages through one Fetcher with 16 threads (8 requests in flight at most), archives each
into its own data directory (WARC + index), and reports pages/s, CPU per page and peak RSS.
The bound is K / interval: one request per host per interval. Targets: pages/s >= 90% of the
bound; peak RSS at the largest N at most 1.2 times that at the smallest (bodies stream to
disk; a run never holds them all). Exit 0 when both targets are met.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._temp import temp_dir  # noqa: E402
from tests.httpserver import LoopbackServer, Reply, Request  # noqa: E402

PAGE = (
    "<!DOCTYPE html><html><head><title>Incident {n}</title></head><body><h1>Incident {n}</h1>"
    + "<p>At 09:12 UTC the connection pool to the primary database was exhausted. " * 400
    + "</p></body></html>"
)


def page(request: Request) -> Reply:
    n = request.path.rsplit("=", 1)[-1]
    body = PAGE.format(n=n).encode()
    headers = {"Content-Type": "text/html; charset=utf-8"}
    if n.isdigit() and int(n) % 2:
        body = gzip.compress(body, 6)
        headers["Content-Encoding"] = "gzip"
    return Reply(body=body, headers=headers)


def child(args: argparse.Namespace) -> None:
    from flows.archive import Archive
    from flows.fetch import Fetcher
    from flows.settings import Settings

    hosts = args.host_list.split(",")
    data = temp_dir("bench-fetch-")
    settings = Settings(
        data_dir=data, allow_hosts=args.host_list, min_interval=args.interval, concurrency=8, read_timeout=10
    )
    archive = Archive(settings) if args.archive else None
    # Workers pull URLs from one generator: nothing per page is kept, so memory cannot grow with N.
    urls = (f"http://{host}:{args.port}/p?n={n}" for n in range(args.pages) for host in hosts)
    lock = threading.Lock()
    done = [0, 0]  # pages, wire bytes

    def worker() -> None:
        while True:
            with lock:
                url = next(urls, None)
            if url is None:
                return
            result = fetcher.fetch(url)
            try:
                if archive is not None:
                    archive.record_fetch(result)
            finally:
                result.discard()
            with lock:
                done[0] += 1
                done[1] += result.body_size

    with Fetcher(settings) as fetcher:
        fetcher.fetch(next(urls)).discard()  # robots.txt and a connection for the first host, untimed
        cpu0 = time.process_time()
        started = time.monotonic()
        threads = [threading.Thread(target=worker) for _ in range(args.threads)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
        cpu = time.process_time() - cpu0
    count, wire = done
    if archive is not None:
        archive.close()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    stats = {"pages": count, "seconds": elapsed, "cpu": cpu, "wire_bytes": wire, "peak_rss_kib": peak_kib}
    print(json.dumps(stats))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--sizes", default="100,2000")
    parser.add_argument("--no-archive", dest="archive", action="store_false")
    parser.add_argument("--threads", type=int, default=16, help="fetch+archive threads (cap: 8 in flight)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--pages", type=int, default=100, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--host-list", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return 0

    hosts = [f"127.0.0.{i + 2}" for i in range(args.hosts)]
    bound = args.hosts / args.interval
    rows = []
    with LoopbackServer(hosts) as server:
        server.route("/p", page)
        for size in (int(s) for s in args.sizes.split(",")):
            command = [
                sys.executable, __file__, "--child", "--pages", str(size), "--port", str(server.port),
                "--host-list", ",".join(hosts), "--interval", str(args.interval),
                "--threads", str(args.threads),
            ]  # fmt: skip
            if not args.archive:
                command.append("--no-archive")
            out = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
            if out.returncode != 0:
                sys.stderr.write(out.stderr)
                return 2
            stats = json.loads(out.stdout.strip().splitlines()[-1])
            rate = stats["pages"] / stats["seconds"]
            cpu_ms = 1000 * stats["cpu"] / stats["pages"]
            rss = stats["peak_rss_kib"] / 1024
            rows.append((size, stats["pages"], rate, rss, stats["wire_bytes"], cpu_ms))
    archived = "on" if args.archive else "off"
    print(f"hosts K={args.hosts}, interval={args.interval}s, bound K/interval={bound:.1f} pages/s")
    print(f"archive={archived}, threads={args.threads}")
    head = f"{'N/host':>7} {'pages':>6} {'pages/s':>8} {'of bound':>8} {'peak RSS MiB':>12} {'MiB':>6}"
    print(f"{head} {'CPU ms/page':>11}")
    for size, pages, rate, rss, wire, cpu_ms in rows:
        cells = f"{size:>7} {pages:>6} {rate:>8.1f} {rate / bound:>8.1%} {rss:>12.1f} {wire / 2**20:>6.1f}"
        print(f"{cells} {cpu_ms:>11.2f}")
    ratio = rows[-1][3] / rows[0][3]
    worst = min(r[2] for r in rows) / bound
    print(f"RSS ratio largest/smallest N: {ratio:.2f} (target <= 1.2)")
    print(f"worst rate: {worst:.1%} of the bound (target >= 90%)")
    return 0 if ratio <= 1.2 and worst >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
