from django.core.cache import cache

from core.context import request_memo
from trading.models import GameSettings, ServiceSettings

SETTINGS_CACHE_KEY = "service-settings"


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


def game_settings_get(*, game: int) -> GameSettings:
    """Deposit pauses and hold days of a game (staff edit them; cheap enough to read each time)."""
    row, _ = GameSettings.objects.get_or_create(game=game)
    return row
