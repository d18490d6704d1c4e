"""HTTPS through the address guard: we connect to the checked IP, TLS still checks the name."""

from __future__ import annotations

import datetime
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.fetch import Fetcher
from schema.errors import FetchError
from tests.flows.fetch.conftest import fast_settings
from tests.httpserver import LoopbackServer, Reply

x509 = pytest.importorskip(
    "cryptography.x509",
    reason='needs the cryptography package to make test certificates: pip install -e ".[dev]"',
)
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

NAME = "intranet.test"


def _cert(subject: str, issuer_key, issuer_name, key, *, ca: bool, san: str | None):  # type: ignore[no-untyped-def]
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
        )
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(san)]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


@pytest.fixture
def https(tmp_path: Path) -> Iterator[tuple[LoopbackServer, Path]]:
    """An HTTPS LoopbackServer on 127.0.0.2 with a certificate for intranet.test, and its CA file."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "incident-ingest test CA")])
    ca = _cert("incident-ingest test CA", ca_key, ca_name, ca_key, ca=True, san=None)
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = _cert(NAME, ca_key, ca_name, key, ca=False, san=NAME)
    ca_file, cert_file, key_file = tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    with LoopbackServer(("127.0.0.2",), tls=context) as server:
        server.route("/p", Reply(body=b"<p>over TLS</p>", headers={"Content-Type": "text/html"}))
        yield server, ca_file


def test_https_to_a_checked_address_keeps_the_name_for_tls(data_dir: Path, https) -> None:  # type: ignore[no-untyped-def]
    server, ca_file = https
    settings = fast_settings(data_dir, allow_hosts=NAME, ca_bundle=str(ca_file))
    with Fetcher(settings, resolver=lambda host, port: ["127.0.0.2"]) as fetcher:
        result = fetcher.fetch(f"https://{NAME}:{server.port}/p")
    assert result.body == b"<p>over TLS</p>" and result.peer_address == "127.0.0.2"
    assert server.hits("/p")[0].headers["Host"] == f"{NAME}:{server.port}"


def test_certificate_for_another_name_is_refused_and_not_retried(data_dir: Path, https) -> None:  # type: ignore[no-untyped-def]
    server, ca_file = https
    settings = fast_settings(data_dir, allow_hosts="127.0.0.2", ca_bundle=str(ca_file))
    with Fetcher(settings) as fetcher, pytest.raises(FetchError, match="TLS certificate of 127.0.0.2"):
        fetcher.fetch(f"https://127.0.0.2:{server.port}/p")
    assert server.count() == 0


def test_unknown_ca_is_refused(data_dir: Path, https) -> None:  # type: ignore[no-untyped-def]
    server, _ = https
    settings = fast_settings(data_dir, allow_hosts=NAME)
    resolver = lambda host, port: ["127.0.0.2"]  # noqa: E731
    with (
        Fetcher(settings, resolver=resolver) as fetcher,
        pytest.raises(FetchError, match="INCIDENTS_CA_BUNDLE"),
    ):
        fetcher.fetch(f"https://{NAME}:{server.port}/p")
    assert server.count() == 0
