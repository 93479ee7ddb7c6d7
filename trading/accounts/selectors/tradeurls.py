"""Trade URL checks (contract 4.2): cached an hour of service-clock time per merchant and URL
(the platform answers each merchant from its own world in the sandbox)."""

import hashlib
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache

from core import clock
from merchants.models import Merchant
from merchants.tradeurls import trade_url_platform_id
from trading.platform import get_platform
from trading.platform.base import (
    TRANSIENT_STATES,
    PlatformError,
    PlatformRateLimitedError,
    PlatformUnavailableError,
    PlatformUser,
    TradeUrlState,
)


def _key(merchant: Merchant, url: str, platform_id: str) -> str:
    # The generation lets the sandbox forget every cached check of a user it reconfigures.
    generation = cache.get(_generation_key(merchant, platform_id), 0)
    return f"tradeurl:{merchant.pk}:{generation}:" + hashlib.sha256(url.encode()).hexdigest()


def _generation_key(merchant: Merchant, platform_id: str) -> str:
    return f"tradeurl-generation:{merchant.pk}:{platform_id}"


def trade_url_cache_forget(*, merchant: Merchant, platform_id: str) -> None:
    key = _generation_key(merchant, platform_id)
    cache.add(key, 0, timeout=None)
    cache.incr(key)


def trade_url_check(*, merchant: Merchant, url: str, force_refresh: bool) -> PlatformUser:
    """The URL must already match the trade URL pattern."""
    now = clock.now()
    platform_id = trade_url_platform_id(url)
    assert platform_id is not None
    key = _key(merchant, url, platform_id)
    cached: tuple[datetime, PlatformUser] | None = None if force_refresh else cache.get(key)
    max_age = timedelta(seconds=settings.TRADE_URL_CHECK_CACHE_SECONDS)
    if cached is not None and now - cached[0] < max_age:
        return cached[1]
    try:
        user = get_platform().user(platform_id, tenant=str(merchant.pk), trade_url=url)
    except (PlatformUnavailableError, PlatformRateLimitedError):
        user = PlatformUser(platform_id=platform_id, state=TradeUrlState.PLATFORM_UNAVAILABLE)
    except PlatformError:
        user = PlatformUser(platform_id=platform_id, state=TradeUrlState.UNKNOWN_ERROR)
    if user.state not in TRANSIENT_STATES:
        cache.set(key, (now, user), timeout=settings.TRADE_URL_CHECK_CACHE_SECONDS)
    return user
