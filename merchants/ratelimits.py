"""Per-merchant rate limits: the rates of the contract's section 8 and their counters, kept with
the other state every web process shares per request (the auth epoch).

Fixed windows counted atomically in Redis (one INCR per request, shared by every process), in the
same round trip as the request's other shared reads (``merchants.gate``); with no Redis
configured, the same windows are counted by an atomic upsert in the database.

Each view declares the budget it spends (``Limited``, its ``rate_limit``); the set of all of them
is read from the routed views (``core.api.routes``), never listed here.
"""

import time
import uuid
from dataclasses import dataclass
from functools import cache as cache_once
from typing import Protocol

import redis
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.db.models import F

from core.retention import Retention, rows_purge
from merchants.models import RateLimitWindow

MINUTE = 60
HOUR = 3600


@dataclass(frozen=True)
class Rate:
    limit: int
    window_seconds: int


@dataclass(frozen=True)
class Rates:
    """A line of the contract's table: the rate of a verified merchant and of any other."""

    verified: Rate
    unverified: Rate

    def rate(self, *, verified: bool) -> Rate:
        return self.verified if verified else self.unverified


def per_minute(verified: int, unverified: int) -> Rates:
    return Rates(Rate(verified, MINUTE), Rate(unverified, MINUTE))


# The contract's table (section 8), one line per budget. Operations the contract gives no limit
# spend the nearest documented one (decisions section 7).
AUTHENTICATE = Rates(Rate(1_000_000, HOUR), Rate(100, HOUR))
CHECK_TRADEURL = Rates(Rate(100_000, HOUR), Rate(100, HOUR))
PRICES = Rates(Rate(1_000, HOUR), Rate(100, HOUR))
SECURE_INVENTORY = per_minute(10_000, 100)
SECURE_TRADE = per_minute(5_000, 50)  # POST /secure/sell and POST /secure/buy, each its own
SECURE_CANCEL = per_minute(60, 10)
SECURE_MARKET = per_minute(3_000, 100)
SECURE_MARKET_ITEM = per_minute(6_000, 100)
SECURE_TRADES = per_minute(3_000, 100)
CRYPTO_READ = per_minute(1_000, 10)
LEDGER = Rates(Rate(100, 5 * MINUTE), Rate(10, MINUTE))
CLIENT_INVENTORY = per_minute(1_000, 10)
CLIENT_MARKET = per_minute(300, 30)
CLIENT_SUGGESTIONS = per_minute(600, 30)
CLIENT_MARKET_ITEM = per_minute(600, 30)
CLIENT_TRADES = per_minute(3_000, 30)
CLIENT_TRADE = per_minute(500, 5)  # client deposit; client withdraw and quick share another


@dataclass(frozen=True)
class Limited:
    """The budget an endpoint spends, declared on its view: the operation (the metrics' label),
    the contract's rates, and the counter it counts in. Operations naming the same ``shared``
    counter share one budget (and must name the same rates); by default each counts alone."""

    operation: str
    rates: Rates
    shared: str | None = None

    @property
    def bucket(self) -> str:
        return self.shared or self.operation

    def rate(self, *, verified: bool) -> Rate:
        return self.rates.rate(verified=verified)


@dataclass(frozen=True)
class RateLimitState:
    limit: int
    hits: int
    reset_seconds: float

    @property
    def allowed(self) -> bool:
        return self.hits <= self.limit

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.hits)

    @property
    def retry_after(self) -> int:
        return max(1, int(self.reset_seconds + 0.999))


@dataclass(frozen=True)
class Window:
    """The window a request counts in now: its counter's key and slot."""

    key: str
    slot: int
    seconds: int
    limit: int
    reset_seconds: float

    def state(self, hits: int) -> RateLimitState:
        return RateLimitState(limit=self.limit, hits=hits, reset_seconds=self.reset_seconds)


@dataclass(frozen=True)
class SharedRead:
    """One round trip's answer (``WindowCounter.read``): the cached service switches (None: not
    cached), the auth epoch ("" when none was ever set), the window's count (None: not counted,
    because no window was given or the epoch was not the one expected) and the cached market
    version (None: not cached, or not read)."""

    settings: bytes | None
    epoch: str
    hits: int | None
    market_version: bytes | None


class WindowCounter(Protocol):
    """Where the state every web process shares lives: rate-limit windows and the auth epoch."""

    def hit(self, key: str, slot: int, window_seconds: int) -> int: ...

    def unhit(self, key: str, slot: int) -> None: ...

    def read(
        self,
        *,
        settings_key: str,
        market_version_key: str,
        expected_epoch: str | None,
        window: Window | None,
    ) -> SharedRead: ...

    def epoch(self) -> str: ...

    def epoch_bump(self) -> None: ...


# The auth epoch: a random value replaced whenever a key, secret or merchant changes
# (``merchants.services.callers_changed``); no two values repeat, even after Redis lost it.
EPOCH_KEY = "auth-epoch"


