"""Fault tests: real processes (a Celery worker, gunicorn, a Redis of our own) against the test
database, so every test commits (``transaction=True``) and tasks travel through a broker.

The world moves only when a test moves it: no autopilot, no beat (a test sends the sweeps beat
would send, after moving the service clock past their deadlines)."""

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis
import requests
from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone
from rest_framework.test import APIClient

from config.celery import app as celery_app
from merchants.webhooks.models import WebhookEvent
from merchants.webhooks.tasks import sweep_webhooks
from sandbox.models import SandboxListing
from tests.factories import Actor, make_actor, trade_url
from tests.faults.callback import CallbackServer
from tests.faults.database import database_url
from tests.faults.processes import (
    Process,
    celery_worker,
    free_port,
    service_env,
    wait_until,
    web_server,
)
from tests.withdrawals.conftest import catalog_item, funded
from trading.models import Status, TradeItem
from trading.tasks import sweep_cancels, sweep_purchases

__all__ = ["catalog_item"]  # a fixture shared with the withdrawal tests

TRADE_URL = trade_url(42)
FEE = Decimal("1.05")  # a new merchant's 5 % withdraw fee


@pytest.fixture(autouse=True)
def _tasks_go_to_the_broker() -> Iterator[None]:
    celery_app.conf.task_always_eager = False
    yield
    celery_app.conf.task_always_eager = False


@contextmanager
def tasks_run_here() -> Iterator[None]:
    """Setup shortcut: tasks scheduled meanwhile run in the test process, not on the broker."""
    celery_app.conf.task_always_eager = True
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = False


@pytest.fixture
def callback() -> Iterator[CallbackServer]:
    server = CallbackServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def shop(transactional_db: None, callback: CallbackServer) -> Actor:
    """A merchant with 1000.00 available whose callback URL is ``callback``."""
    return funded(make_actor(name="Shop"), "1000.00", callback.url)


@pytest.fixture(scope="module")
def module_worker(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Process]:
    """One solo Celery worker per module on the test database and broker. Booting takes seconds
    on a busy machine, so a test that kills it starts it again and hands the running worker on
    to the next test (between tests it idles; the database and Redis are emptied under it)."""
    env = service_env(database_url=database_url(), redis_url=settings.REDIS_URL)
    process = celery_worker(env, tmp_path_factory.mktemp("worker") / "worker.log")
    yield process.start()
    process.stop()


@pytest.fixture
def worker(module_worker: Process, transactional_db: None) -> Process:
    """The module's worker, running (again, if a failed test left it dead)."""
    if not module_worker.alive():
        module_worker.start()
    return module_worker


@pytest.fixture
def prefork_worker(
    module_worker: Process, transactional_db: None, tmp_path: Path
) -> Iterator[Process]:
    """A worker whose task runs in one pool process; the module's worker is stopped meanwhile
    so that this one takes every task."""
    module_worker.stop()
    env = service_env(database_url=database_url(), redis_url=settings.REDIS_URL)
    process = celery_worker(env, tmp_path / "worker.log", "prefork").start()
    yield process
    process.stop()


def lease_past(rows: QuerySet[Any], field: str = "lease_until") -> None:
    """A dead worker's leases run out. Leases are real time, which a test cannot move in the
    workers' processes (docs/decisions.md, "Clocks"): each is put a second in the past."""
    ended = timezone.now() - timedelta(seconds=1)
    assert rows.filter(**{f"{field}__isnull": False}).update(**{field: ended})


def queued_tasks() -> list[str]:
    """The names of the tasks waiting in the broker's queue (taken by no worker yet)."""
    broker = redis.Redis.from_url(celery_app.conf.broker_url)
    return [orjson.loads(message)["headers"]["task"] for message in broker.lrange("celery", 0, -1)]


def sweeps_send() -> None:
    """The deadline sweeps beat sends, as tasks for whichever worker is up."""
    sweep_webhooks.delay()
    sweep_purchases.delay()
    sweep_cancels.delay()


def buy_body(listings: list[SandboxListing]) -> dict[str, object]:
    """A ``POST /secure/buy`` body for listings at their current price."""
    items = [{"itemId": row.id, "price": float(row.price * FEE)} for row in listings]
    return {"tradeUrl": TRADE_URL, "items": items}


def buy(api: APIClient, actor: Actor, listings: list[SandboxListing]) -> str:
    """``POST /secure/buy`` in the test process; returns the trade id."""
    response = api.post("/secure/buy", buy_body(listings), format="json", headers=actor.headers)
    assert response.status_code == 200, response.content
    return str(response.json()["data"]["id"])


def bought(api: APIClient, actor: Actor, listings: list[SandboxListing]) -> str:
    """A withdrawal approved (the callback answers 200) and bought, all in the test process."""
    with tasks_run_here():
        trade_id = buy(api, actor, listings)
    rows = TradeItem.objects.filter(trade_id=trade_id)
    assert {(row.status, bool(row.purchase_ref)) for row in rows} == {(Status.PENDING, True)}
    return trade_id


def events_delivered(actor: Actor) -> bool:
    return not WebhookEvent.objects.filter(merchant=actor.merchant).exclude(status="delivered")


def every_event_received(actor: Actor, server: CallbackServer) -> None:
    """Each event the service wrote reached the endpoint at least once, with its stored body."""
    bodies = {r.json["id"]: r.json for r in server.received}
    events = list(WebhookEvent.objects.filter(merchant=actor.merchant))
    assert events
    for event in events:
        assert bodies.get(str(event.id)) == event.payload, event.type


@contextmanager
def web_serving(env: dict[str, str], log: Path) -> Iterator[str]:
    """gunicorn on a free port, once ``/health`` says the database, cache and broker are up;
    yields its base URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    web = web_server(env, port, log).start()
    try:
        wait_until(lambda: _healthy(base), "the web server", alive=[web])
        yield base
    finally:
        web.stop()


def _healthy(base: str) -> bool:
    try:
        return requests.get(f"{base}/health", timeout=5).status_code == 200
    except requests.RequestException:  # not listening yet, or still loading the application
        return False
