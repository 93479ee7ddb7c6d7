"""Outbound HTTP to merchants' callback URLs, guarded against server-side request forgery.

Outside the sandbox a callback URL must be https and every address its host resolves to must be
public. The name is resolved once and the connection goes to the address that was checked:
letting ``requests`` resolve it again would let a name that answers a public address to the check
and an internal one to the connection (DNS rebinding) through. The Host header, TLS SNI and the
certificate check keep using the name from the URL. Answers are read up to a size and a time
limit, so a receiver can neither fill the worker's memory nor hold it past its lease.

Each worker thread keeps its connections open between posts (one handshake per receiver, not
per attempt), as merchants' servers expect of a webhook sender; it keeps no cookies, so nothing
one receiver sets travels with a later post.
"""

import http.cookiejar
import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool

CONNECT_TIMEOUT_SECONDS = 3.05
# More than any approval answer needs; the rest of a longer body is never read.
MAX_ANSWER_BYTES = 64 * 1024

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Python's ``is_global`` lets these through (and differs between versions), yet each of them
# reaches inside a network or is not a single host on the internet.
REFUSED_NETWORKS = tuple(
    ipaddress.ip_network(network)
    for network in (
        "0.0.0.0/8",  # "this network"
        "100.64.0.0/10",  # carrier-grade NAT; Alibaba Cloud's metadata is 100.100.100.200
        "192.0.0.0/24",  # IETF protocol assignments; Oracle Cloud's metadata is 192.0.0.192
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, and the limited broadcast address
        "::/96",  # IPv4-compatible IPv6 (deprecated), the unspecified and loopback addresses
        "64:ff9b::/96",  # NAT64: the operator's gateway forwards it to any IPv4 address
        "64:ff9b:1::/48",  # local-use NAT64
        "2001::/32",  # Teredo tunnels
        "fc00::/7",  # unique local; AWS's IPv6 metadata is fd00:ec2::254
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)
# Cloud platform endpoints on public addresses: Azure's WireServer.
REFUSED_ADDRESSES = frozenset({ipaddress.ip_address("168.63.129.16")})


class UnsafeAddressError(ValueError):
    """The callback URL may not be called (outside the sandbox)."""


def address_is_public(address: IPAddress) -> bool:
    """A single host on the public internet: what a callback may connect to."""
    if isinstance(address, ipaddress.IPv6Address):
        # IPv4-mapped and 6to4 addresses reach the IPv4 address inside them.
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is not None:
            return address_is_public(embedded)
    return (
        address.is_global
        and not address.is_multicast
        and address not in REFUSED_ADDRESSES
        and not any(address in network for network in REFUSED_NETWORKS)
    )


def public_address(host: str, port: int) -> str:
    """The one address to connect to for ``host``: resolved once, and refused unless every
    address the name has is public (one internal answer among public ones could be chosen)."""
    infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
    if not addresses or not all(address_is_public(address) for address in addresses):
        raise UnsafeAddressError(f"{host} resolves to a non-public address")
    return str(addresses[0])


class PinnedAddressAdapter(HTTPAdapter):
    """Connects to the address ``resolve(host, port)`` gives, never to a second DNS answer;
    the Host header, TLS SNI and certificate verification use the host name of the URL."""

    def __init__(self, resolve: Callable[[str, int], str]) -> None:
        self._resolve = resolve
        super().__init__()

    def get_connection_with_tls_context(
        self,
        request: requests.PreparedRequest,
        verify: Any,
        proxies: Mapping[str, str] | None = None,
        cert: Any = None,
    ) -> HTTPConnectionPool:
        host_params, tls = self.build_connection_pool_key_attributes(request, verify, cert)
        scheme, host = host_params["scheme"], host_params["host"]
        port = host_params["port"] or (443 if scheme == "https" else 80)
        address = self._resolve(host, port)
        pool_kwargs: dict[str, Any] = dict(tls)
        if scheme == "https":
            # The pool is keyed by these too, so two names on one address never share a pool.
            pool_kwargs.update(server_hostname=host, assert_hostname=host)
        pool: HTTPConnectionPool = self.poolmanager.connection_from_host(
            scheme=scheme, host=address, port=port, pool_kwargs=pool_kwargs
        )
        return pool

    def add_headers(self, request: requests.PreparedRequest, **kwargs: Any) -> None:
        request.headers["Host"] = urlsplit(str(request.url)).netloc.rpartition("@")[2]


@dataclass(frozen=True)
class Answer:
    status_code: int
    body: bytes  # at most MAX_ANSWER_BYTES


_kept = threading.local()


def _session(*, pinned: bool) -> requests.Session:
    """This thread's session: with the pinned adapter outside the sandbox, plain inside."""
    sessions: dict[bool, requests.Session] = _kept.__dict__.setdefault("sessions", {})
    session = sessions.get(pinned)
    if session is None:
        session = requests.Session()
        session.trust_env = False
        session.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
        if pinned:
            session.mount("https://", PinnedAddressAdapter(public_address))
        sessions[pinned] = session
    return session


def callback_post(url: str, *, body: bytes, headers: Mapping[str, str], timeout: float) -> Answer:
    """One POST, never following redirects nor an environment proxy (which would resolve the
    name itself). Raises ``requests.RequestException``, ``OSError`` or ``UnsafeAddressError``."""
    started = time.monotonic()
    pinned = not settings.SANDBOX
    if pinned and urlsplit(url).scheme != "https":
        raise UnsafeAddressError("callback URLs must be https")
    with _session(pinned=pinned).post(
        url,
        data=body,
        headers=dict(headers),
        timeout=(CONNECT_TIMEOUT_SECONDS, timeout),
        allow_redirects=False,
        stream=True,
    ) as response:
        return Answer(response.status_code, _read_capped(response, started + timeout))


def _read_capped(response: requests.Response, deadline: float) -> bytes:
    """The start of the body: at most MAX_ANSWER_BYTES, and only what arrived by ``deadline``.
    Each read returns what the socket has (waiting at most the read timeout), so a receiver
    dripping bytes cannot hold the worker longer."""
    chunks: list[bytes] = []
    size = 0
    while size < MAX_ANSWER_BYTES and time.monotonic() < deadline:
        chunk = response.raw.read1(MAX_ANSWER_BYTES - size, decode_content=True)
        if not chunk:
            # Read to its end: the connection can carry the next post. One left with a part of
            # the answer unread is closed with the response.
            response.raw.release_conn()
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
