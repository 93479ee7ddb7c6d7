from dataclasses import dataclass
from functools import lru_cache

from django.core.cache import cache
from django.core.cache.backends.redis import RedisSerializer

from core.context import request_memo, request_memo_set
from core.models import ServiceSettings, StaffAction
from core.shared_keys import shared_cache_key

# What is cached is a ``Switches`` value; the keys used before held model rows, which a process
# of another release would read back as something else.
SETTINGS_CACHE_KEY = "core-switches"


@dataclass(frozen=True)
class Switches:
    """The service settings as requests read them. A value, not a row: one decoded copy is shared
    by every request that reads the same cached bytes (``service_settings_received``)."""

    maintenance: bool
    clock_offset_seconds: int


def service_settings_get() -> Switches:
    """The switches, read through the shared cache once per request; saving them refreshes it."""
    return request_memo(SETTINGS_CACHE_KEY, _service_settings_load)


def _service_settings_load() -> Switches:
    cached = cache.get(SETTINGS_CACHE_KEY)
    if isinstance(cached, Switches):
        return cached
    row, _ = ServiceSettings.objects.get_or_create(id=ServiceSettings.SINGLETON_ID)
    switches = Switches(maintenance=row.maintenance, clock_offset_seconds=row.clock_offset_seconds)
    cache.set(SETTINGS_CACHE_KEY, switches, timeout=None)
    return switches


def service_settings_shared_key() -> str:
    """The Redis key the shared cache keeps the switches under, for a caller that reads them in
    one round trip with other keys (``merchants.gate``)."""
    return shared_cache_key(SETTINGS_CACHE_KEY)


@lru_cache(maxsize=1)
def _switches_decoded(raw: bytes) -> object:
    """The cached bytes stay the same until staff flip a switch: unpickled once, not per request
    (unpickling the settings row was 4 % of a balance request's samples, bench/README.md)."""
    return RedisSerializer().loads(raw)


def service_settings_received(raw: bytes | None) -> Switches:
    """The switches from the value read at ``service_settings_shared_key()`` (None: not cached,
    read as ``service_settings_get`` would), remembered for the rest of the request."""
    decoded = _switches_decoded(raw) if raw else None
    switches = decoded if isinstance(decoded, Switches) else _service_settings_load()
    request_memo_set(SETTINGS_CACHE_KEY, switches)
    return switches


def maintenance_is_on() -> bool:
    return service_settings_get().maintenance


def staff_actions_of(*, subject_type: str, subject_id: str, limit: int = 50) -> list[StaffAction]:
    """The newest staff actions taken on one row (its page lists them)."""
    rows = StaffAction.objects.filter(subject_type=subject_type, subject_id=subject_id)
    return list(rows.order_by("-created_at", "-id")[:limit])
