from django.core.cache import cache

from core.context import request_memo
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


def maintenance_is_on() -> bool:
    return service_settings_get().maintenance
