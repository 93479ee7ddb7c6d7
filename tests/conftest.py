import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from tests.factories import Actor, make_actor


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
