"""The feed as integrators meet it: a real ``manage.py feed`` process on a free port against the
test database, and python-socketio's own client connecting to it."""

import queue
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
import socketio
from django.conf import settings

from tests.faults.database import database_url
from tests.faults.processes import Process, free_port, service_env, wait_until

# Generous for a shared 2-core machine; a passing run waits a fraction of this.
WAIT_SECONDS = 15.0


class FeedProcess:
    """``manage.py feed`` on a free port: the Redis bus on the test's Redis and ``channel``,
    unless ``overrides`` (environment variables) say otherwise. With ``api_upstream``, the quick
    start's front: every request but ``/socket.io/`` forwarded there."""

    def __init__(
        self, log: Path, *, channel: str, api_upstream: str = "", **overrides: str
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = service_env(database_url=database_url(), redis_url=settings.REDIS_URL)
        env.update(FEED_BUS="redis", FEED_CHANNEL=channel, FEED_REDIS_URL=settings.REDIS_URL)
        env.update(overrides)
        argv = [sys.executable, "manage.py", "feed", "--host", "127.0.0.1"]
        argv += ["--port", str(self.port)]
        self.front = bool(api_upstream)
        if api_upstream:
            argv += ["--api-upstream", api_upstream]
        self.process = Process("feed", argv, env, log)

    def start(self) -> "FeedProcess":
        self.process.start()
        self.wait_ready()
        return self

    def wait_ready(self) -> None:
        """Serving, and reading the bus (what it publishes from now on reaches it); a front's
        ``/health`` is its upstream's: serving and forwarding."""
        if self.front:
            wait_until(self.forwards, "the front", alive=[self.process])
            return
        wait_until(lambda: self.health().get("status") == "ok", "the feed", alive=[self.process])

    def forwards(self) -> bool:
        try:
            return requests.get(f"{self.url}/health", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def health(self) -> dict[str, Any]:
        try:
            return dict(requests.get(f"{self.url}/health", timeout=2).json())
        except (requests.RequestException, ValueError):
            return {}

    def stop(self) -> None:
        self.process.stop()


@dataclass
class FeedClient:
    """One python-socketio client: every event it gets, and its connection's ups and downs."""

    url: str
    sio: socketio.Client = field(default_factory=lambda: socketio.Client(reconnection=False))
    inbox: "queue.Queue[tuple[str, Any]]" = field(default_factory=queue.Queue)
    seen: list[tuple[str, Any]] = field(default_factory=list)
    connected: threading.Event = field(default_factory=threading.Event)
    disconnected: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.sio.on("connect", self.connected.set)
        self.sio.on("disconnect", lambda *_: self.disconnected.set())
        self.sio.on("*", lambda event, *data: self.inbox.put((event, data[0] if data else None)))

    def connect(
        self,
        *,
        query: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        auth: Mapping[str, str] | None = None,
    ) -> "FeedClient":
        url = self.url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")
        self.sio.connect(
            url,
            headers=dict(headers or {}),
            auth=dict(auth) if auth else None,
            transports=["websocket"],
            wait_timeout=WAIT_SECONDS,
        )
        return self

    def next(self, event: str | None = None, *, timeout: float = WAIT_SECONDS) -> Any:
        """The next event received (of that name: others before it are kept in ``seen``)."""
        while True:
            try:
                name, data = self.inbox.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(
                    f"no {event or 'event'} within {timeout:.0f} s; got {self.seen}"
                ) from None
            self.seen.append((name, data))
            if event is None or name == event:
                return data

    def emit(self, event: str, data: Any) -> Any:
        """Emit and wait for the server's answer (its ack)."""
        return self.sio.call(event, data, timeout=WAIT_SECONDS)

    def wait_disconnected(self, timeout: float = WAIT_SECONDS) -> None:
        assert self.disconnected.wait(timeout), f"still connected after {timeout:.0f} s"

    def pending(self) -> list[tuple[str, Any]]:
        """Everything received and not yet read."""
        left = []
        while not self.inbox.empty():
            left.append(self.inbox.get_nowait())
        return left

    def close(self) -> None:
        if self.sio.connected:
            self.sio.disconnect()
