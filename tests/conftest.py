from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core import checks
from django.core.cache import cache
from django.utils import timezone
from rest_framework.test import APIClient

from core.checks import PORTS_TAG
from tests.factories import Actor, make_actor

QUICK_START_SUITE = Path(__file__).parent / "quickstart"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/quickstart is its own pytest run on the quick start's settings (bin/test runs it
    second): a run on PostgreSQL skips it unless it is named, and then its conftest refuses."""
    if collection_path != QUICK_START_SUITE or settings.QUICKSTART:
        return None
    named = (Path(arg.split("::")[0]).resolve() for arg in config.args)
    return not any(path == QUICK_START_SUITE or QUICK_START_SUITE in path.parents for path in named)


def pytest_sessionstart(session: pytest.Session) -> None:
    """The run starts as ``manage.py check`` does: not with a port some member of which nothing
    implements (core.checks)."""
    unbound = [str(message) for message in checks.run_checks(tags=[PORTS_TAG])]
    if unbound:
        raise pytest.UsageError("\n".join(unbound))


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


@pytest.fixture
def real_clock_advance(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """Moves real time as the service reads it (core.clock.real_now) forward by some seconds, in
    this process (its threads and live server included): what the sandbox clock never moves
    (leases, Idempotency-Keys, a provider's pause, replay windows) waits on it."""
    from core import clock

    ahead = timedelta()

    def real_now() -> datetime:
        return timezone.now() + ahead

    def advance(seconds: int) -> None:
        nonlocal ahead
        ahead += timedelta(seconds=seconds)

    monkeypatch.setattr(clock, "real_now", real_now)
    return advance


@pytest.fixture
def time_passes(
    clock_advance: Callable[[int], None], real_clock_advance: Callable[[int], None]
) -> Callable[[int], None]:
    """Real time passing: both clocks move (the service clock is real time plus its offset)."""

    def advance(seconds: int) -> None:
        clock_advance(seconds)
        real_clock_advance(seconds)

    return advance
