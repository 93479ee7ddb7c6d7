from django.core.cache import cache
from django.db import transaction

from core.context import request_memo_forget
from core.models import ServiceSettings
from core.selectors import SETTINGS_CACHE_KEY


def service_settings_update(*, maintenance: bool | None = None) -> ServiceSettings:
    with transaction.atomic():
        row, _ = ServiceSettings.objects.select_for_update(no_key=True).get_or_create(
            id=ServiceSettings.SINGLETON_ID
        )
        if maintenance is not None:
            row.maintenance = maintenance
        row.save()
    service_settings_cache_clear()
    return row


def service_settings_cache_clear() -> None:
    """Drop the cached switches once the change is committed, so no reader re-caches old ones."""
    request_memo_forget(SETTINGS_CACHE_KEY)
    transaction.on_commit(lambda: cache.delete(SETTINGS_CACHE_KEY))


def service_clock_advance(*, minutes: int) -> ServiceSettings:
    """Sandbox only: move the service clock forward for every process."""
    with transaction.atomic():
        row, _ = ServiceSettings.objects.select_for_update(no_key=True).get_or_create(
            id=ServiceSettings.SINGLETON_ID
        )
        row.clock_offset_seconds += minutes * 60
        row.save()
    service_settings_cache_clear()
    return row
