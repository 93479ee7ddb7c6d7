"""End to end with a real Celery worker on threads, as production runs it: the API writes the
outbox, the broker (the test Redis) carries the tasks, the worker delivers the approval callback
to a real HTTP endpoint and buys."""

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from rest_framework.test import APIClient
from standardwebhooks.webhooks import Webhook

from config.celery import app as celery_app
from merchants.webhooks.models import WebhookEvent
from sandbox.models import SandboxPurchase
from tests.webhooks.conftest import BUY_PRICE, TRADE_URL, shop_actor
from tests.withdrawals.receiver import Receiver
from trading.models import Trade, TradeItem

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

DEADLINE_SECONDS = 45
POLL_SECONDS = 0.2


@pytest.fixture(autouse=True)
def outbox() -> list[str]:
    """Overrides the package's: events go to the broker, tasks are not run eagerly."""
    celery_app.conf.task_always_eager = False
    return []


def database_url_of_this_test() -> str:
    db = connection.settings_dict
    user = db["USER"] or "postgres"
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return f"postgres://{user}{password}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url_of_this_test(),
        "REDIS_URL": settings.REDIS_URL,
        "SECRET_KEY": settings.SECRET_KEY,
        "SANDBOX": "true",
        "DB_POOL": "false",
    }
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    log = (tmp_path / "worker.log").open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool",
            "threads",
            "--concurrency",
            "4",
            "-Q",
            "celery",
            "--loglevel",
            "WARNING",
        ],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


def wait_for(condition, what: str, process: subprocess.Popen[bytes]) -> None:  # type: ignore[no-untyped-def]
    """Polls for an outcome until a deadline; the worker must stay alive meanwhile."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        assert process.poll() is None, f"the worker exited with {process.returncode}"
        assert time.monotonic() < deadline, f"no {what} within {DEADLINE_SECONDS} s"
        time.sleep(POLL_SECONDS)


def test_a_withdrawal_is_approved_and_bought_by_a_real_worker(
    hooks: Receiver, catalog_item, worker
):
    from tests.withdrawals.conftest import make_listing

    assert settings.REDIS_URL, "the broker must be the test Redis"
    assert celery_app.conf.broker_url == settings.CELERY_BROKER_URL == settings.REDIS_URL
    shop = shop_actor("Worker shop", hooks.url)
    listing = make_listing(catalog_item, "10.00")

    response = APIClient().post(
        "/secure/buy",
        {"tradeUrl": TRADE_URL, "items": [{"itemId": listing.id, "price": BUY_PRICE}]},
        format="json",
        headers=shop.headers,
    )
    assert response.status_code == 200, response.content
    trade_id = response.json()["data"]["id"]
    assert response.json()["data"]["status"] == "initiated"

    def bought() -> bool:
        return (
            TradeItem.objects.filter(trade_id=trade_id, status="pending")
            .exclude(purchase_ref="")
            .exists()
        )

    wait_for(bought, "purchase", worker)
    assert Trade.objects.get(pk=trade_id).status == "pending"
    assert SandboxPurchase.objects.count() == 1
    wait_for(lambda: len(hooks.received) >= 2, "trade.pending webhook", worker)
    assert [r.json["type"] for r in hooks.received] == ["trade.initiated", "trade.pending"]
    for received in hooks.received:
        Webhook(shop.merchant.webhook_secret).verify(received.body, received.headers)
    # The receiver has the POST before the worker records its answer: wait for the record.
    wait_for(
        lambda: set(WebhookEvent.objects.values_list("status", flat=True)) == {"delivered"},
        "both deliveries recorded",
        worker,
    )
    assert set(WebhookEvent.objects.values_list("status", flat=True)) == {"delivered"}
