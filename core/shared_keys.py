"""The shared cache's full Redis key of a fixed name, for the few keys a request reads in its one
round trip with others (``merchants.gate``)."""

from functools import lru_cache
from typing import Any

from django.core.cache import cache
from django.core.signals import setting_changed
from django.dispatch import receiver


@lru_cache(maxsize=16)
def shared_cache_key(name: str) -> str:
    """``cache.make_and_validate_key(name)``, made once per process: it depends only on the
    cache's settings, and Django validates a key character by character: about 10 µs a key,
    twice on every merchant and client request."""
    return cache.make_and_validate_key(name)


@receiver(setting_changed)
def _caches_changed(*, setting: str, **kwargs: Any) -> None:
    # Tests change the cache's settings; a process in service never does.
    if setting == "CACHES":
        shared_cache_key.cache_clear()
