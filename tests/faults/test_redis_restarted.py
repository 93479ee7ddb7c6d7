"""Redis (broker and cache) restarts while webhook tasks wait in it: every webhook is still
delivered. The machine's shared Redis is never touched: the web server and the worker run on a
Redis of the test's own, which keeps nothing on disk, so the restart loses every queued task.
The database outbox is what survives; the webhook sweep hands its due events out again."""

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import redis
import requests
from kombu import Connection

from merchants.webhooks.tasks import sweep_webhooks
from sandbox.models import SandboxPurchase
from tests.factories import Actor
from tests.faults.callback import CallbackServer
from tests.faults.conftest import buy_body, events_delivered, every_event_received, web_serving
from tests.faults.database import database_url
from tests.faults.processes import (
    Process,
    celery_worker,
    free_port,
    redis_server,
    service_env,
    wait_until,
)
from tests.withdrawals.conftest import make_listing, money, wallet_clean
from trading.models import CatalogItem, Status, TradeItem

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TRADES = 4


class OwnRedis:
    def __init__(self, tmp_path: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = redis_server(self.port, tmp_path / "redis.log")
        self.client = redis.Redis(port=self.port, socket_timeout=2)

    def up(self) -> bool:
        try:
            return bool(self.client.ping())
        except redis.ConnectionError:
            return False

    def start(self) -> None:
        self.process.start()
        wait_until(self.up, "redis to answer", alive=[self.process])

    def restart(self) -> None:
        """Killed and started again on the same port: empty, as after a crash or a failover."""
        self.process.kill()
        self.start()

    def queued(self) -> int:
        """Tasks waiting in the broker (kombu keeps each priority of the queue in a list)."""
        return sum(self.client.llen(key) for key in self.client.keys("celery*"))


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    server = OwnRedis(tmp_path)
    server.start()
    yield server
    server.process.stop()


def test_webhooks_queued_when_redis_restarts_are_all_delivered(
    shop: Actor,
    callback: CallbackServer,
    catalog_item: CatalogItem,
    own_redis: OwnRedis,
    tmp_path: Path,
) -> None:
    env = service_env(database_url=database_url(), redis_url=own_redis.url)
    worker: Process = celery_worker(env, tmp_path / "worker.log").start()
    with web_serving(env, tmp_path / "web.log") as web:

        def buy_over_http() -> str:
            listing = make_listing(catalog_item, "10.00")
            response = requests.post(
                f"{web}/secure/buy", json=buy_body([listing]), headers=shop.headers, timeout=10
            )
            assert response.status_code == 200, response.text
            return str(response.json()["data"]["id"])

        # The worker is held inside the first approval callback; the others wait in Redis.
        callback.hold(lambda _: True)
        trade_ids = [buy_over_http() for _ in range(TRADES)]
        wait_until(lambda: len(callback.received) == 1, "the first delivery", alive=[worker])
        wait_until(lambda: own_redis.queued() == TRADES - 1, "the queued tasks", alive=[worker])

        own_redis.restart()
        assert own_redis.queued() == 0  # the restart lost them
        callback.release()

        # Beat's webhook sweep, sent to the restarted Redis, hands the due events out again.
        with Connection(own_redis.url) as broker:
            sweep_webhooks.apply_async(connection=broker)
        wait_until(
            lambda: (
                TradeItem.objects.filter(trade_id__in=trade_ids).exclude(purchase_ref="").count()
                == TRADES
            ),
            "every trade approved and bought",
            alive=[worker],
        )
        wait_until(lambda: events_delivered(shop), "every event delivered", alive=[worker])
        approvals = callback.ids("trade.initiated")
        assert len(set(approvals)) == TRADES

        # Both processes carry on with the restarted Redis without being restarted themselves.
        late = buy_over_http()
        wait_until(
            lambda: TradeItem.objects.filter(trade_id=late).exclude(purchase_ref="").exists(),
            "a new trade approved and bought",
            alive=[worker],
        )
        wait_until(lambda: events_delivered(shop), "its events delivered", alive=[worker])
    worker.stop()

    every_event_received(shop, callback)
    items = TradeItem.objects.filter(trade__merchant=shop.merchant)
    assert {item.status for item in items} == {Status.PENDING}
    assert SandboxPurchase.objects.count() == items.count() == TRADES + 1
    locked = (TRADES + 1) * Decimal("10.50")
    assert (money(shop)["available"], money(shop)["locked"]) == (1000 - locked, locked)
    assert wallet_clean()
