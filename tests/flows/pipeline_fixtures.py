"""A loopback blog for pipeline tests: posts in three languages, non-postmortems, a feed, a sitemap."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from tests.conftest import DATA
from tests.httpserver import LoopbackServer, Reply

PAGES = DATA / "pipeline"
HTML = {"Content-Type": "text/html; charset=utf-8"}
POSTS = {
    "/posts/queue-backlog.html": ("en-queue-outage.html", "Incident report: message queue backlog"),
    "/posts/db-failover.html": ("ko-db-failover.html", "데이터베이스 장애 회고: 페일오버 지연"),
    "/posts/cdn-cache.html": ("ja-cdn-cache.html", "画像配信障害の報告とお詫び"),
    "/posts/tidewater-4-2.html": ("release-notes.html", "Tidewater 4.2 is now available"),
    "/posts/join-us.html": ("hiring.html", "Join us: Senior Site Reliability Engineer"),
}
POSTMORTEMS = ["/posts/queue-backlog.html", "/posts/db-failover.html", "/posts/cdn-cache.html"]


def env_for(data_dir: Path) -> dict[str, str]:
    """INCIDENTS_* for a run against the loopback blog: loopback allowed by name, no waiting."""
    return {
        "INCIDENTS_DATA_DIR": str(data_dir),
        "INCIDENTS_ALLOW_HOSTS": "127.0.0.1,127.0.0.2,127.0.0.3",
        "INCIDENTS_MIN_INTERVAL": "0",
        "INCIDENTS_READ_TIMEOUT": "2",
        "INCIDENTS_TOTAL_TIMEOUT": "8",
        "INCIDENTS_MAX_RETRIES": "1",
        "INCIDENTS_RETRY_BACKOFF": "0.01",
    }


def process_env(data_dir: Path) -> dict[str, str]:
    """This process's environment for an `incidents` (or `prefect`) subprocess: no INCIDENTS_*
    or Prefect API of the caller's, the loopback blog's settings (env_for) instead."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INCIDENTS_", "PREFECT_API"))}
    env.update(env_for(data_dir))
    return env


def rss(server: LoopbackServer, paths: list[str], host: str = "127.0.0.1") -> bytes:
    titles = {p: POSTS[p][1] if p in POSTS else p for p in paths}
    items = "".join(
        f"<item><title>{titles[p]}</title><link>{server.url(p, host=host)}</link></item>" for p in paths
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Blog</title>'
        f"<link>{server.url('/', host=host)}</link>{items}</channel></rss>"
    ).encode()


def serve_blog(server: LoopbackServer, host: str | None = None) -> None:
    """Every post, a slow page, a broken (404) link, an RSS feed and a gzipped sitemap index."""
    for path, (name, _) in POSTS.items():
        server.route(path, Reply(body=(PAGES / name).read_bytes(), headers=HTML), host=host)
    server.route(
        "/posts/slow-outage.html", Reply(body=b"<html>late</html>", headers=HTML, delay=5), host=host
    )
    everything = [*POSTS, "/posts/missing-outage.html", "/posts/slow-outage.html"]
    h = host or "127.0.0.1"
    server.route(
        "/feed.xml",
        Reply(body=rss(server, everything, h), headers={"Content-Type": "application/rss+xml"}),
        host=host,
    )
    urlset = "".join(f"<url><loc>{server.url(p, host=h)}</loc></url>" for p in POSTMORTEMS)
    child = gzip.compress(
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urlset}</urlset>'.encode()
    )
    server.route(
        "/sitemap-posts.xml.gz", Reply(body=child, headers={"Content-Type": "application/gzip"}), host=host
    )
    index = (
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{server.url('/sitemap-posts.xml.gz', host=h)}</loc></sitemap></sitemapindex>"
    )
    server.route(
        "/sitemap.xml", Reply(body=index.encode(), headers={"Content-Type": "application/xml"}), host=host
    )
