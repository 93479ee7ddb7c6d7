"""Outside the sandbox, callbacks reach only public hosts (server-side request forgery guard).

The name is resolved once; the connection goes to the address that was checked, with the Host
header, TLS SNI and certificate check on the name. DNS and the network beyond loopback are the
test's own (``tests.webhooks.network``); HTTP runs unmocked through requests and urllib3."""

import ipaddress
import ssl
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests

from core.errors import DomainError
from merchants.models import Merchant
from merchants.webhooks.callbacks import merchant_callback_url_set
from merchants.webhooks.egress import PinnedAddressAdapter
from tests.factories import make_actor
from tests.webhooks.conftest import webhook_secret
from tests.webhooks.network import Network, listener, network

__all__ = ["network"]

pytestmark = pytest.mark.django_db

NAME = "callback.example"
PUBLIC = "93.184.215.14"

REFUSED = [
    # NAT64 (RFC 6052 and the local-use prefix of RFC 8215), to loopback, metadata and private
    "64:ff9b::7f00:1",
    "64:ff9b::a9fe:a9fe",
    "64:ff9b::808:808",
    "64:ff9b:1::a00:1",
    # IPv4-mapped and IPv4-compatible IPv6
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:10.0.0.1",
    "::127.0.0.1",
    "::a00:1",
    "::808:808",
    # 6to4 with a private, loopback or metadata IPv4 address inside
    "2002:7f00:1::1",
    "2002:c0a8:101::1",
    "2002:a9fe:a9fe::1",
    # Teredo
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    # "this network", loopback, private, CGNAT, link-local, reserved, broadcast
    "0.0.0.0",
    "0.1.2.3",
    "127.0.0.1",
    "10.0.0.1",
    "172.16.0.1",
    "192.168.0.1",
    "100.64.0.1",
    "198.18.0.1",
    "240.0.0.1",
    "255.255.255.255",
    # multicast
    "224.0.0.1",
    "239.255.255.250",
    "ff02::1",
    "ff0e::1",
    # IPv6 loopback, unspecified, unique local, link-local, site-local, documentation
    "::1",
    "::",
    "fc00::1",
    "fe80::1",
    "fec0::1",
    "2001:db8::1",
    # cloud metadata and platform endpoints: AWS/GCP/Azure, AWS ECS, AWS IPv6, Alibaba,
    # Oracle, Azure WireServer
    "169.254.169.254",
    "169.254.170.2",
    "fd00:ec2::254",
    "100.100.100.200",
    "192.0.0.192",
    "168.63.129.16",
]

ALLOWED = ["8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8", "2002:808:808::1"]


def same_address(a: str, b: str) -> bool:
    return ipaddress.ip_address(a) == ipaddress.ip_address(b)


def url_set(url: str) -> DomainError:
    actor = make_actor(name="Prod shop", webhook_secret=webhook_secret())
    with pytest.raises(DomainError) as refused:
        merchant_callback_url_set(merchant=actor.merchant, url=url)
    assert refused.value.spec.key == "CALLBACK_URL_TEST_FAILED"
    assert Merchant.objects.get(pk=actor.merchant.pk).callback_url == ""
    return refused.value


@pytest.mark.parametrize("address", REFUSED)
def test_non_public_addresses_are_refused_before_connecting(network: Network, settings, address):
    settings.SANDBOX = False
    network.resolve(NAME, [address])
    refused = url_set(f"https://{NAME}/hooks")
    assert "non-public address" in str(refused.message)
    assert network.connects == []


def test_a_name_with_one_non_public_address_among_public_ones_is_refused(
    network: Network, settings
):
    settings.SANDBOX = False
    network.resolve(NAME, ["8.8.8.8", "10.0.0.1", "1.1.1.1"])
    assert "non-public address" in str(url_set(f"https://{NAME}/hooks").message)
    assert network.connects == []


