"""Replay check: do pywb's replays of our WARCs and WACZ show the pages? (not run in CI)

usage: python bench/replay.py [--pywb-venv DIR] [--pages N] [--keep]

A loopback blog (127.0.0.2) serves N posts: plain, gzip-encoded, chunked, with an ETag (its
refresh is a 304), one that changes before the refresh, one reached through two redirects (a 302
to a 301 to the post), and a saved copy of one given with `--url`. The bench ingests them (the
real ingest engine, into a temporary data directory), refreshes every URL (`archive refresh`),
ingests again (the changed post must be drafted `changed`), exports a WACZ, then stops the blog
and loads the WARC files into one pywb collection and the WACZ into another. For each URL it
prints what pywb replays at the first capture's time and at the latest (`id_`, the archived
response as it was): status and Content-Type. Every page should replay as text/html 200, and
every redirect hop as its 3xx.
Then, for each URL that was requested (not only the final ones), it follows pywb's replay hop by
hop, as a browser would: a requested URL that redirected must replay as the same redirects,
then the page.

pywb 2.10 pins old gevent and jinja versions, so it gets a virtualenv of its own, made on first
use (`pip install pywb==2.10.*`; default ~/.cache/incident-ingest/pywb-venv).
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.httpserver import LoopbackServer, Reply, Request  # noqa: E402

HOST = "127.0.0.2"
POST = (
    "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Incident {n}: database pool exhausted"
    "</title></head><body><article><h1>Incident {n}: database pool exhausted</h1>"
    "<h2>Summary</h2><p>On 2024-03-0{n} at 09:12 UTC the connection pool to the primary database "
    "was exhausted and checkout failed for 47 minutes.</p><h2>Root cause</h2><p>A deploy doubled "
    "the workers without raising the pool size.{extra}</p><h2>Timeline</h2><ul><li>09:12 alerts"
    "</li><li>09:59 resolved</li></ul></article></body></html>"
)


def ensure_pywb(venv: Path) -> Path:
    bin_dir = venv / "bin"
    if not (bin_dir / "wayback").exists():
        print(f"installing pywb 2.10 into {venv} (first run only)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(bin_dir / "pip"), "install", "-q", "pywb==2.10.*"], check=True)
    return bin_dir


def blog(server: LoopbackServer, posts: int) -> tuple[list[str], dict[str, str]]:
    """Routes for the blog; returns the post URLs to ingest and mutable page state."""
    state = {"changed": ""}

    def post(request: Request) -> Reply:
        n = int(request.path.rsplit("-", 1)[-1])
        extra = state["changed"] if n == 4 else ""
        body = POST.format(n=n, extra=extra).encode()
        headers = {"Content-Type": "text/html; charset=utf-8"}
        if n in (3, 4):  # conditional: an ETag of the content; the same one again gets a 304
            etag = f'"post-{n}-{len(body)}"'
            headers["ETag"] = etag
            if request.headers.get("If-None-Match") == etag:
                return Reply(304, headers={"ETag": etag})
        if n == 1:
            body, headers["Content-Encoding"] = gzip.compress(body), "gzip"
        return Reply(body=body, headers=headers, chunked=n == 2)

    server.route(
        "/robots.txt", Reply(body=b"User-agent: *\nAllow: /\n", headers={"Content-Type": "text/plain"})
    )
    for n in range(1, posts + 1):
        server.route(f"/posts/incident-{n}", post)
    server.route("/older/incident-5", Reply(302, headers={"Location": "/old/incident-5"}))
    server.route("/old/incident-5", Reply(301, headers={"Location": server.url("/posts/incident-5", HOST)}))
    urls = [server.url(f"/posts/incident-{n}", HOST) for n in range(1, posts + 1) if n != 5]
    urls.append(server.url("/older/incident-5", HOST))
    return urls, state


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def replayed(port: int, coll: str, timestamp: str, url: str) -> str:
    """`status type` of what pywb replays; `(not the page)` when the body is not the post's."""
    opener = urllib.request.build_opener(_NoRedirects)  # a redirect hop is shown as its 3xx
    try:
        with opener.open(f"http://127.0.0.1:{port}/{coll}/{timestamp}id_/{url}", timeout=30) as r:
            body = r.read()
            if r.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            seen = f"{r.status} {(r.headers.get('Content-Type') or '-').split(';')[0]}"
            return seen if b"database pool exhausted" in body else f"{seen} (not the page)"
    except urllib.error.HTTPError as exc:
        return f"{exc.code} {(exc.headers.get('Content-Type') or '-').split(';')[0]}"


