"""Per-host politeness across threads: one in flight per host, an interval, a global cap."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from flows.fetch import Fetcher
from flows.fetch.client import _NoCookies
from flows.fetch.politeness import interleave
from tests.flows.fetch.conftest import HOSTS, fast_settings
from tests.httpserver import LoopbackServer, Reply, Request


class InFlight:
    """A route that takes `hold` seconds and records the peak of concurrent requests."""

    def __init__(self, hold: float) -> None:
        self.hold = hold
        self.now: dict[str, int] = {}
        self.total = 0
        self.peak: dict[str, int] = {}
        self.peak_total = 0
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        with self._lock:
            self.now[request.host] = self.now.get(request.host, 0) + 1
            self.total += 1
            self.peak[request.host] = max(self.peak.get(request.host, 0), self.now[request.host])
            self.peak_total = max(self.peak_total, self.total)
        time.sleep(self.hold)
        with self._lock:
            self.now[request.host] -= 1
            self.total -= 1
        return Reply(body=b"<p>ok</p>", headers={"Content-Type": "text/html"})


def test_one_request_in_flight_per_host_across_threads(data_dir: Path, loopback: LoopbackServer) -> None:
    route = InFlight(hold=0.05)
    loopback.route("/p", route)
    urls = [loopback.url(f"/p?n={i}", host=HOSTS[i % 3]) for i in range(18)]
    with Fetcher(fast_settings(data_dir, concurrency=8)) as fetcher, ThreadPoolExecutor(8) as pool:
        results = list(pool.map(fetcher.fetch, urls))
    assert all(r.status == 200 for r in results)
    assert route.peak == {host: 1 for host in HOSTS}
    assert route.peak_total >= 2  # the hosts did run in parallel, so the test could have failed


def test_global_concurrency_cap(data_dir: Path, loopback: LoopbackServer) -> None:
    route = InFlight(hold=0.1)
    loopback.route("/p", route)
    urls = [loopback.url(f"/p?n={i}", host=HOSTS[i % 3]) for i in range(9)]
    with Fetcher(fast_settings(data_dir, concurrency=2)) as fetcher, ThreadPoolExecutor(6) as pool:
        list(pool.map(fetcher.fetch, urls))
    assert route.peak_total == 2


def test_min_interval_between_requests_to_one_host(data_dir: Path, loopback: LoopbackServer) -> None:
    loopback.route("/p", Reply(body=b"<p>ok</p>", headers={"Content-Type": "text/html"}))
    urls = [loopback.url(f"/p?n={i}") for i in range(4)]
    with Fetcher(fast_settings(data_dir, min_interval=0.2)) as fetcher, ThreadPoolExecutor(4) as pool:
        list(pool.map(fetcher.fetch, urls))
    times = sorted(hit.at for hit in loopback.hits() if hit.path.startswith("/p"))
    assert len(times) == 4
    assert min(b - a for a, b in zip(times, times[1:], strict=False)) >= 0.18


def test_user_agent_names_project_version_and_contact(data_dir: Path, loopback: LoopbackServer) -> None:
    loopback.route("/p", Reply(body=b"<p>ok</p>", headers={"Content-Type": "text/html"}))
    settings = fast_settings(data_dir, user_agent_contact="https://example.org/contact")
    with Fetcher(settings) as fetcher:
        fetcher.fetch(loopback.url("/p"))
    agents = {hit.headers["User-Agent"] for hit in loopback.hits()}
    assert agents == {"incident-ingest/0.1.0 (+https://example.org/contact)"}


def test_cookies_are_not_kept_between_fetches(data_dir: Path, loopback: LoopbackServer) -> None:
    page = {"Content-Type": "text/html", "Set-Cookie": "session=abc; Path=/"}
    loopback.route("/p", Reply(body=b"<p>ok</p>", headers=page))
    with Fetcher(fast_settings(data_dir)) as fetcher:
        fetcher.fetch(loopback.url("/p?n=1"))
        fetcher.fetch(loopback.url("/p?n=2"))
        jar = fetcher._client.cookies
    assert all("Cookie" not in hit.headers for hit in loopback.hits())
    # The jar that skips httpx's cookie parsing is the one in use (a renamed httpx attribute fails here).
    assert isinstance(jar, _NoCookies) and len(jar) == 0


def test_interleave_takes_hosts_in_turn_keeping_each_hosts_order() -> None:
    keys = ["a", "a", "a", "b", None, "b"]
    assert interleave(keys) == [0, 3, 4, 1, 5, 2]
    assert interleave([]) == []


@given(st.lists(st.sampled_from(["a", "b", "c", None]), max_size=30))
def test_interleave_is_a_round_robin_permutation(keys: list[str | None]) -> None:
    order = interleave(keys)
    assert sorted(order) == list(range(len(keys)))
    for key in set(keys):
        mine = [i for i in order if keys[i] == key]
        assert mine == sorted(mine)  # each host's sources keep their order
    # a host comes round again only after every host with sources left has had its turn
    left = {key: keys.count(key) for key in set(keys)}
    turn: set[str | None] = set()
    for i in order:
        if keys[i] in turn:
            assert turn >= {k for k, n in left.items() if n}
            turn = set()
        turn.add(keys[i])
        left[keys[i]] -= 1
