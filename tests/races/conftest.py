"""Races through real HTTP: N requests at once against a real gunicorn (as ``bin/start`` runs it:
two processes with four threads each) on the committed test database, with a real Celery worker
taking the tasks they queue and a real local HTTP server as the merchants' callback URL. Each
test proves the exactly-once effect of what raced: the money moved to the cent, the rows
created, no 5xx (only the refusals the endpoint documents) and ``check_wallet`` clean.

Like the fault suite (whose machinery this reuses), every test commits (``transaction=True``)
and the world moves only when a test moves it (no beat, no autopilot)."""

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
from django.conf import settings
from django.db import connection

from merchants.models import Merchant
from tests.deposits.conftest import ak, bot, cheap, door, knife, world
from tests.factories import Actor, make_actor
from tests.faults.conftest import (
    _tasks_go_to_the_broker,
    callback,
    module_worker,
    web_serving,
    worker,
)
from tests.faults.database import SERVICE_APPLICATION, database_url
from tests.faults.processes import Process, service_env, wait_until
from tests.withdrawals.conftest import catalog_item
from wallet.selectors import wallet_balances, wallet_invariants_check
from wallet.services import wallet_admin_credit

__all__ = [  # fixtures shared with the fault, deposit and withdrawal suites
    "_tasks_go_to_the_broker",
    "ak",
    "bot",
    "callback",
    "catalog_item",
    "cheap",
    "door",
    "knife",
    "module_worker",
    "worker",
    "world",
]

N = 30  # requests in one burst
TIMEOUT = 60  # seconds one request may take on the shared machine


@pytest.fixture(scope="module")
def web(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """gunicorn on the test database for the whole module; yields its base URL. Between tests
    the database is emptied under it (its pooled connections sit idle meanwhile)."""
    env = service_env(database_url=database_url(), redis_url=settings.REDIS_URL)
    log: Path = tmp_path_factory.mktemp("web") / "gunicorn.log"
    with web_serving(env, log) as base:
        yield base


def tasks_queued() -> bool:
    """A task waiting on the broker, or taken and not yet done (tasks are acknowledged late)."""
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    return bool(broker.llen("celery") or broker.hlen("unacked"))


def _service_busy() -> bool:
    """A task queued or running, or a transaction of the service processes still open."""
    if tasks_queued():
        return True
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND application_name = %s AND state <> 'idle'",
            [SERVICE_APPLICATION],
        )
        busy: int = cursor.fetchone()[0]
    return busy > 0


@pytest.fixture(autouse=True)
def _service_quiet_at_the_end(transactional_db: None) -> Iterator[None]:
    """The database is emptied after each test: first the worker finishes what the test queued
    (a transaction of its would deadlock with the emptying). Quiet three polls in a row."""
    yield
    quiet = [0]

    def idle() -> bool:
        quiet[0] = 0 if _service_busy() else quiet[0] + 1
        return quiet[0] >= 3

    wait_until(idle, "the service to finish the test's work")


@pytest.fixture
def own_web(transactional_db: None, tmp_path: Path) -> Iterator[str]:
    """gunicorn for this test alone: the admin keeps content type ids in memory, and emptying
    the database between tests makes new ones."""
    env = service_env(database_url=database_url(), redis_url=settings.REDIS_URL)
    with web_serving(env, tmp_path / "gunicorn.log") as base:
        yield base


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]

    @property
    def code(self) -> int | None:
        """The error code, None for a success."""
        error = self.body.get("error")
        return error["code"] if error else None

    @property
    def data(self) -> Any:
        assert self.body.get("success") is True, self
        return self.body["data"]


Call = Callable[[requests.Session], requests.Response]


def answer(response: requests.Response) -> Answer:
    """An API answer: JSON in the envelope, never a 5xx."""
    assert response.status_code < 500, response.text
    assert response.headers["Content-Type"] == "application/json", response.text
    return Answer(response.status_code, response.json())


def burst(calls: list[Call]) -> list[requests.Response]:
    """All calls at once: each thread waits at a barrier, then sends its request."""
    barrier = threading.Barrier(len(calls))

    def run(call: Call) -> requests.Response:
        with requests.Session() as session:
            barrier.wait()
            return call(session)

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return list(pool.map(run, calls))


def api_burst(calls: list[Call]) -> list[Answer]:
    return [answer(response) for response in burst(calls)]


def post(base: str, path: str, headers: dict[str, str], body: object = None) -> Call:
    return lambda session: session.post(
        f"{base}{path}", json=body, headers=headers, timeout=TIMEOUT
    )


def outcomes(answers: list[Answer]) -> Counter[tuple[int, int | None]]:
    """How many answers of each (HTTP status, error code); successes have code None."""
    return Counter((a.status, a.code) for a in answers)


def shop(callback_url: str, balance: str = "1000.00", name: str = "Shop") -> Actor:
    """A verified merchant with ``balance`` available whose callback URL is ``callback_url``."""
    actor = make_actor(name=name)
    Merchant.objects.filter(pk=actor.merchant.pk).update(callback_url=callback_url)
    actor.merchant.refresh_from_db()
    if Decimal(balance):
        wallet_admin_credit(merchant=actor.merchant, amount=Decimal(balance), reason="test")
    return actor


def money(actor: Actor) -> dict[str, Decimal]:
    return wallet_balances(merchant=actor.merchant)


def wallet_clean() -> None:
    report = wallet_invariants_check()
    assert report.clean, report


def settled(condition: Callable[[], object], what: str, worker: Process) -> None:
    """Polls until the worker has done what the burst queued (the worker must stay up)."""
    wait_until(condition, what, alive=[worker])


def client_token(base: str, actor: Actor, partner: int) -> dict[str, str]:
    """The ``Authorization`` header of a fresh client token for the user behind ``partner``."""
    from tests.factories import auth_body

    response = requests.post(
        f"{base}/auth/authenticate-client",
        json=auth_body(partner),
        headers=actor.headers,
        timeout=TIMEOUT,
    )
    return {"Authorization": f"Bearer {answer(response).data['token']}"}
