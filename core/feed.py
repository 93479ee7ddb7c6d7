"""The real-time feed's publishing side (docs/feed.md): what a committed change tells the
merchants' sockets. Services call ``feed_publish_on_commit``; once their transaction commits the
message goes onto the feed bus (Redis pub/sub, or the quick start's spool folder) that every feed
process reads. Nothing here knows about sockets.

Best effort by design: the webhook outbox is the durable channel. A bus that is down or slow
costs the live event only (logged and counted in ``PUBLISH_STATS``), never the change and never
more than ``FEED_PUBLISH_TIMEOUT_SECONDS`` of a request; after a failure publishing pauses for
``FEED_PUBLISH_PAUSE_SECONDS`` instead of waiting on the bus again and again."""

import contextlib
import logging
import os
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NotRequired, Protocol, TypedDict

import redis
from django.conf import settings
from django.db import transaction

from core.json import dumps

logger = logging.getLogger(__name__)

# Spool files older than this are deleted (by the feed processes, and now and then by
# publishers, so a quick start without a running feed does not fill the disk).
SPOOL_KEEP_SECONDS = 60
SPOOL_PRUNE_EVERY = 200
SPOOL_SUFFIX = ".json"


# On the bus a message is its header (JSON), a newline, and the event's data (JSON), so the feed
# reads the header and passes the data on to sockets byte for byte (numbers stay as written).


class MerchantEvent(TypedDict):
    """An event for every socket of one merchant, e.g. ``trade {trade}``. Events of the same
    ``order`` key reach sockets in ``sequence`` order; a late, older one is dropped."""

    kind: Literal["merchant"]
    merchantId: str
    event: str
    order: str
    sequence: int


class MarketEvent(TypedDict):
    """A ``market`` event for the sockets subscribed to ``game``. A listing's ``item`` is priced
    without a fee; with ``sourcingPrice`` the feed prices it with each merchant's own fee."""

    kind: Literal["market"]
    game: int
    sourcingPrice: NotRequired[str]


class AccessChanged(TypedDict):
    """A merchant's keys or status changed: the feed re-checks its sockets now."""

    kind: Literal["access"]
    merchantId: str


FeedHeader = MerchantEvent | MarketEvent | AccessChanged

# published / failed (the bus refused or timed out) / skipped (paused after a failure)
PUBLISH_STATS: Counter[str] = Counter()


class Bus(Protocol):
    def send(self, payload: bytes) -> None: ...


class RedisBus:
    def __init__(self, url: str, channel: str, timeout: float) -> None:
        self.channel = channel
        self.client = redis.Redis.from_url(
            url, socket_connect_timeout=timeout, socket_timeout=timeout
        )

    def send(self, payload: bytes) -> None:
        self.client.publish(self.channel, payload)


class SpoolBus:
    """One file per message in a folder every feed process scans, written under a temporary
    name and renamed, so a reader never sees half a message. Names sort by time."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.sent = 0

    def send(self, payload: bytes) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=self.folder, suffix=".part")
        with os.fdopen(fd, "wb") as file:
            file.write(payload)
        os.replace(temporary, self.folder / f"{time.time_ns():020d}-{uuid.uuid4().hex}.json")
        self.sent += 1
        if self.sent % SPOOL_PRUNE_EVERY == 0:
            spool_prune(self.folder)


def spool_prune(folder: Path, *, keep_seconds: float = SPOOL_KEEP_SECONDS) -> None:
    """Delete spooled messages older than ``keep_seconds`` (their names start with the time)."""
    oldest = time.time_ns() - int(keep_seconds * 1e9)
    for name in os.listdir(folder):
        if name.endswith(SPOOL_SUFFIX) and name[:20].isdigit() and int(name[:20]) < oldest:
            with contextlib.suppress(FileNotFoundError):  # another process pruned it first
                os.unlink(folder / name)


class _Publisher:
    """A bus with its pause after a failure (one per bus, so each configuration has its own)."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self.paused_until = 0.0

    def publish(self, payload: bytes) -> bool:
        if time.monotonic() < self.paused_until:
            PUBLISH_STATS["skipped"] += 1
            return False
        try:
            self.bus.send(payload)
        except (redis.RedisError, OSError):
            PUBLISH_STATS["failed"] += 1
            self.paused_until = time.monotonic() + settings.FEED_PUBLISH_PAUSE_SECONDS
            logger.warning(
                "feed bus unavailable: live events dropped for %.0f s (webhooks unaffected)",
                settings.FEED_PUBLISH_PAUSE_SECONDS,
                exc_info=True,
            )
            return False
        PUBLISH_STATS["published"] += 1
        return True


_publishers: dict[tuple[str, ...], _Publisher] = {}
_publishers_lock = threading.Lock()


def _publisher() -> _Publisher:
    """The configured bus's publisher, one per process and configuration (settings are read on
    each call, so tests can point a publisher at a bus of their own)."""
    if settings.FEED_BUS == "redis":
        key: tuple[str, ...] = (
            "redis",
            settings.FEED_REDIS_URL,
            settings.FEED_CHANNEL,
            str(settings.FEED_PUBLISH_TIMEOUT_SECONDS),
        )
    else:
        key = ("spool", str(settings.FEED_SPOOL_DIR))
    with _publishers_lock:
        publisher = _publishers.get(key)
        if publisher is None:
            bus: Bus = (
                RedisBus(key[1], key[2], float(key[3]))
                if key[0] == "redis"
                else SpoolBus(Path(key[1]))
            )
            publisher = _publishers[key] = _Publisher(bus)
    return publisher


def feed_publish(payload: bytes) -> bool:
    """Put one serialized message on the bus now. Never raises: returns whether it went out."""
    return _publisher().publish(payload)


def feed_publish_on_commit(header: FeedHeader, data: Mapping[str, Any] | None = None) -> None:
    """Publish a message once the surrounding transaction commits (at once outside one). It is
    serialized now, so it reports the state the transaction wrote; the header gets the time of
    the commit (``committedAt``, Unix seconds), from which the feed measures its delay."""
    head = dict(header)
    body = dumps(data or {})
    transaction.on_commit(
        lambda: feed_publish(dumps({**head, "committedAt": time.time()}) + b"\n" + body),
        robust=True,
    )
