"""Outbound HTTP to merchants' callback URLs, guarded against server-side request forgery.

Outside the sandbox a callback URL must be https and every address its host resolves to must be
public. The name is resolved once and the connection goes to the address that was checked:
letting ``requests`` resolve it again would let a name that answers a public address to the check
and an internal one to the connection (DNS rebinding) through. The Host header, TLS SNI and the
certificate check keep using the name from the URL. An attempt has one deadline for the
connection, the status line, the headers and the body together (``core.http.deadline``): a
receiver that drips its head fails the attempt when it passes; one that drips its body has it
cut there (its status and headers arrived). With a size limit on the body, a receiver can neither
fill the worker's memory nor hold it past its lease.

``CALLBACK_ALLOW_PRIVATE_NETWORKS`` lifts the https and public-address rules outside the
sandbox (a staging receiver on a private network, an end-to-end check on one machine).

Each worker thread keeps its connections open between posts (one handshake per receiver, not
per attempt), as merchants' servers expect of a webhook sender; it keeps no cookies, so nothing
one receiver sets travels with a later post.
"""

import http.cookiejar
import ipaddress
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from django.conf import settings
from urllib3 import HTTPConnectionPool

from core.http import DeadlineAdapter, DeadlineExceeded, deadline, deadline_session

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


class PinnedAddressAdapter(DeadlineAdapter):
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
    """This thread's session: with the pinned adapter when addresses are checked, else plain."""
    sessions: dict[bool, requests.Session] = _kept.__dict__.setdefault("sessions", {})
    session = sessions.get(pinned)
    if session is None:
        session = deadline_session()
        session.trust_env = False
        session.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
        if pinned:
            session.mount("https://", PinnedAddressAdapter(public_address))
        sessions[pinned] = session
    return session


def addresses_checked() -> bool:
    """Whether a callback must be https to a public address: outside the sandbox, unless
    CALLBACK_ALLOW_PRIVATE_NETWORKS."""
    return not settings.SANDBOX and not settings.CALLBACK_ALLOW_PRIVATE_NETWORKS


def callback_post(url: str, *, body: bytes, headers: Mapping[str, str], timeout: float) -> Answer:
    """One POST within ``timeout`` seconds, never following redirects nor an environment proxy
    (which would resolve the name itself). Raises ``requests.RequestException`` (a
    ``DeadlineExceeded`` when no status and headers came in time), ``OSError`` or
    ``UnsafeAddressError``."""
    pinned = addresses_checked()
    if pinned and urlsplit(url).scheme != "https":
        raise UnsafeAddressError("callback URLs must be https")
    status: int | None = None
    chunks: list[bytes] = []
    try:
        with (
            deadline(timeout) as watch,
            _session(pinned=pinned).post(
                url,
                data=body,
                headers=dict(headers),
                timeout=(CONNECT_TIMEOUT_SECONDS, timeout),
                allow_redirects=False,
                stream=True,
            ) as response,
        ):
            if not watch.expired:  # a head the deadline cut short may look whole
                status = response.status_code
                _read_capped(response, chunks)
    except DeadlineExceeded:
        if status is None:
            raise  # no status and headers by the deadline: the attempt failed
    assert status is not None  # the head arrived; the deadline may have cut the body
    return Answer(status, b"".join(chunks))


def _read_capped(response: requests.Response, chunks: list[bytes]) -> None:
    """The start of the body into ``chunks``: at most MAX_ANSWER_BYTES; what arrives before
    the deadline, which cuts the rest."""
    size = 0
    while size < MAX_ANSWER_BYTES:
        chunk = response.raw.read1(MAX_ANSWER_BYTES - size, decode_content=True)
        if not chunk:
            # Read to its end: the connection can carry the next post. One left with a part of
            # the answer unread is closed with the response.
            response.raw.release_conn()
            break
        chunks.append(chunk)
        size += len(chunk)