class RedisWindowCounter:
    _SCRIPT = """
    local hits = redis.call('INCR', KEYS[1])
    if hits == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
    return hits
    """
    # A request's one round trip: the switches, the epoch, the market version, and the count
    # when the epoch is the one the caller expects (its cached rows, which named the merchant,
    # are then still valid). Not counted is a nil reply: a count may be any integer (a DECR
    # that came after its window expired leaves one below zero).
    _READ = """
    local settings = redis.call('GET', KEYS[1])
    local epoch = redis.call('GET', KEYS[2]) or ''
    local market_version = redis.call('GET', KEYS[3])
    local hits = false
    if #KEYS > 3 and epoch == ARGV[1] then
        hits = redis.call('INCR', KEYS[4])
        if hits == 1 then redis.call('EXPIRE', KEYS[4], ARGV[2]) end
    end
    return {settings or '', epoch, hits, market_version or ''}
    """

    def __init__(self, url: str) -> None:
        self._client = redis.Redis.from_url(url, **settings.REDIS_CLIENT_OPTIONS)
        self._increment = self._client.register_script(self._SCRIPT)
        self._read = self._client.register_script(self._READ)

    def hit(self, key: str, slot: int, window_seconds: int) -> int:
        return int(self._increment(keys=[f"rl:{key}:{slot}"], args=[window_seconds + 1]))

    def unhit(self, key: str, slot: int) -> None:
        self._client.decr(f"rl:{key}:{slot}")

    def read(
        self,
        *,
        settings_key: str,
        market_version_key: str,
        expected_epoch: str | None,
        window: Window | None,
    ) -> SharedRead:
        keys = [settings_key, EPOCH_KEY, market_version_key]
        if window is not None and expected_epoch is not None:
            keys.append(f"rl:{window.key}:{window.slot}")
        args: list[str | int] = [expected_epoch or "", window.seconds + 1 if window else 0]
        raw, epoch, hits, version = self._read(keys=keys, args=args)
        return SharedRead(
            raw or None, epoch.decode(), None if hits is None else int(hits), version or None
        )

    def epoch(self) -> str:
        epoch = self._client.get(EPOCH_KEY)
        return epoch.decode() if isinstance(epoch, bytes) else ""

    def epoch_bump(self) -> None:
        self._client.set(EPOCH_KEY, uuid.uuid4().hex)


class DatabaseWindowCounter:
    """Without Redis (the quick start): windows in the database, the epoch in the file cache."""

    def hit(self, key: str, slot: int, window_seconds: int) -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO merchants_ratelimitwindow (key, slot, hits, expires_at) "
                "VALUES (%s, %s, 1, %s) ON CONFLICT (key, slot) DO UPDATE "
                "SET hits = merchants_ratelimitwindow.hits + 1 RETURNING hits",
                [key, slot, (slot + 1) * window_seconds],
            )
            row = cursor.fetchone()
        assert row is not None
        return int(row[0])

    def unhit(self, key: str, slot: int) -> None:
        RateLimitWindow.objects.filter(key=key, slot=slot).update(hits=F("hits") - 1)

    def read(
        self,
        *,
        settings_key: str,
        market_version_key: str,
        expected_epoch: str | None,
        window: Window | None,
    ) -> SharedRead:
        return SharedRead(None, self.epoch(), None, None)

    def epoch(self) -> str:
        return str(cache.get(EPOCH_KEY) or "")

    def epoch_bump(self) -> None:
        cache.set(EPOCH_KEY, uuid.uuid4().hex, timeout=None)


@cache_once
def _counter() -> WindowCounter:
    if settings.REDIS_URL:
        return RedisWindowCounter(settings.REDIS_URL)
    return DatabaseWindowCounter()


def shared_read(
    *,
    settings_key: str,
    market_version_key: str,
    expected_epoch: str | None,
    window: Window | None,
) -> SharedRead:
    """The request's one round trip to the shared state (``WindowCounter.read``)."""
    return _counter().read(
        settings_key=settings_key,
        market_version_key=market_version_key,
        expected_epoch=expected_epoch,
        window=window,
    )


def auth_epoch_read() -> str:
    """The auth epoch now ("" when none was ever set)."""
    return _counter().epoch()


def auth_epoch_bump() -> None:
    """A new auth epoch: every process drops the callers it keeps (``merchants.selectors``)."""
    _counter().epoch_bump()


ENDED_WINDOWS = Retention(model=RateLimitWindow, column="expires_at")


def rate_limit_windows_prune() -> int:
    """Forget database windows that have ended (only the Redis-less fallback writes them)."""
    return rows_purge(ENDED_WINDOWS, before=int(time.time()))


def rate_limit_window(*, merchant_id: str, verified: bool, limited: Limited) -> Window:
    """The window a request spending ``limited`` by this merchant counts in now."""
    rate = limited.rate(verified=verified)
    now = time.time()
    slot = int(now // rate.window_seconds)
    return Window(
        key=f"{limited.bucket}:{'v' if verified else 'u'}:{merchant_id}:{rate.window_seconds}",
        slot=slot,
        seconds=rate.window_seconds,
        limit=rate.limit,
        reset_seconds=(slot + 1) * rate.window_seconds - now,
    )


def rate_limit_count(*, window: Window) -> RateLimitState:
    """Count one request in the window."""
    return window.state(_counter().hit(window.key, window.slot, window.seconds))


def rate_limit_uncount(*, window: Window) -> None:
    """Take back a count made for a request that was then refused before the limiter (a
    count made in the same round trip as the request's other reads, ``merchants.gate``)."""
    _counter().unhit(window.key, window.slot)


def rate_limit_hit(*, merchant_id: str, verified: bool, limited: Limited) -> RateLimitState:
    """Count one request against the merchant's budget ``limited``."""
    return rate_limit_count(
        window=rate_limit_window(merchant_id=merchant_id, verified=verified, limited=limited)
    )
