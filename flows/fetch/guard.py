"""The address guard: resolve a host, check every address, connect only to a checked one."""

from __future__ import annotations

import ipaddress
import socket
import ssl
import typing
from collections.abc import Callable, Iterable

import httpcore
from httpcore._backends.sync import SyncStream

from flows.fetch.errors import AddressRefused, SourceGone

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
# host, port -> addresses; the default asks the system resolver. Tests hand in their own so that
# they never depend on (or send traffic to) a real DNS server.
Resolver = Callable[[str, int], list[str]]


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: list[str] = []
    for info in infos:
        address = str(info[4][0])
        if address not in seen:
            seen.append(address)
    return seen


def _why_refused(ip: IPAddress) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for attribute, label in (
        ("is_loopback", "loopback"),
        ("is_link_local", "link-local"),
        ("is_multicast", "multicast"),
        ("is_unspecified", "unspecified"),
        ("is_reserved", "reserved"),  # before is_private, which also covers 240.0.0.0/4
        ("is_private", "private"),
    ):
        if getattr(ip, attribute):
            return label
    if not ip.is_global:
        return "reserved"
    return None


class AddressGuard:
    """Refuses loopback, private, link-local, multicast and reserved addresses unless allowed.

    `allow` is INCIDENTS_ALLOW_HOSTS: comma-separated host names, IP addresses or CIDR ranges.
    A listed host name lets that name through whatever it resolves to; a listed IP or range
    lets those addresses through whichever name led to them."""

    def __init__(self, allow: str = "", resolver: Resolver | None = None) -> None:
        self._names: set[str] = set()
        self._networks: list[IPNetwork] = []
        for item in (part.strip() for part in allow.split(",")):
            if not item:
                continue
            try:
                self._networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                self._names.add(item.lower().rstrip("."))
        self._resolve = resolver or system_resolver

    def _allowed_ip(self, ip: IPAddress) -> bool:
        return any(ip.version == net.version and ip in net for net in self._networks)

    def refused_without_lookup(self, host: str) -> str | None:
        """Why the guard will refuse `host`, when that is known without asking DNS (an IP
        literal, or localhost); None otherwise. For checks before a run starts."""
        name = host.strip("[]").lower().rstrip(".")
        if not name or name in self._names:
            return None
        if name == "localhost" or name.endswith(".localhost"):  # RFC 6761: always loopback
            ip: IPAddress = ipaddress.ip_address("127.0.0.1")
        else:
            try:
                ip = ipaddress.ip_address(name)
            except ValueError:
                return None
        why = _why_refused(ip)
        if why is None or self._allowed_ip(ip):
            return None
        return (
            f"{host} is a {why} address, refused unless listed in INCIDENTS_ALLOW_HOSTS "
            f"(e.g. INCIDENTS_ALLOW_HOSTS={name})"
        )

    def checked_addresses(self, host: str, port: int) -> list[str]:
        """Every address `host` resolves to, each checked; raises before anything connects."""
        name = host.strip("[]").lower().rstrip(".")
        try:
            literal: IPAddress | None = ipaddress.ip_address(name)
        except ValueError:
            literal = None
        if literal is not None:
            addresses = [str(literal)]
        else:
            try:
                addresses = self._resolve(name, port)
            except (socket.gaierror, UnicodeError) as exc:
                raise SourceGone(
                    f"host name {name} does not resolve ({exc}); check the URL, or the site is gone",
                    url=f"//{name}:{port}",
                    status=None,
                ) from exc
            if not addresses:
                raise SourceGone(f"host name {name} resolves to no address", url=name, status=None)
        if name in self._names:
            return addresses
        for address in addresses:
            ip = ipaddress.ip_address(address)
            why = _why_refused(ip)
            if why is not None and not self._allowed_ip(ip):
                shown = name if literal is not None else f"{name} (resolves to {address})"
                raise AddressRefused(
                    f"address guard refused {shown}: {why} address; "
                    f"list it in INCIDENTS_ALLOW_HOSTS if it is meant to be fetched"
                )
        return addresses


_UNSET = object()


class _Quiet:
    """Skips the system calls httpcore repeats on every request over a connected socket.

    httpcore sets the timeout before each read and write, and the WARC record asks for the peer
    address of every response: each is a system call, and each lets another fetch thread take the
    GIL, which on a re-run of 304s cost more CPU than the calls themselves. The timeout is set
    only when it changes (it is the read timeout until a URL's deadline comes near); the peer
    address is read once. Class-level defaults: ssl builds its sockets without __init__."""

    _quiet_timeout: object = _UNSET
    _quiet_peer: object = _UNSET

    def settimeout(self, value: float | None) -> None:
        if value != self._quiet_timeout:
            super().settimeout(value)  # type: ignore[misc]
            self._quiet_timeout = value

    def setblocking(self, flag: bool) -> None:
        super().setblocking(flag)  # type: ignore[misc]
        self._quiet_timeout = _UNSET

    def getpeername(self) -> typing.Any:
        if self._quiet_peer is _UNSET:
            self._quiet_peer = super().getpeername()  # type: ignore[misc]
        return self._quiet_peer


class QuietSocket(_Quiet, socket.socket):
    """A plain connection's socket (see _Quiet)."""

    @classmethod
    def adopt(cls, sock: socket.socket) -> QuietSocket:
        timeout = sock.gettimeout()
        quiet = cls(sock.family, sock.type, sock.proto, fileno=sock.detach())
        quiet.settimeout(timeout)
        return quiet


class QuietTLSSocket(_Quiet, ssl.SSLSocket):
    """A TLS connection's socket (see _Quiet): our SSL context's sslsocket_class."""


class GuardedBackend(httpcore.SyncBackend):
    """httpcore's socket backend, connecting only to addresses the guard has checked.

    httpx hands us the host name from the URL; we resolve it once, check every address, and
    connect to a checked IP ourselves, so a DNS answer that changes between check and connect
    (rebinding) cannot slip through. TLS still gets the original name for SNI and certificate
    checks, because httpcore starts TLS over this stream with the request's host."""

    def __init__(self, guard: AddressGuard) -> None:
        self._guard = guard

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = self._guard.checked_addresses(host, port)
        last: OSError | None = None
        for address in addresses:
            try:
                sock = socket.create_connection(
                    (address, port),
                    timeout,
                    source_address=None if local_address is None else (local_address, 0),
                )
            except TimeoutError as exc:
                raise httpcore.ConnectTimeout(str(exc)) from exc
            except OSError as exc:
                last = exc
                continue
            for option in socket_options or []:
                sock.setsockopt(*option)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return SyncStream(QuietSocket.adopt(sock))
        raise httpcore.ConnectError(f"{last}")
