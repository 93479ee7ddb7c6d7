from django.core.cache import cache
from django.core.cache.backends.redis import RedisSerializer

from core.context import request_memo, request_memo_set
from core.models import ServiceSettings

# Rows cached before the switches moved into core name the old trading model, which unpickling
# cannot find: a new key never reads one back.
SETTINGS_CACHE_KEY = "core-service-settings"


def service_settings_get() -> ServiceSettings:
    """The switches, read through the shared cache once per request; saving them refreshes it."""
    return request_memo(SETTINGS_CACHE_KEY, _service_settings_load)


def _service_settings_load() -> ServiceSettings:
    cached = cache.get(SETTINGS_CACHE_KEY)
    if isinstance(cached, ServiceSettings):
        return cached
    row, _ = ServiceSettings.objects.get_or_create(id=ServiceSettings.SINGLETON_ID)
    cache.set(SETTINGS_CACHE_KEY, row, timeout=None)
    return row


def service_settings_shared_key() -> str:
    """The Redis key the shared cache keeps the switches under, for a caller that reads them in
    one round trip with other keys (``merchants.gate``)."""
    return cache.make_and_validate_key(SETTINGS_CACHE_KEY)


def service_settings_received(raw: bytes | None) -> ServiceSettings:
    """The switches from the value read at ``service_settings_shared_key()`` (None: not cached,
    read as ``service_settings_get`` would), remembered for the rest of the request."""
    row = RedisSerializer().loads(raw) if raw else None
    if not isinstance(row, ServiceSettings):
        row = _service_settings_load()
    request_memo_set(SETTINGS_CACHE_KEY, row)
    return row


def maintenance_is_on() -> bool:
    return service_settings_get().maintenance
