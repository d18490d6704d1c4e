"""Review app benchmark: page and decision latency over a queue of 2,000 drafts.

usage: python bench/review.py [--drafts 2000] [--records 300] [--reviewers 20] [--per-reviewer 10] [--dir DIR]
       python bench/review.py --stores-only [--fsync-ms 5.5] ...

Builds a data directory: eleven pages we wrote (tests/data) archived in raw/ and drafted by the
real drafter, cloned to N queued drafts (distinct ids and URLs; they share those eleven snapshots),
and R approved records for the related-records ranking. Serves it with `incidents review serve`
in a child process on a free loopback port, then measures, from this process over HTTP:
  - the queue page (GET /queue, the default "pending" view of all N drafts), 60 requests;
  - a draft page (GET /drafts/ID, 60 different drafts; evidence, extracted text, suggestions);
  - an approval through the API, one reviewer, 40 drafts one after the other;
  - 20 reviewers approving different drafts at once (threads, 10 drafts each).
Prints p50/p95 of each, and checks that every decision is in records/audit.jsonl exactly once.
Targets: queue and draft pages p95 < 150 ms; approvals p95 < 250 ms with 20 reviewers.
Exit 0 when all are met. The server is stopped at the end (and on any error).
--dir puts the data directory elsewhere (e.g. /dev/shm): an approval makes seven fsyncs (its
intent, the journal folder, the record, its folder, the draft, its folder, the audit line), so on a
slow disk approvals measure the disk.
--stores-only measures the 20 reviewers' approvals without the server: threads of this process
call Reviews.approve on the same data directory (the stores, their locks and fsyncs, no HTTP);
--fsync-ms adds that many ms after each fsync, as a slow disk would (the GIL is released, as
in a real fsync), to see what the locks do when fsyncs are slow whatever this disk does today.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402


def build(data: Path, n_drafts: int, n_records: int) -> list[str]:
    from flows.store.queue import QueueStore, draft_text
    from flows.store.records import RecordStore
    from schema.draft import draft_id_for
    from schema.record import Record
    from tests.flows.web.drafts import build_queue

    seeds = build_queue(data)
    queue = QueueStore(data / "records" / "queue")
    for path in queue.folder.glob("d-*.json"):
        path.unlink()
    ids = []
    for i in range(n_drafts):
        seed = seeds[i % len(seeds)]
        url = f"{seed.source.url}?copy={i}"
        draft_id = draft_id_for(url, f"sha256:{i:064x}")
        history = [seed.history[0].model_copy(update={"at": f"2026-03-{1 + i % 28:02d}T09:{i % 60:02d}:00Z"})]
        source = seed.source.model_copy(update={"url": url})
        clone = seed.model_copy(update={"draft_id": draft_id, "source": source, "history": history})
        queue.add_text(draft_id, draft_text(clone))
        ids.append(draft_id)
    store = RecordStore(data / "records")
    for i in range(n_records):
        seed = seeds[i % len(seeds)]
        body = seed.record.model_dump(mode="json")
        body["org"] = body["org"] or "Acme"
        body["org_slug"] = body["org_slug"] or "acme"
        body["title"] = body["title"] or {"en": "Incident"}
        store.create(lambda rid, body=body: Record.model_validate(body | {"id": rid}))
    return ids


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def timed(call) -> float:
    start = time.perf_counter()
    response = call()
    elapsed = (time.perf_counter() - start) * 1000
    if response.status_code != 200:
        raise SystemExit(f"bench: {response.request.method} {response.request.url} -> {response.status_code}")
    return elapsed


def line(name: str, values: list[float], target: float | None) -> bool:
    p50, p95 = statistics.median(values), pct(values, 95)
    ok = target is None or p95 < target
    goal = f"  (target p95 < {target:.0f} ms: {'met' if ok else 'NOT met'})" if target else ""
    print(f"{name:<44} n={len(values):>4}  p50 {p50:7.1f} ms  p95 {p95:7.1f} ms{goal}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drafts", type=int, default=2000)
    parser.add_argument("--records", type=int, default=300)
    parser.add_argument("--reviewers", type=int, default=20)
    parser.add_argument("--per-reviewer", type=int, default=10)
    parser.add_argument("--dir", type=Path, default=None, help="where to make the data directory")
    parser.add_argument("--stores-only", action="store_true", help="approvals in this process, no server")
    parser.add_argument("--fsync-ms", type=float, default=0.0, help="with --stores-only: a slower fsync")
    args = parser.parse_args()

    data = Path(tempfile.mkdtemp(prefix="bench-review-", dir=args.dir))
    t0 = time.perf_counter()
    ids = build(data, args.drafts, args.records)
    print(f"data: {len(ids)} drafts, {args.records} records in {data} ({time.perf_counter() - t0:.1f} s)")

    if args.stores_only:
        try:
            return stores_only(data, ids, args)
        finally:
            shutil.rmtree(data, ignore_errors=True)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("INCIDENTS_")}
    env["PYTHONPATH"] = str(ROOT)
    server = subprocess.Popen(
        [sys.executable, "-m", "flows", "review", "serve", "--port", str(port), "--data-dir", str(data)],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        return serve_and_measure(server, base, ids, data, args)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(data, ignore_errors=True)


def stores_only(data: Path, ids: list[str], args: argparse.Namespace) -> int:
    """20 reviewers approving different drafts, as threads calling Reviews.approve (no HTTP)."""
    from flows.review import Reviews
    from flows.settings import Settings

    if args.fsync_ms:
        real_fsync = os.fsync

        def slow_fsync(fd: int) -> None:
            real_fsync(fd)
            time.sleep(args.fsync_ms / 1000)

        os.fsync = slow_fsync
    reviews = Reviews(Settings(data_dir=data))
    batches = [ids[r * args.per_reviewer : (r + 1) * args.per_reviewer] for r in range(args.reviewers)]
    times: list[float] = []
    barrier = threading.Barrier(args.reviewers)

    def reviewer(r: int) -> None:
        barrier.wait()
        for draft_id in batches[r]:
            t = time.perf_counter()
            reviews.approve(draft_id, reviewer=f"rev-{r}", expected_version=1)
            times.append((time.perf_counter() - t) * 1000)

    cpu, wall = time.process_time(), time.perf_counter()
    threads = [threading.Thread(target=reviewer, args=(r,)) for r in range(args.reviewers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    slow = f", fsync + {args.fsync_ms} ms" if args.fsync_ms else ""
    line(f"stores only: {args.reviewers} reviewers at once{slow}", times, None)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"  {len(times)} approvals in {wall:.1f} s ({len(times) / wall:.1f}/s); "
        f"CPU {cpu * 1000 / max(1, len(times)):.1f} ms an approval; load average {load}"
    )
    decided = sum(len(b) for b in batches)
    audit = [json.loads(x) for x in (data / "records" / "audit.jsonl").read_text().splitlines()]
    record_ids = {e["record_id"] for e in audit}
    once = len(audit) == decided == len({e["draft_id"] for e in audit}) == len(record_ids)
    print(f"audit: {len(audit)} lines for {decided} decisions, distinct drafts and records: {once}")
    return 0 if once and len(times) == decided else 1


def serve_and_measure(
    server: subprocess.Popen[bytes], base: str, ids: list[str], data: Path, args: argparse.Namespace
) -> int:
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{base}/api/records?q=none", timeout=2)
            break
        except httpx.TransportError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("bench: the server did not start") from None
            time.sleep(0.1)
    return measure(base, ids, data, args, server.pid)


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of process `pid` (all its threads), from /proc; None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(base: str, ids: list[str], data: Path, args: argparse.Namespace, pid: int) -> int:
    ok = True
    with httpx.Client(base_url=base, timeout=30) as http:
        for _ in range(5):  # warm: first reads of the queue files, templates, the documents
            http.get("/queue")
            http.get(f"/drafts/{ids[0]}")
        ok &= line(
            "queue page (GET /queue, all pending)",
            [timed(lambda: http.get("/queue")) for _ in range(60)],
            150,
        )
        pages = [timed(lambda i=i: http.get(f"/drafts/{ids[100 + i]}")) for i in range(60)]
        ok &= line("draft page (GET /drafts/ID)", pages, 150)
        single = [
            timed(
                lambda i=i: http.post(
                    f"/api/drafts/{ids[i]}/approve", json={"version": 1}, headers={"X-Reviewer": "solo"}
                )
            )
            for i in range(40)
        ]
        line("approval, one reviewer (POST .../approve)", single, None)

    start = 200
    batches = [
        ids[start + r * args.per_reviewer : start + (r + 1) * args.per_reviewer]
        for r in range(args.reviewers)
    ]
    times: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(args.reviewers)

    def reviewer(r: int) -> None:
        with httpx.Client(base_url=base, timeout=60) as http:
            barrier.wait()
            for draft_id in batches[r]:
                t = time.perf_counter()
                resp = http.post(
                    f"/api/drafts/{draft_id}/approve", json={"version": 1}, headers={"X-Reviewer": f"rev-{r}"}
                )
                with lock:
                    times.append((time.perf_counter() - t) * 1000)
                    if resp.status_code != 200:
                        failures.append(f"{draft_id}: {resp.status_code}")

    cpu = cpu_seconds(pid)
    wall = time.perf_counter()
    threads = [threading.Thread(target=reviewer, args=(r,)) for r in range(args.reviewers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    wall = time.perf_counter() - wall
    ok &= line(f"approval, {args.reviewers} reviewers at once", times, 250)
    print(f"  {len(times)} approvals in {wall:.1f} s ({len(times) / wall:.1f}/s); failures: {len(failures)}")
    after = cpu_seconds(pid)
    if cpu is not None and after is not None and times:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"  server CPU {(after - cpu) * 1000 / len(times):.1f} ms an approval; load average {load}")

    decided = 40 + sum(len(b) for b in batches)
    audit = [json.loads(x) for x in (data / "records" / "audit.jsonl").read_text().splitlines()]
    counts = Counter(e["draft_id"] for e in audit)
    record_ids = [e["record_id"] for e in audit]
    once = len(audit) == decided and set(counts.values()) == {1} and len(set(record_ids)) == decided
    print(
        f"audit: {len(audit)} lines for {decided} decisions, each draft once: {set(counts.values()) == {1}}, "
        f"distinct record ids: {len(set(record_ids))}  ({'met' if once else 'NOT met'})"
    )
    return 0 if ok and once and not failures else 1


if __name__ == "__main__":
    raise SystemExit(main())