def followed(port: int, coll: str, url: str) -> tuple[list[str], bool]:
    """What pywb replays for `url` at its latest capture, hop by hop: `status type` of each
    response along the way, and whether the last one is the post."""
    opener = urllib.request.build_opener(_NoRedirects)
    prefix = f"http://127.0.0.1:{port}/{coll}/"
    chain: list[str] = []
    for _ in range(6):
        try:
            with opener.open(f"{prefix}2id_/{url}", timeout=30) as r:
                body = r.read()
                if r.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                chain.append(f"{r.status} {(r.headers.get('Content-Type') or '-').split(';')[0]}")
                return chain, b"database pool exhausted" in body
        except urllib.error.HTTPError as exc:
            chain.append(str(exc.code))
            location = exc.headers.get("Location")
            if not 300 <= exc.code < 400 or not location:
                return chain, False
            # pywb may hand the Location back rewritten into its own space, or as archived
            if location.startswith(prefix):
                location = location[len(prefix) :].split("/", 1)[1]
            elif location.startswith("/" + coll + "/"):
                location = location[len(coll) + 2 :].split("/", 1)[1]
            url = urllib.parse.urljoin(url, location)
    return chain, False


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_venv = Path.home() / ".cache" / "incident-ingest" / "pywb-venv"
    parser.add_argument("--pywb-venv", type=Path, default=Path(os.environ.get("PYWB_VENV", default_venv)))
    parser.add_argument("--pages", type=int, default=6)
    parser.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    args = parser.parse_args()
    pywb = ensure_pywb(args.pywb_venv)

    from flows.archive import Archive
    from flows.archive.refresh import refresh
    from flows.archive.wacz import export_wacz
    from flows.fetch import Fetcher
    from flows.ingest import ingest_jobs, job_for
    from flows.settings import Settings

    work = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    settings = Settings(data_dir=work / "data", allow_hosts=HOST, min_interval=0.0)
    with LoopbackServer((HOST,)) as server:
        urls, state = blog(server, args.pages)
        saved = work / "saved-incident-2.html"
        saved.write_text(POST.format(n=2, extra=" (saved copy)"), encoding="utf-8")
        saved_url = server.url("/saved/incident-2", HOST)
        first = ingest_jobs(
            [job_for(u) for u in urls] + [job_for(str(saved), url=saved_url)], settings=settings
        )
        print("first ingest:", ", ".join(f"{o.status}" for o in first))
        state["changed"] = " The pool is now sized from the worker count."
        time.sleep(1.1)  # a new second: the refresh's captures sort after the first ones
        with Archive(settings) as archive, Fetcher(settings) as fetcher:
            refreshed = list(refresh(archive, fetcher, urls))
        print("refresh:", ", ".join(f"{r.result}" for r in refreshed))
        second = ingest_jobs([job_for(u) for u in urls], settings=settings)
        print("second ingest:", ", ".join(f"{o.status}" for o in second))
    with Archive(settings) as archive:
        captures = archive.captures()
        wacz = work / "blog.wacz"
        export_wacz(archive, wacz)
        warcs = [archive.raw / row["name"] for row in archive.index.files()]

    site = work / "pywb"
    site.mkdir()
    run = {"cwd": site, "check": True, "capture_output": True}
    subprocess.run([str(pywb / "wb-manager"), "init", "warcs"], **run)  # type: ignore[call-overload]
    subprocess.run([str(pywb / "wb-manager"), "add", "warcs", *map(str, warcs)], **run)  # type: ignore[call-overload]
    subprocess.run([str(pywb / "wb-manager"), "init", "wacz"], **run)  # type: ignore[call-overload]
    # --unpack-wacz: the WACZ's WARCs and its own CDXJ index (py-wacz's) go into the collection.
    subprocess.run([str(pywb / "wb-manager"), "add", "--unpack-wacz", "wacz", str(wacz)], **run)  # type: ignore[call-overload]
    port = free_port()
    wayback = subprocess.Popen(
        [str(pywb / "wayback"), "--bind", "127.0.0.1", "-p", str(port)],
        cwd=site,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    bad = 0
    try:
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.2)
        by_url: dict[str, list[str]] = {}
        for c in captures:
            if c.url.startswith("http"):
                by_url.setdefault(c.url, []).append(f"{c.kind}@{c.captured_at[11:19]}")
        print(
            f"\n{'url':<48} {'captures (kind@time)':<44} {'pywb WARCs: first | latest':<30} pywb WACZ: latest"
        )
        for url, kinds in by_url.items():
            stamp = next(c.captured_at for c in captures if c.url == url)
            ts = "".join(ch for ch in stamp if ch.isdigit())[:14]
            seen = [replayed(port, "warcs", ts, url), replayed(port, "warcs", "2", url)]
            seen.append(replayed(port, "wacz", "2", url))
            path = url.split(str(server.port), 1)[-1]
            print(f"{path:<48} {' '.join(kinds):<44} {seen[0] + ' | ' + seen[1]:<30} {seen[2]}")
            if path.startswith("/old"):  # a redirect hop: replayed as the redirect it was
                bad += sum(not s.startswith(("301", "302")) for s in seen)
            else:
                bad += sum(s != "200 text/html" for s in seen)
        print(f"\n{'requested url':<48} {'pywb WARCs: latest, hop by hop':<34} pywb WACZ")
        for url in urls:
            path = url.split(str(server.port), 1)[-1]
            shown = []
            for coll in ("warcs", "wacz"):
                chain, landed = followed(port, coll, url)
                shown.append(" -> ".join(chain) + ("" if landed else " (not the page)"))
                bad += not landed
            print(f"{path:<48} {shown[0]:<34} {shown[1]}")
    finally:
        wayback.terminate()
        wayback.wait(timeout=30)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")
    print(
        f"\n{len(by_url)} URLs, {len(captures)} captures, {len(warcs)} WARC files: "
        + (
            "every page replays as text/html 200, every requested URL through its redirects to the page"
            if not bad
            else f"{bad} replays were not what was archived"
        )
    )
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
