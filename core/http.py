"""Outbound HTTP with an overall deadline: connect, status line, headers and body together.

requests and urllib3 time each socket operation, never an exchange: their read timeout is the
longest wait for one read, so a server that sends its status line or headers one byte every few
seconds holds its caller as long as it likes (urllib3's ``Timeout`` says so: "if a server
streams one byte every fifteen seconds, a timeout of 20 seconds will not trigger"; neither
library offers a total). ``deadline(seconds)`` bounds what its block sends and reads: when the
time is up, a watchdog thread ends the sockets of the block's exchanges, and the block raises
``DeadlineExceeded``, a ``requests.Timeout`` that callers handle as they handle a timeout. It
raises even when what was read by then parses as an answer (headers cut short look complete to
``http.client``).

Ending a socket another thread reads takes two steps: ``shutdown`` wakes a blocked read, but on
Linux a peer that ignores it and keeps sending keeps feeding the reads that follow, so the
connection is then aborted (``connect`` to an ``AF_UNSPEC`` address, Linux's way to disconnect
a TCP socket: it sends a reset and drops what was queued, and every later read or write fails).
Both act through a second descriptor of the socket (its "twin"), never through the owner's
descriptor number, which its owner may close and the process reuse at any moment.

A socket is watched when its exchange goes through a ``DeadlineAdapter`` (``deadline_session``
mounts one) or a ``DeadlineWebSocket`` (websocket-client, as a Socket.IO client's transport).
Asynchronous clients bound their calls with ``asyncio.timeout`` instead.
"""

import contextlib
import ctypes
import heapq
import itertools
import os
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import requests
import websocket
from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.poolmanager import PoolManager

_LIBC = ctypes.CDLL(None, use_errno=True)
# struct sockaddr of the family AF_UNSPEC (Linux's layout: the family, 14 bytes of address).
_UNSPECIFIED = struct.pack("H14x", socket.AF_UNSPEC)


class DeadlineExceeded(requests.Timeout):
    """The exchange did not end by its deadline."""


class _Shutter:
    """Ends one connected socket from any thread. Its twin descriptor is closed once the
    socket's owner closed it (``release``) and no block watches it any more: a block's answer
    may still be read after its connection was closed (``Connection: close``)."""

    def __init__(self, sock: socket.socket) -> None:
        # ``fromfd`` duplicates the descriptor: it works for a TLS socket, whose ``dup`` does not.
        self._twin = socket.fromfd(sock.fileno(), sock.family, sock.type, sock.proto)
        self._lock = threading.Lock()
        self._watchers = 0
        self._released = False

    def watched(self) -> None:
        with self._lock:
            self._watchers += 1

    def unwatched(self) -> None:
        with self._lock:
            self._watchers -= 1
        self._close_when_done()

    def release(self) -> None:
        with self._lock:
            self._released = True
        self._close_when_done()

    def _close_when_done(self) -> None:
        with self._lock:
            if self._released and not self._watchers and self._twin.fileno() != -1:
                self._twin.close()

    def shut(self) -> None:
        with self._lock:
            if self._twin.fileno() == -1:
                return
            with contextlib.suppress(OSError):  # not connected (any more)
                self._twin.shutdown(socket.SHUT_RDWR)
            _LIBC.connect(self._twin.fileno(), _UNSPECIFIED, len(_UNSPECIFIED))


