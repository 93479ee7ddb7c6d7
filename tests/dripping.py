"""A server that never finishes the head of its answer: once a request's head arrived it sends
``at_once``, then one byte of ``dripped`` every ``every`` seconds, then one more header byte
each tick, the slow-header attack of issue 39 (``HTTP/1.1 200 OK\\r\\nX-Pad: `` and a byte
every few seconds). Each read a client makes returns within ``every``, so no per-read timeout
ends it; only an overall deadline does. After ``give_up`` seconds it ends the head and answers
``{}``, which an unbounded client then takes for an answer (a test of it fails on both counts:
time and outcome). It ignores the client's end of the connection and drips on, as a hostile
server would; it records when each connection opened and when the client ended it."""

import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

HEADERS_DRIPPED = (b"HTTP/1.1 200 OK\r\nX-Pad: ", b"")
STATUS_LINE_DRIPPED = (b"", b"HTTP/1.1 200 OK\r\nX-Pad: ")
WEBSOCKET_HEADERS_DRIPPED = (b"HTTP/1.1 101 Switching Protocols\r\nX-Pad: ", b"")
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"


@dataclass
class Connection:
    opened_at: float
    ended_at: float | None = None  # when the client closed or shut it


@dataclass
class Drip:
    port: int
    url: str
    connections: list[Connection] = field(default_factory=list)
    ended: threading.Condition = field(default_factory=threading.Condition)

    def wait_ended(self, count: int = 1, timeout: float = 10.0) -> list[Connection]:
        """The first ``count`` connections, once their clients ended them (waiting at most
        ``timeout``); fails if they did not."""
        with self.ended:
            self.ended.wait_for(
                lambda: len([c for c in self.connections if c.ended_at is not None]) >= count,
                timeout,
            )
            ended = [c for c in self.connections if c.ended_at is not None]
        assert len(ended) >= count, f"{len(ended)} of {count} connections ended"
        return ended[:count]


def _head_received(conn: socket.socket) -> bool:
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        received += chunk
    return True


def _serve(
    drip: Drip,
    record: Connection,
    conn: socket.socket,
    head: tuple[bytes, bytes],
    every: float,
    give_up: float,
    answered: int,
) -> None:
    at_once, dripped = head
    try:
        for _ in range(answered):
            if not _head_received(conn):
                return
            conn.sendall(ANSWER)
        if not _head_received(conn):
            return
        conn.sendall(at_once)
        until = time.monotonic() + give_up
        pending = iter(dripped)
        while time.monotonic() < until:
            readable, _, _ = select.select([conn], [], [], every)
            if readable and not conn.recv(65536):
                _ended(drip, record)  # the client shut or closed its end: drip on regardless
            conn.sendall(bytes([next(pending, ord("a"))]))
        conn.sendall(b"\r\n" + ANSWER.split(b"\r\n", 1)[1])
        while conn.recv(65536):  # until the client closes
            pass
    except OSError:
        pass  # reset by the client
    finally:
        _ended(drip, record)
        conn.close()


def _ended(drip: Drip, record: Connection) -> None:
    with drip.ended:
        if record.ended_at is None:
            record.ended_at = time.monotonic()
            drip.ended.notify_all()


@contextmanager
def dripping(
    *,
    head: tuple[bytes, bytes] = HEADERS_DRIPPED,
    every: float = 0.1,
    give_up: float = 8.0,
    answered: int = 0,
    scheme: str = "http",
) -> Iterator[Drip]:
    """The server on a loopback port, for the block. ``head``: (sent at once, dripped);
    ``answered``: requests answered at once on each connection (kept alive) before one is
    dripped."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.05)
    port = server.getsockname()[1]
    drip = Drip(port=port, url=f"{scheme}://127.0.0.1:{port}")
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            conn.settimeout(None)
            record = Connection(opened_at=time.monotonic())
            drip.connections.append(record)
            threading.Thread(
                target=_serve,
                args=(drip, record, conn, head, every, give_up, answered),
                daemon=True,
            ).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield drip
    finally:
        stop.set()
        thread.join()
        server.close()
