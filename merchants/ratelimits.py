"""Per-merchant rate limits: the registry of the contract's section 8 and its counters.

Fixed windows counted atomically in Redis (one INCR per request, shared by every process); with no
Redis configured, the same windows are counted by an atomic upsert in the database.
"""

import time
from dataclasses import dataclass
from functools import cache
from typing import Protocol

import redis
from django.conf import settings
from django.db import connection

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


class WindowCounter(Protocol):
    def hit(self, key: str, slot: int, window_seconds: int) -> int: ...


class RedisWindowCounter:
    _SCRIPT = """
    local hits = redis.call('INCR', KEYS[1])
    if hits == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
    return hits
    """

    def __init__(self, url: str) -> None:
        self._client = redis.Redis.from_url(url, **settings.REDIS_CLIENT_OPTIONS)
        self._increment = self._client.register_script(self._SCRIPT)

    def hit(self, key: str, slot: int, window_seconds: int) -> int:
        return int(self._increment(keys=[f"rl:{key}:{slot}"], args=[window_seconds + 1]))


class DatabaseWindowCounter:
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


@cache
def _counter() -> WindowCounter:
    if settings.REDIS_URL:
        return RedisWindowCounter(settings.REDIS_URL)
    return DatabaseWindowCounter()


def rate_limit_windows_prune() -> int:
    """Forget database windows that have ended (only the Redis-less fallback writes them)."""
    deleted, _ = RateLimitWindow.objects.filter(expires_at__lt=int(time.time())).delete()
    return deleted


def rate_limit_hit(*, merchant_id: str, verified: bool, operation: str) -> RateLimitState:
    """Count one request of ``operation`` against the merchant's budget for it."""
    budget = REGISTRY[operation]
    rate = budget.rate(verified=verified)
    now = time.time()
    slot = int(now // rate.window_seconds)
    key = f"{budget.bucket}:{'v' if verified else 'u'}:{merchant_id}:{rate.window_seconds}"
    hits = _counter().hit(key, slot, rate.window_seconds)
    return RateLimitState(
        limit=rate.limit, hits=hits, reset_seconds=(slot + 1) * rate.window_seconds - now
    )
