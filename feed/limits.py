"""The cap on a merchant's open sockets (``FEED_MAX_SOCKETS_PER_MERCHANT``), service-wide.

With Redis each merchant has a sorted set of its sockets (``<process>:<sid>``) scored by when
the entry lapses; every feed process renews its own entries on each re-check, so the sockets of
a process that died stop counting within ``ENTRY_SECONDS``. Admission is one Lua script (check
and add at once: two processes cannot both take the last place). Without Redis (the spool bus,
or Redis down for a moment) each process counts its own sockets."""

import contextlib
import logging
import uuid
from collections import Counter

import redis.asyncio as aioredis
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# An entry lapses this long after its process last renewed it.
ENTRY_SECONDS = 15

_ADMIT = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
    return 0
end
redis.call('ZADD', KEYS[1], t + tonumber(ARGV[2]), ARGV[3])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 1)
return 1
"""

_RENEW = """
local now = redis.call('TIME')
local expiry = tonumber(now[1]) + tonumber(now[2]) / 1000000 + tonumber(ARGV[1])
for i = 2, #ARGV do
    redis.call('ZADD', KEYS[1], expiry, ARGV[i])
end
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[1])) + 1)
return #ARGV - 1
"""


class SocketLimit:
    def __init__(self, *, cap: int, redis_url: str | None, namespace: str) -> None:
        self.cap = cap
        self.namespace = namespace
        self.process = uuid.uuid4().hex
        self.local: Counter[str] = Counter()
        self.redis = (
            aioredis.Redis.from_url(redis_url, socket_connect_timeout=1, socket_timeout=1)
            if redis_url
            else None
        )
        self._admit = self.redis.register_script(_ADMIT) if self.redis else None
        self._renew = self.redis.register_script(_RENEW) if self.redis else None

    def _key(self, merchant_id: str) -> str:
        return f"{self.namespace}:sockets:{merchant_id}"

    def _member(self, sid: str) -> str:
        return f"{self.process}:{sid}"

    async def admit(self, merchant_id: str, sid: str) -> bool:
        """Take a place for this socket, if the merchant has one left."""
        admitted = self.local[merchant_id] < self.cap
        if self._admit is not None:
            try:
                admitted = bool(
                    await self._admit(
                        keys=[self._key(merchant_id)],
                        args=[self.cap, ENTRY_SECONDS, self._member(sid)],
                    )
                )
            except RedisError:
                logger.warning("feed: socket cap counted in this process only (Redis down)")
        if admitted:
            self.local[merchant_id] += 1
        return admitted

    async def release(self, merchant_id: str, sid: str) -> None:
        self.local[merchant_id] -= 1
        if self.local[merchant_id] <= 0:
            del self.local[merchant_id]
        if self.redis is not None:
            with contextlib.suppress(RedisError):  # else the entry lapses by itself
                await self.redis.zrem(self._key(merchant_id), self._member(sid))

    async def renew(self, held: dict[str, list[str]]) -> None:
        """Renew this process's entries (and restore them after a Redis restart)."""
        if self._renew is None:
            return
        try:
            for merchant_id, sids in held.items():
                await self._renew(
                    keys=[self._key(merchant_id)],
                    args=[ENTRY_SECONDS, *(self._member(sid) for sid in sids)],
                )
        except RedisError:
            logger.warning("feed: cannot renew socket counts (Redis down)")

    async def close(self) -> None:
        if self.redis is not None:
            await self.redis.aclose()
