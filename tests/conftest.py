from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from rest_framework.test import APIClient

from tests.factories import Actor, make_actor

QUICK_START_SUITE = Path(__file__).parent / "quickstart"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/quickstart is its own pytest run on the quick start's settings (bin/test runs it
    second): a run on PostgreSQL skips it unless it is named, and then its conftest refuses."""
    if collection_path != QUICK_START_SUITE or settings.QUICKSTART:
        return None
    named = (Path(arg.split("::")[0]).resolve() for arg in config.args)
    return not any(path == QUICK_START_SUITE or QUICK_START_SUITE in path.parents for path in named)


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """The cache (and the rate-limit counters beside it) is a dedicated Redis database."""
    cache.clear()


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def alice(db: None) -> Actor:
    return make_actor(name="Alice")


@pytest.fixture
def bob(db: None) -> Actor:
    return make_actor(name="Bob")


@pytest.fixture
def clock_advance(db: None) -> Callable[[int], None]:
    """Moves the sandbox service clock (core.clock.now) forward by some seconds."""
    from core.models import ServiceSettings
    from core.selectors import SETTINGS_CACHE_KEY

    def advance(seconds: int) -> None:
        row, _ = ServiceSettings.objects.get_or_create(id=ServiceSettings.SINGLETON_ID)
        row.clock_offset_seconds += seconds
        row.save(update_fields=["clock_offset_seconds"])
        cache.delete(SETTINGS_CACHE_KEY)

    return advance
