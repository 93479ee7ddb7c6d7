"""The feed bus as a feed process reads it (``core.feed`` writes it): Redis pub/sub, or the quick
start's spool folder. Each source hands every message to ``deliver`` in the order the bus has
them, and calls ``resumed`` whenever it (re)connects: whatever the bus carried while this process
was not listening is lost, so subscribers are told to resync."""

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from core.feed import SPOOL_SUFFIX, spool_prune

logger = logging.getLogger(__name__)

Deliver = Callable[[bytes], Awaitable[None]]
Resumed = Callable[[], Awaitable[None]]

# Reconnection waits double from the first to the last (a restarted Redis is read again within
# about this long).
RETRY_FIRST_SECONDS = 0.1
RETRY_LAST_SECONDS = 1.0
SPOOL_POLL_SECONDS = 0.05
SPOOL_PRUNE_SECONDS = 10.0


class FeedSource(Protocol):
    connected: bool

    async def run(self, deliver: Deliver, resumed: Resumed) -> None: ...


class RedisSource:
    def __init__(self, url: str, channel: str) -> None:
        self.url = url
        self.channel = channel
        self.connected = False

    async def run(self, deliver: Deliver, resumed: Resumed) -> None:
        wait = RETRY_FIRST_SECONDS
        while True:
            client = aioredis.Redis.from_url(
                self.url, socket_connect_timeout=2, health_check_interval=5
            )
            try:
                async with client.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.subscribe(self.channel)
                    self.connected = True
                    wait = RETRY_FIRST_SECONDS
                    logger.info("feed bus: listening on %s", self.channel)
                    await resumed()
                    while True:
                        message = await pubsub.get_message(timeout=1.0)
                        if message is not None and message["type"] == "message":
                            await deliver(message["data"])
            except (RedisError, OSError) as exc:
                if self.connected:
                    logger.warning("feed bus: lost Redis (%s); reconnecting", exc)
            finally:
                self.connected = False
                await client.aclose()
            await asyncio.sleep(wait)
            wait = min(wait * 2, RETRY_LAST_SECONDS)


class SpoolSource:
    """Scans the folder for messages it has not read. Messages already there when the process
    starts are not read: the feed is live only."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.connected = False

    async def run(self, deliver: Deliver, resumed: Resumed) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        seen = set(self._names())
        self.connected = True
        await resumed()
        loop = asyncio.get_running_loop()
        pruned = loop.time()
        while True:
            names = self._names()
            for name in names:
                if name in seen:
                    continue
                seen.add(name)
                try:
                    payload = (self.folder / name).read_bytes()
                except FileNotFoundError:
                    continue  # pruned before we got to it
                await deliver(payload)
            seen &= set(names)
            if loop.time() - pruned > SPOOL_PRUNE_SECONDS:
                spool_prune(self.folder)
                pruned = loop.time()
            await asyncio.sleep(SPOOL_POLL_SECONDS)

    def _names(self) -> list[str]:
        return sorted(name for name in os.listdir(self.folder) if name.endswith(SPOOL_SUFFIX))
