"""The address guard refuses before connecting; allowed names and ranges get through."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from flows.fetch import AddressRefused, Fetcher, SourceGone
from flows.fetch.client import _GuardedTransport
from flows.fetch.guard import AddressGuard, GuardedBackend, QuietSocket
from tests.flows.fetch.conftest import fast_settings
from tests.httpserver import LoopbackServer, Reply

HTML = {"Content-Type": "text/html"}


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every address the process connects to (the real call still happens)."""
    seen: list[tuple[str, int]] = []
    real = socket.create_connection

    def spy(address, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append((str(address[0]), int(address[1])))
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", spy)
    return seen


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.0.1", "private"),
        ("169.254.169.254", "link-local"),
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("240.0.0.1", "reserved"),
        ("::1", "loopback"),
        ("fe80::1", "link-local"),
        ("::ffff:127.0.0.1", "loopback"),
    ],
)
def test_refused_addresses(address: str, why: str) -> None:
    with pytest.raises(AddressRefused, match=why):
        AddressGuard("").checked_addresses(address, 80)


def test_allow_list_takes_names_ips_and_ranges() -> None:
    guard = AddressGuard("intranet.test, 127.0.0.2, 10.0.0.0/8", resolver=lambda h, p: ["192.168.1.9"])
    assert guard.checked_addresses("intranet.test", 80) == ["192.168.1.9"]
    assert guard.checked_addresses("127.0.0.2", 80) == ["127.0.0.2"]
    assert guard.checked_addresses("10.20.30.40", 80) == ["10.20.30.40"]
    with pytest.raises(AddressRefused):
        guard.checked_addresses("127.0.0.3", 80)
    with pytest.raises(AddressRefused, match=r"other.test \(resolves to 192.168.1.9\)"):
        guard.checked_addresses("other.test", 80)


def test_every_resolved_address_is_checked(data_dir: Path, connections: list[tuple[str, int]]) -> None:
    # One public and one loopback answer: the guard refuses without connecting to either.
    def resolver(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "127.0.0.1"]

    settings = fast_settings(data_dir, allow_hosts="")
    with Fetcher(settings, resolver=resolver) as fetcher, pytest.raises(AddressRefused, match="loopback"):
        fetcher.fetch("http://mixed.test/page")
    assert connections == []


def test_default_settings_refuse_loopback(
    data_dir: Path, loopback: LoopbackServer, connections: list[tuple[str, int]]
) -> None:
    loopback.route("/page", Reply(body=b"<p>hi</p>", headers=HTML))
    with Fetcher(fast_settings(data_dir, allow_hosts="")) as fetcher, pytest.raises(AddressRefused) as exc:
        fetcher.fetch(loopback.url("/page"))
    assert "INCIDENTS_ALLOW_HOSTS" in str(exc.value)
    assert loopback.count() == 0 and connections == []


def test_name_resolving_to_loopback_is_refused(
    data_dir: Path, loopback: LoopbackServer, connections: list[tuple[str, int]]
) -> None:
    # Only 127.0.0.2 is allowed; "localhost" resolves (through /etc/hosts) to 127.0.0.1 or ::1.
    with Fetcher(fast_settings(data_dir, allow_hosts="127.0.0.2")) as fetcher, pytest.raises(AddressRefused):
        fetcher.fetch(f"http://localhost:{loopback.port}/page")
    assert loopback.count() == 0 and connections == []


def test_redirect_to_metadata_address_is_refused(
    settings, loopback: LoopbackServer, connections: list[tuple[str, int]]
) -> None:  # type: ignore[no-untyped-def]
    loopback.route("/r", Reply(302, headers={"Location": "http://169.254.169.254/latest/meta-data/"}))
    with Fetcher(settings) as fetcher, pytest.raises(AddressRefused, match="169.254.169.254: link-local"):
        fetcher.fetch(loopback.url("/r"))
    assert not any(host.startswith("169.254.") for host, _ in connections)
    assert loopback.count("/r") == 1


def test_allowed_name_connects_to_the_checked_address(data_dir: Path, loopback: LoopbackServer) -> None:
    loopback.route("/page", Reply(body=b"<p>hi</p>", headers=HTML))
    settings = fast_settings(data_dir, allow_hosts="intranet.test")
    resolver = {"intranet.test": ["127.0.0.2"]}
    with Fetcher(settings, resolver=lambda h, p: resolver[h]) as fetcher:
        result = fetcher.fetch(f"http://intranet.test:{loopback.port}/page")
    assert result.status == 200 and result.peer_address == "127.0.0.2"
    (hit,) = loopback.hits("/page")
    assert hit.host == "127.0.0.2" and hit.headers["Host"] == f"intranet.test:{loopback.port}"


def test_name_that_does_not_resolve_is_gone(data_dir: Path) -> None:
    def resolver(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with Fetcher(fast_settings(data_dir), resolver=resolver) as fetcher, pytest.raises(SourceGone) as exc:
        fetcher.fetch("http://gone.test/post")
    assert exc.value.status is None and "does not resolve" in str(exc.value)


def test_transport_really_uses_the_guarded_backend() -> None:
    # httpx builds its pool privately; if a release stops using `_pool`, this fails loudly.
    from flows.fetch.pools import OriginPools

    transport = _GuardedTransport(AddressGuard(""), concurrency=2)
    assert isinstance(transport._pool, OriginPools)
    assert isinstance(transport._pool._make_pool()._network_backend, GuardedBackend)


def test_a_connection_sets_its_timeout_only_when_it_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each set is a system call that hands the GIL to another fetch thread; httpcore sets it
    before every read and write."""
    calls: list[float | None] = []
    real = socket.socket.settimeout

    def spy(self: socket.socket, value: float | None) -> None:
        calls.append(value)
        real(self, value)

    monkeypatch.setattr(socket.socket, "settimeout", spy)
    mine, theirs = socket.socketpair()
    theirs.settimeout(2.5)
    quiet = QuietSocket.adopt(theirs)
    assert quiet.gettimeout() == 2.5  # kept from the socket it adopted
    calls.clear()
    for _ in range(3):
        quiet.settimeout(30.0)
    quiet.settimeout(5.0)
    quiet.setblocking(True)  # changes the timeout behind the cache's back
    quiet.settimeout(5.0)
    assert calls == [30.0, 5.0, 5.0] and quiet.gettimeout() == 5.0
    mine.sendall(b"ping")
    assert quiet.recv(4) == b"ping"
    assert quiet.getpeername() == quiet.getpeername()
    mine.close()
    quiet.close()
