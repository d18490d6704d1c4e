"""OriginPools: a connection pool per origin, idle ones past the cap closed oldest first."""

from __future__ import annotations

import httpcore
import pytest

from flows.fetch.pools import OriginPools
from tests.flows.fetch.conftest import HOSTS
from tests.httpserver import LoopbackServer, Reply


def pools(idle: int) -> OriginPools:
    return OriginPools(lambda: httpcore.ConnectionPool(max_keepalive_connections=1), idle)


def request(url: str) -> httpcore.Request:
    host = httpcore.URL(url).host + b":" + str(httpcore.URL(url).port).encode()
    return httpcore.Request("GET", url, headers=[(b"Host", host)])


def get(origins: OriginPools, url: str) -> bytes:
    response = origins.handle_request(request(url))
    try:
        return b"".join(response.stream)  # type: ignore[arg-type]
    finally:
        response.stream.close()  # type: ignore[attr-defined]


def test_each_host_keeps_its_connection_within_the_cap(loopback: LoopbackServer) -> None:
    loopback.route("/p", Reply(body=b"hello"))
    origins = pools(idle=len(HOSTS))
    for _ in range(3):
        for host in HOSTS:
            assert get(origins, loopback.url("/p", host=host)) == b"hello"
    assert len({(hit.host, hit.peer) for hit in loopback.hits("/p")}) == len(HOSTS)
    origins.close()
    assert origins.origins() == []


def test_the_least_recently_used_idle_pool_goes_first(loopback: LoopbackServer) -> None:
    loopback.route("/p", Reply(body=b"hello"))
    origins = pools(idle=2)
    first, second, third = (loopback.url("/p", host=h) for h in HOSTS)
    get(origins, first)
    get(origins, second)
    get(origins, first)  # now `second` is the oldest
    get(origins, third)
    assert [host for _scheme, host, _port in origins.origins()] == [HOSTS[0].encode(), HOSTS[2].encode()]
    get(origins, second)  # its connection was closed: a new one
    peers = [hit.peer for hit in loopback.hits("/p", host=HOSTS[1])]
    assert len(peers) == 2 and peers[0] != peers[1]
    origins.close()


def test_a_pool_with_a_response_open_is_never_closed(loopback: LoopbackServer) -> None:
    loopback.route("/big", Reply(body=b"x" * 200_000))
    loopback.route("/p", Reply(body=b"hello"))
    origins = pools(idle=1)
    slow = origins.handle_request(request(loopback.url("/big", host=HOSTS[0])))
    get(origins, loopback.url("/p", host=HOSTS[1]))
    get(origins, loopback.url("/p", host=HOSTS[2]))
    assert (HOSTS[0].encode()) in [host for _s, host, _p in origins.origins()]
    assert len(b"".join(slow.stream)) == 200_000  # type: ignore[arg-type]  # still readable
    slow.stream.close()  # type: ignore[attr-defined]
    get(origins, loopback.url("/p", host=HOSTS[1]))
    assert [host for _s, host, _p in origins.origins()] == [HOSTS[1].encode()]
    origins.close()


def test_a_failed_request_gives_its_pool_back(loopback: LoopbackServer) -> None:
    loopback.route("/p", Reply(body=b"hello"))
    origins = pools(idle=0)
    with pytest.raises(httpcore.ConnectError):
        origins.handle_request(request("http://127.0.0.1:9/"))  # the discard port: refused
    get(origins, loopback.url("/p"))  # its sweep closes every pool with nothing in flight
    assert [port for _s, _h, port in origins.origins()] == [loopback.port]
    origins.close()
