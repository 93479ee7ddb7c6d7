"""The outside world as a test controls it, below the HTTP stack: host names resolve to what the
test says (a different answer on each lookup, as a rebinding attacker's DNS server answers), and
connections to anything but loopback never leave the machine: each is recorded, then routed to a
loopback server standing in for that address or refused."""

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

_real_getaddrinfo = socket.getaddrinfo
_real_connect = socket.socket.connect


@dataclass
class Network:
    answers: dict[str, list[list[str]]] = field(default_factory=dict)
    routes: dict[tuple[str, int], tuple[str, int]] = field(default_factory=dict)
    lookups: list[str] = field(default_factory=list)
    connects: list[tuple[str, int]] = field(default_factory=list)

    def resolve(self, name: str, *answers: list[str]) -> None:
        """``name`` answers the first list on the first lookup, the next on the next, ...; the
        last one from then on."""
        self.answers[name] = list(answers)

    def route(self, address: str, port: int, to: tuple[str, int]) -> None:
        self.routes[(address, port)] = to

    def _getaddrinfo(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        name = host.decode() if isinstance(host, bytes) else host
        if name not in self.answers:
            return _real_getaddrinfo(host, port, *args, **kwargs)
        self.lookups.append(name)
        queue = self.answers[name]
        addresses = queue.pop(0) if len(queue) > 1 else queue[0]
        infos = []
        for address in addresses:
            if ":" in address:
                infos.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0)))
            else:
                infos.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)))
        return infos

    def _connect(self, sock: socket.socket, address: Any) -> None:
        if not isinstance(address, tuple) or address[0] in ("127.0.0.1", "::1", "localhost"):
            return _real_connect(sock, address)
        host, port = address[0], address[1]
        self.connects.append((host, port))
        target = self.routes.get((host, port))
        if target is None:
            raise ConnectionRefusedError(111, f"the test network refuses {host}")
        if sock.family != socket.AF_INET:  # the stand-in listens on IPv4 loopback
            raise ConnectionRefusedError(111, "the test network routes IPv4 only")
        return _real_connect(sock, target)


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> Network:
    world = Network()
    monkeypatch.setattr(socket, "getaddrinfo", world._getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", lambda sock, to: world._connect(sock, to))
    return world


@dataclass
class Listener:
    """A TCP server on loopback that accepts connections, counts them and hangs up."""

    port: int
    accepted: int = 0


@contextmanager
def listener(port: int = 0) -> Iterator[Listener]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", port))
    server.listen(16)
    server.settimeout(0.05)
    state = Listener(port=server.getsockname()[1])
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            state.accepted += 1
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        stop.set()
        thread.join()
        server.close()
