"""Redis (cache, rate limits, broker) down while the real web server (gunicorn, as deployed) runs:
refusing connections (nobody listens on its port), or accepting them and never answering (a
listener of the test's own that stays silent: a hung server, a half-open connection after a
failover). Authenticated calls get the retryable 503 envelope (1008, ``Retry-After``) within
seconds, never a 500; ``/health`` answers within its own short timeout and names the failing
checks, and a burst of health calls does not take every thread of the server."""

import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from tests.factories import Actor, auth_body
from tests.faults.database import database_url
from tests.faults.processes import free_port, service_env, wait_until, web_server

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Deadlines of the test's HTTP client: a server that blocks on Redis misses them.
CALL_DEADLINE_SECONDS = 6.0
HEALTH_DEADLINE_SECONDS = 6.0
# More health calls at once than the server has threads (2 processes x 4 threads).
HEALTH_BURST = 12

CALLS = [
    ("get", "/secure/prices?game=730", None),
    ("get", "/secure/trades", None),
    ("get", "/v1/wallets/me/balance", None),
    ("post", "/auth/authenticate-client", auth_body()),
]


class SilentRedis:
    """Accepts every connection and never sends a byte; connections stay open until stopped."""

    def __init__(self) -> None:
        self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(128)
        self._server.settimeout(0.05)
        self.port = self._server.getsockname()[1]
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
                continue
            self._held.append(conn)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        for conn in self._held:
            conn.close()
        self._server.close()


@pytest.fixture(params=["refusing", "silent"])
def redis_down(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a Redis that is down, in each of the two ways."""
    if request.param == "refusing":
        yield f"redis://127.0.0.1:{free_port()}/0"
        return
    silent = SilentRedis()
    yield f"redis://127.0.0.1:{silent.port}/0"
    silent.stop()


def _answers(base: str) -> bool:
    try:
        requests.get(f"{base}/health", timeout=HEALTH_DEADLINE_SECONDS)
    except requests.RequestException:  # not listening yet
        return False
    return True


def _health(base: str) -> requests.Response:
    return requests.get(f"{base}/health", timeout=HEALTH_DEADLINE_SECONDS)


def test_while_redis_is_down_calls_get_503_and_health_answers_in_time(
    shop: Actor, redis_down: str, tmp_path: Path
) -> None:
    env = service_env(database_url=database_url(), redis_url=redis_down)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    web = web_server(env, port, tmp_path / "web.log").start()
    try:
        wait_until(lambda: _answers(base), "the web server", alive=[web])

        for method, path, body in CALLS:
            response = requests.request(
                method, base + path, json=body, headers=shop.headers, timeout=CALL_DEADLINE_SECONDS
            )
            assert response.status_code == 503, (path, response.status_code, response.text)
            error = response.json()["error"]
            assert (error["code"], error["key"]) == (1008, "SERVICE_UNAVAILABLE"), path
            assert response.headers["Retry-After"] == "5"
            assert response.json()["requestId"] == response.headers["X-Request-Id"]

        health = _health(base)
        assert health.status_code == 503
        checks = health.json()["error"]["details"]["checks"]
        assert checks["database"] == "ok"
        assert checks["cache"] in ("unavailable", "timeout")
        assert checks["broker"] in ("unavailable", "timeout")

        with ThreadPoolExecutor(HEALTH_BURST) as pool:
            burst = list(pool.map(lambda _: _health(base).status_code, range(HEALTH_BURST)))
        assert burst == [503] * HEALTH_BURST
        assert web.alive()
    finally:
        web.stop()
