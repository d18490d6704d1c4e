"""Prefect's per-task cost at 1,000 sources: one task per source vs one task per batch of 200.

usage: .venv/bin/python bench/prefect_overhead.py [--n 1000] [--batch 200]
Each source's work is a trivial function, so what is measured is Prefect: the flow's wall time,
and how long the ephemeral server keeps working after the flow returns (it records task runs from
events; measured as the time until a fresh trivial flow run completes).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="bench-prefect-"))
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "CRITICAL")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")

from prefect import flow, task
from prefect.cache_policies import NONE


def work(i: int) -> int:
    return i * 2


@task(cache_policy=NONE)
def one(i: int) -> int:
    return work(i)


@task(cache_policy=NONE)
def batch(items: list[int]) -> list[int]:
    return [work(i) for i in items]


@flow
def per_source(n: int) -> int:
    return sum(one(i) for i in range(n))


@flow
def per_batch(n: int, size: int) -> int:
    return sum(sum(batch(list(range(s, min(n, s + size))))) for s in range(0, n, size))


@flow
def ping() -> int:
    return 1


def timed(fn, *args) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    fn(*args)
    t1 = time.perf_counter()
    while True:  # queued behind the server's backlog of task-run events; it may answer 503 meanwhile
        try:
            ping()
            break
        except Exception as exc:  # noqa: BLE001 - any refusal means "still busy"
            print(f"  server busy ({type(exc).__name__}); retrying")
            time.sleep(2)
    return t1 - t0, time.perf_counter() - t1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=200)
    a = ap.parse_args()
    ping()  # start the ephemeral server outside the measurement
    rows = [
        ("one task per source", *timed(per_source, a.n)),
        (f"batches of {a.batch}", *timed(per_batch, a.n, a.batch)),
    ]
    print(f"{'layout':24} {'tasks':>6} {'flow s':>7} {'ms/source':>10} {'next run s':>11}")
    for (name, flow_s, after_s), tasks in zip(rows, (a.n, -(-a.n // a.batch)), strict=True):
        print(f"{name:24} {tasks:>6} {flow_s:>7.2f} {1000 * flow_s / a.n:>10.2f} {after_s:>11.2f}")


if __name__ == "__main__":
    main()
