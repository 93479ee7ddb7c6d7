"""Per-merchant rate limits: the registry of the contract's section 8 and its counters, kept with
the other state every web process shares per request (the auth epoch).

Fixed windows counted atomically in Redis (one INCR per request, shared by every process), in the
same round trip as the request's other shared reads (``merchants.gate``); with no Redis
configured, the same windows are counted by an atomic upsert in the database.
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

from merchants.models import RateLimitWindow

MINUTE = 60
HOUR = 3600


@dataclass(frozen=True)
class Rate:
    limit: int
    window_seconds: int


@dataclass(frozen=True)
class Budget:
    """A counter (``bucket``); operations naming the same bucket share one budget."""

    bucket: str
    verified: Rate
    unverified: Rate

    def rate(self, *, verified: bool) -> Rate:
        return self.verified if verified else self.unverified


def _per_minute(verified: int, unverified: int) -> tuple[Rate, Rate]:
    return Rate(verified, MINUTE), Rate(unverified, MINUTE)


def _budget(bucket: str, rates: tuple[Rate, Rate]) -> Budget:
    return Budget(bucket, *rates)


# The contract's table, one entry per budget.
_AUTHENTICATE = (Rate(1_000_000, HOUR), Rate(100, HOUR))
_CHECK_TRADEURL = (Rate(100_000, HOUR), Rate(100, HOUR))
_PRICES = (Rate(1_000, HOUR), Rate(100, HOUR))
_SECURE_INVENTORY = _per_minute(10_000, 100)
_SECURE_TRADE = _per_minute(5_000, 50)  # POST /secure/sell and POST /secure/buy, each its own
_SECURE_CANCEL = _per_minute(60, 10)
_SECURE_MARKET = _per_minute(3_000, 100)
_SECURE_MARKET_ITEM = _per_minute(6_000, 100)
_SECURE_TRADES = _per_minute(3_000, 100)
_CRYPTO_READ = _per_minute(1_000, 10)
_LEDGER = (Rate(100, 5 * MINUTE), Rate(10, MINUTE))
_CLIENT_INVENTORY = _per_minute(1_000, 10)
_CLIENT_MARKET = _per_minute(300, 30)
_CLIENT_SUGGESTIONS = _per_minute(600, 30)
_CLIENT_MARKET_ITEM = _per_minute(600, 30)
_CLIENT_TRADES = _per_minute(3_000, 30)
_CLIENT_TRADE = _per_minute(500, 5)  # client deposit; client withdraw and quick share another

REGISTRY: dict[str, Budget] = {
    # Operations with their own line in the contract.
    "auth.authenticate_client": _budget("auth.authenticate_client", _AUTHENTICATE),
    "secure.check_tradeurl": _budget("secure.check_tradeurl", _CHECK_TRADEURL),
    "secure.prices": _budget("secure.prices", _PRICES),
    "secure.inventory": _budget("secure.inventory", _SECURE_INVENTORY),
    "secure.sell": _budget("secure.sell", _SECURE_TRADE),
    "secure.buy": _budget("secure.buy", _SECURE_TRADE),
    "secure.buy.cancel": _budget("secure.buy.cancel", _SECURE_CANCEL),
    "secure.market": _budget("secure.market", _SECURE_MARKET),
    "secure.market.item": _budget("secure.market.item", _SECURE_MARKET_ITEM),
    "secure.trades.list": _budget("secure.trades", _SECURE_TRADES),
    "secure.trades.get": _budget("secure.trades", _SECURE_TRADES),
    "secure.crypto.deposits": _budget("crypto.read", _CRYPTO_READ),
    "client.crypto.deposit_address": _budget("crypto.read", _CRYPTO_READ),
    "ledger.transactions": _budget("ledger", _LEDGER),
    "client.inventory": _budget("client.inventory", _CLIENT_INVENTORY),
    "client.market": _budget("client.market", _CLIENT_MARKET),
    "client.market.suggestions": _budget("client.market.suggestions", _CLIENT_SUGGESTIONS),
    "client.market.item": _budget("client.market.item", _CLIENT_MARKET_ITEM),
    "client.trades.list": _budget("client.trades", _CLIENT_TRADES),
    "client.trading.deposit": _budget("client.trading.deposit", _CLIENT_TRADE),
    "client.trading.withdraw": _budget("client.trading.withdraw", _CLIENT_TRADE),
    "client.trading.withdraw.quick": _budget("client.trading.withdraw", _CLIENT_TRADE),
    # Operations the contract gives no limit: the nearest documented one (decisions section 7).
    "client.trades.get": _budget("client.trades", _CLIENT_TRADES),
    "secure.buy.quick": _budget("secure.buy.quick", _SECURE_TRADE),
    "secure.buy.item_cancel": _budget("secure.buy.cancel", _SECURE_CANCEL),
    "client.trading.withdraw.cancel": _budget("client.trading.cancel", _SECURE_CANCEL),
    "client.trading.withdraw.item_cancel": _budget("client.trading.cancel", _SECURE_CANCEL),
    "secure.crypto.deposit_address": _budget("crypto.read", _CRYPTO_READ),
    "client.crypto.deposits": _budget("crypto.read", _CRYPTO_READ),
    "secure.crypto.withdrawals": _budget("crypto.read", _CRYPTO_READ),
    "client.crypto.withdrawals": _budget("crypto.read", _CRYPTO_READ),
    "secure.crypto.withdraw": _budget("secure.crypto.withdraw", _SECURE_TRADE),
    "client.crypto.withdraw": _budget("client.crypto.withdraw", _CLIENT_TRADE),
    "ledger.transaction": _budget("ledger", _LEDGER),
    "wallet.balance": _budget("wallet.balance", _SECURE_TRADES),
    "secure.webhooks.events": _budget("secure.webhooks.events", _SECURE_TRADES),
    "secure.webhooks.resend": _budget("secure.webhooks.resend", _SECURE_CANCEL),
    "client.verification": _budget("client.verification", _CLIENT_TRADE),
    "client.verification.status": _budget("client.verification.status", _CLIENT_TRADES),
    "sandbox": _budget("sandbox", _SECURE_TRADE),
    # Not a merchant's: per caller address (``config.openapi``), whoever calls.
    "public.openapi": _budget("public.openapi", _per_minute(60, 60)),
}


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
    """The window a request of ``operation`` counts in now: its counter's key and slot."""

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


def rate_limit_windows_prune() -> int:
    """Forget database windows that have ended (only the Redis-less fallback writes them)."""
    deleted, _ = RateLimitWindow.objects.filter(expires_at__lt=int(time.time())).delete()
    return deleted


def rate_limit_window(*, merchant_id: str, verified: bool, operation: str) -> Window:
    """The window a request of ``operation`` by this merchant counts in now."""
    budget = REGISTRY[operation]
    rate = budget.rate(verified=verified)
    now = time.time()
    slot = int(now // rate.window_seconds)
    return Window(
        key=f"{budget.bucket}:{'v' if verified else 'u'}:{merchant_id}:{rate.window_seconds}",
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


def rate_limit_hit(*, merchant_id: str, verified: bool, operation: str) -> RateLimitState:
    """Count one request of ``operation`` against the merchant's budget for it."""
    return rate_limit_count(
        window=rate_limit_window(merchant_id=merchant_id, verified=verified, operation=operation)
    )