@pytest.mark.parametrize("address", ALLOWED)
def test_a_public_address_is_resolved_once_and_connected_to(network: Network, settings, address):
    settings.SANDBOX = False
    network.resolve(NAME, [address])
    refused = url_set(f"https://{NAME}/hooks")  # the test network refuses the connection
    assert "non-public" not in str(refused.message)
    assert network.lookups == [NAME]
    ((host, port),) = network.connects
    assert same_address(host, address)
    assert port == 443


def test_a_name_that_rebinds_after_the_check_is_still_called_at_the_checked_address(
    network: Network, settings
):
    """DNS rebinding: the attacker's name answers a public address to the check and a loopback
    address to every later lookup. The request must go to the address that was checked."""
    settings.SANDBOX = False
    with listener() as internal, listener() as merchant_server:
        port = internal.port  # the URL's port: the internal service's, on loopback
        network.resolve(NAME, [PUBLIC], ["127.0.0.1"])
        network.route(PUBLIC, port, ("127.0.0.1", merchant_server.port))
        url_set(f"https://{NAME}:{port}/hooks")  # the stand-in hangs up: the test fails
        assert network.lookups == [NAME]
        assert network.connects == [(PUBLIC, port)]
        assert merchant_server.accepted == 1
        assert internal.accepted == 0


# --- The pinned connection against a real TLS server --------------------------------------


@dataclass
class TlsServer:
    port: int
    ca: Path
    server_names: list[str | None] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A test CA and a certificate it signed for ``callback.example`` only."""
    where = tmp_path_factory.mktemp("tls")
    (where / "ca.ext").write_text(
        "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
        "subjectKeyIdentifier=hash\n"
    )
    (where / "leaf.ext").write_text(
        f"subjectAltName=DNS:{NAME}\nbasicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
        "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n"
    )
    _openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
             "ca.csr", "-subj", "/CN=Test CA", cwd=where)  # fmt: skip
    _openssl("x509", "-req", "-in", "ca.csr", "-signkey", "ca.key", "-out", "ca.pem", "-days",
             "2", "-extfile", "ca.ext", cwd=where)  # fmt: skip
    _openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out",
             "leaf.csr", "-subj", f"/CN={NAME}", cwd=where)  # fmt: skip
    _openssl("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "leaf.pem", "-days", "2", "-extfile", "leaf.ext",
             cwd=where)  # fmt: skip
    return where


@pytest.fixture
def tls_server(certificates: Path) -> Iterator[TlsServer]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificates / "leaf.pem", certificates / "leaf.key")
    state = TlsServer(port=0, ca=certificates / "ca.pem")
    context.sni_callback = lambda _sock, name, _ctx: state.server_names.append(name)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            state.hosts.append(self.headers["Host"])
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            pass  # a refused handshake is what some tests provoke

    server = Server(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    state.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield state
    server.shutdown()
    server.server_close()


def pinned_session(address: str) -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    session.mount("https://", PinnedAddressAdapter(lambda host, port: address))
    return session


def test_the_pinned_connection_keeps_host_sni_and_certificate_on_the_name(tls_server):
    """The certificate names ``callback.example`` only, not 127.0.0.1: the handshake succeeds
    because verification uses the name while the socket goes to the pinned address."""
    url = f"https://{NAME}:{tls_server.port}/hooks"
    with pinned_session("127.0.0.1") as session:
        response = session.post(url, data=b"{}", verify=str(tls_server.ca), timeout=5)
    assert (response.status_code, response.content) == (200, b"{}")
    assert tls_server.server_names == [NAME]
    assert tls_server.hosts == [f"{NAME}:{tls_server.port}"]


def test_the_pinned_connection_refuses_a_certificate_for_another_name(tls_server):
    url = f"https://other.example:{tls_server.port}/hooks"
    with pinned_session("127.0.0.1") as session, pytest.raises(requests.exceptions.SSLError):
        session.post(url, data=b"{}", verify=str(tls_server.ca), timeout=5)
    assert tls_server.server_names == ["other.example"]
    assert tls_server.hosts == []
