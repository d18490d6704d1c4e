"""Bad input answered before Prefect starts: the time to the answer, and its exit code.

usage: .venv/bin/python bench/preflight.py [--repeat 3]

Runs `incidents ingest` (the installed command, a fresh process each time, as a curator would)
on inputs that can be checked without Prefect: an empty file, a binary file, an unreadable file,
`--feed ftp://...`, a sources.toml with an ftp feed, a loopback and a private address without
INCIDENTS_ALLOW_HOSTS, and a bad setting. Prints each case's best and worst wall time (the
target is under 2 s; Prefect's start alone is 7-10 s), the CPU time of the best run (user +
system: what a loaded machine cannot inflate), its exit code and its one line. Nothing is
fetched: every case stops before any network traffic.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INCIDENTS = str(Path(sys.executable).with_name("incidents"))


def cases(work: Path) -> list[tuple[str, list[str], dict[str, str]]]:
    empty = work / "empty.html"
    empty.write_bytes(b"")
    binary = work / "photo.html"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 64)
    locked = work / "locked.html"
    locked.write_text("<p>outage</p>")
    locked.chmod(0)
    sources = work / "sources.toml"
    sources.write_text('[[source]]\nname = "mirror"\nfeed = "ftp://ftp.example.org/feed.xml"\n')
    out = [
        ("empty file", [str(empty)], {}),
        ("binary file", [str(binary)], {}),
        ("--feed ftp://", ["--feed", "ftp://ftp.example.org/feed.xml"], {}),
        ("sources.toml ftp feed", ["--sources", str(sources)], {}),
        ("loopback URL", ["http://127.0.0.1:8080/postmortem"], {}),
        ("private URL", ["http://10.0.0.7/postmortem"], {}),
        ("bad setting", ["https://blog.example.org/post"], {"INCIDENTS_CONCURRENCY": "-1"}),
    ]
    if not os.access(locked, os.R_OK):  # as root every file is readable: no such case then
        out.insert(2, ("unreadable file", [str(locked)], {}))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-preflight-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("INCIDENTS_")}
    env["INCIDENTS_DATA_DIR"] = str(work / "data")
    slow = 0
    try:
        print(f"{'case':<24} {'best s':>7} {'worst s':>8} {'cpu s':>6} {'exit':>5}  line")
        for name, argv, extra in cases(work):
            times: list[tuple[float, float]] = []
            done = None
            for _ in range(args.repeat):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                done = subprocess.run(
                    [INCIDENTS, "ingest", *argv],
                    capture_output=True,
                    text=True,
                    env={**env, **extra},
                    timeout=300,
                    check=False,
                )
                wall = time.perf_counter() - started
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                times.append((wall, cpu))
            assert done is not None
            line = (done.stderr.strip() or done.stdout.strip()).splitlines()[0][:100]
            best, worst = min(times), max(times)
            slow += best[0] >= 2.0
            print(f"{name:<24} {best[0]:>7.2f} {worst[0]:>8.2f} {best[1]:>6.2f} {done.returncode:>5}  {line}")
    finally:
        for path in work.iterdir():
            path.chmod(0o644) if path.is_file() else None
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("every case answered in under 2 s" if not slow else f"{slow} case(s) took 2 s or more at best")
    return 0 if not slow else 1


if __name__ == "__main__":
    sys.exit(main())
