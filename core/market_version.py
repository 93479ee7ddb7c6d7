"""The version of what the market shows: cached market pages, price books and inventory offers
are kept under it, so a change is seen at once. A merchant or client request reads it in its one
round trip to Redis (``merchants.gate``); anything else reads the shared cache."""

import uuid
from functools import lru_cache

from django.core.cache import cache
from django.core.cache.backends.redis import RedisSerializer

from core.context import request_memo_peek, request_memo_set
from core.shared_keys import shared_cache_key

MARKET_VERSION_KEY = "market-version"


def market_version() -> str:
    """The version this request read in its round trip, else the shared cache's (made when
    none was ever set)."""
    read = request_memo_peek(MARKET_VERSION_KEY)
    if isinstance(read, str):
        return read
    return str(cache.get_or_set(MARKET_VERSION_KEY, lambda: uuid.uuid4().hex, timeout=None))


def market_version_bump() -> None:
    """Whatever changes the market calls this: staff editing the catalog (reference prices,
    stock limits), and the marketplace's side when a listing appears, goes or changes price.
    The request that bumps reads the new version from then on."""
    version = uuid.uuid4().hex
    cache.set(MARKET_VERSION_KEY, version, timeout=None)
    request_memo_set(MARKET_VERSION_KEY, version)


def market_version_shared_key() -> str:
    """The Redis key the shared cache keeps the version under, for a caller that reads it in
    one round trip with other keys (``merchants.gate``)."""
    return shared_cache_key(MARKET_VERSION_KEY)


@lru_cache(maxsize=1)
def _version_decoded(raw: bytes) -> object:
    """The version's bytes stay the same until the market changes: unpickled once, not per
    request (as the switches, ``core.selectors``)."""
    return RedisSerializer().loads(raw)


def market_version_received(raw: bytes | None) -> None:
    """Remember the version read at ``market_version_shared_key()`` for the rest of the request
    (None: none was ever set, ``market_version`` makes one)."""
    version = _version_decoded(raw) if raw else None
    if isinstance(version, str):
        request_memo_set(MARKET_VERSION_KEY, version)
