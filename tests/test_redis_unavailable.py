"""Redis unreachable, in the request: the documented retryable 503 (1008, ``Retry-After``) from
wherever it is noticed (the maintenance check in a middleware, the rate limit in a DRF view), and
``/health`` answering in time with each check's state. Redis is really unreachable here (a port
nobody listens on, a listener that never answers); the real-process version of these is
``tests/faults/test_redis_down.py``."""

import socket
import threading
from collections.abc import Iterator

import pytest
from rest_framework.test import APIClient

from config import health
from merchants import ratelimits
from tests.factories import assert_error
from tests.faults.processes import free_port

pytestmark = pytest.mark.django_db

PATHS = ["/secure/prices?game=730", "/secure/trades", "/v1/wallets/me/balance"]


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    yield server.getsockname()[1]
    server.close()


@pytest.fixture(params=["refusing", "silent"])
def dead_redis(request: pytest.FixtureRequest) -> str:
    port = free_port() if request.param == "refusing" else request.getfixturevalue("silent_port")
    return f"redis://127.0.0.1:{port}/0"


def dead_cache(settings, url: str) -> None:  # type: ignore[no-untyped-def]
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "LOCATION": url},
    }


def assert_unavailable(response) -> None:  # type: ignore[no-untyped-def]
    assert_error(response, 503, 1008, "SERVICE_UNAVAILABLE")
    assert response["Retry-After"] == "5"


@pytest.mark.parametrize("path", PATHS)
def test_a_cache_out_of_reach_in_a_middleware_is_503(alice, settings, dead_redis, path):
    dead_cache(settings, dead_redis)
    response = APIClient(raise_request_exception=False).get(path, headers=alice.headers)
    assert_unavailable(response)


@pytest.mark.parametrize("path", PATHS)
def test_rate_limits_out_of_reach_in_a_view_are_503(alice, monkeypatch, dead_redis, path):
    counter = ratelimits.RedisWindowCounter(dead_redis)
    monkeypatch.setattr(ratelimits, "_counter", lambda: counter)
    assert_unavailable(APIClient().get(path, headers=alice.headers))


def test_health_names_an_unreachable_cache(api, settings, dead_redis):
    dead_cache(settings, dead_redis)
    error = assert_error(api.get("/health"), 503, 1008, "SERVICE_UNAVAILABLE")
    assert error["details"]["checks"]["database"] == "ok"
    assert error["details"]["checks"]["cache"] in ("unavailable", "timeout")


@pytest.fixture
def hanging_check(monkeypatch) -> Iterator[list[int]]:
    """The broker check blocks until the test ends (at most 20 s); returns how often it ran."""
    released = threading.Event()
    runs: list[int] = []

    def hang() -> None:
        runs.append(1)
        released.wait(20)

    monkeypatch.setitem(health.CHECKS, "broker", hang)
    yield runs
    released.set()


def test_health_answers_in_time_with_a_check_that_hangs(api, settings, hanging_check):
    settings.HEALTH_TIMEOUT_SECONDS = 0.3
    for _ in range(3):
        error = assert_error(api.get("/health"), 503, 1008, "SERVICE_UNAVAILABLE")
        assert error["details"]["checks"] == {
            "database": "ok",
            "cache": "ok",
            "broker": "timeout",
        }
    assert hanging_check == [1]  # the running probe is waited on again, not started again