class Deadline:
    """The end of one block's exchanges, and the sockets it ends when it passes."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        # Held by the block's thread and the watchdog's: sockets are shut under it, so a block
        # that ends after its deadline passed returns only once its sockets are shut (a socket
        # it hands back to a pool is never shut later, under the next exchange).
        self._lock = threading.Lock()
        self._shutters: set[_Shutter] = set()
        self._expired = False
        self._ended = False

    @property
    def expired(self) -> bool:
        """Whether the deadline passed (set before any socket is shut: what was read while it
        was not had arrived whole)."""
        return self._expired

    def hold(self, shutter: _Shutter) -> None:
        """Watch a socket of this block; ended at once if the deadline passed."""
        with self._lock:
            if self._expired:
                shutter.shut()
            elif not self._ended and shutter not in self._shutters:
                shutter.watched()
                self._shutters.add(shutter)

    def expire(self) -> None:
        with self._lock:
            if self._ended or self._expired:
                return
            self._expired = True
            for shutter in self._shutters:
                shutter.shut()

    def end(self) -> bool:
        """The block is over; whether its deadline passed first."""
        with self._lock:
            if not self._ended:
                self._ended = True
                for shutter in self._shutters:
                    shutter.unwatched()
                self._shutters = set()
            return self._expired


_current: ContextVar[Deadline | None] = ContextVar("http_deadline", default=None)


def _hold(shutter: _Shutter) -> None:
    """Watch a socket by the deadline of the block this runs in, if any."""
    current = _current.get()
    if current is not None:
        current.hold(shutter)


class _Watchdog:
    """One daemon thread per process expiring the deadlines that passed, in order."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._due: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._pid = 0

    def watch(self, deadline: Deadline) -> None:
        with self._wake:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                threading.Thread(target=self._run, name="http-deadlines", daemon=True).start()
            heapq.heappush(self._due, (deadline.at, next(self._order), deadline))
            if self._due[0][2] is deadline:
                self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                now = time.monotonic()
                passed = []
                while self._due and self._due[0][0] <= now:
                    passed.append(heapq.heappop(self._due)[2])
                if not passed:
                    self._wake.wait(self._due[0][0] - now if self._due else None)
                    continue
            for deadline in passed:
                deadline.expire()


_watchdog = _Watchdog()


def _forked() -> None:
    """A forked child has none of its parent's threads: it starts a watchdog of its own, with
    a lock no thread of the parent held at the fork."""
    global _watchdog
    _watchdog = _Watchdog()


os.register_at_fork(after_in_child=_forked)


@contextmanager
def deadline(seconds: float) -> Iterator[Deadline]:
    """The exchanges of this block end within ``seconds``, or it raises DeadlineExceeded."""
    watch = Deadline(seconds)
    _watchdog.watch(watch)
    token = _current.set(watch)
    try:
        yield watch
    except Exception as exc:
        if watch.end():
            raise DeadlineExceeded(f"timed out: no whole answer within {seconds:g} s") from exc
        raise
    finally:
        watch.end()
        _current.reset(token)
    if watch.end():
        raise DeadlineExceeded(f"timed out: no whole answer within {seconds:g} s")


class _WatchedHTTPConnection(HTTPConnection):
    """A connection the current deadline may end, at whatever stage it is (a TLS handshake
    included: the socket is watched as soon as it is connected)."""

    _shutter: _Shutter | None = None

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        self._shutter = _Shutter(sock)
        _hold(self._shutter)  # ended at once when the deadline passed while connecting
        return sock

    def request(self, *args: Any, **kwargs: Any) -> None:
        if self._shutter is not None:
            _hold(self._shutter)  # a kept-alive connection, connected before this block
        super().request(*args, **kwargs)

    def close(self) -> None:
        try:
            super().close()
        finally:
            shutter, self._shutter = self._shutter, None
            if shutter is not None:
                shutter.release()


class _WatchedHTTPSConnection(_WatchedHTTPConnection, HTTPSConnection):
    pass


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


# Shared by every pool manager, which only reads it.
_WATCHED_POOLS: dict[str, type] = {
    "http": _WatchedHTTPPool,
    "https": _WatchedHTTPSPool,
}


class DeadlineAdapter(HTTPAdapter):
    """requests' transport whose connections (direct, or through an HTTP proxy) the block's
    ``deadline`` shuts when it passes."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _WATCHED_POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> PoolManager:
        manager: PoolManager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):  # SOCKS has pools of its own
            manager.pool_classes_by_scheme = _WATCHED_POOLS
        return manager


def deadline_session() -> requests.Session:
    """A session whose exchanges ``deadline`` bounds (not thread-safe: one per thread)."""
    session = requests.Session()
    adapter = DeadlineAdapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


class DeadlineWebSocket(websocket.WebSocket):
    """websocket-client's connection (``class_`` of ``create_connection``): each socket it
    opens is watched by the deadline of the block that opens it, so an opening handshake
    dripped byte by byte ends on time. A TLS handshake, which completes before the socket is
    handed over, is bounded by the socket's timeout only."""

    _socket: socket.socket | None = None
    _shutter: _Shutter | None = None

    @property
    def sock(self) -> socket.socket | None:
        return self._socket

    @sock.setter
    def sock(self, sock: socket.socket | None) -> None:
        if self._shutter is not None:
            self._shutter.release()
            self._shutter = None
        self._socket = sock
        if sock is not None:
            self._shutter = _Shutter(sock)
            _hold(self._shutter)
