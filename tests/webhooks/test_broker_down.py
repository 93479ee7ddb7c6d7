"""The broker down when a request commits: the task handed to it after the commit is lost, not
the request. The request answers its success (its work is committed, the event in the outbox),
and once the broker is back the sweep hands the work out."""

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from rest_framework.test import APIClient

from config.celery import app as celery_app
from merchants.webhooks.models import WebhookEvent
from merchants.webhooks.tasks import sweep_webhooks
from sandbox.models import SandboxPurchase
from tests.faults.processes import free_port
from tests.webhooks.conftest import BUY_PRICE, TRADE_URL, shop_actor
from tests.withdrawals.conftest import make_listing
from tests.withdrawals.receiver import Receiver
from trading.models import Trade, TradeItem
from wallet.selectors import wallet_invariants_check

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def outbox() -> list[str]:
    """Overrides the package's: events go to the broker, tasks are not run eagerly."""
    celery_app.conf.task_always_eager = False
    return []


@contextmanager
def broker_down() -> Iterator[None]:
    """The Celery app publishes to a Redis port nobody listens on. Its connection pools are
    rebuilt (as Celery does after a fork) so the next publish connects there."""
    real = celery_app.conf.broker_url
    celery_app.conf.broker_url = f"redis://127.0.0.1:{free_port()}/0"
    celery_app._after_fork()
    try:
        yield
    finally:
        celery_app.conf.broker_url = real
        celery_app._after_fork()


def test_a_committed_buy_answers_200_while_the_broker_is_down_and_the_sweep_recovers(
    hooks: Receiver, catalog_item
):
    shop = shop_actor("Shop", hooks.url)
    listing = make_listing(catalog_item, "10.00")

    with broker_down():
        response = APIClient().post(
            "/secure/buy",
            {"tradeUrl": TRADE_URL, "items": [{"itemId": listing.id, "price": BUY_PRICE}]},
            format="json",
            headers=shop.headers,
        )

    assert response.status_code == 200, response.content
    trade_id = response.json()["data"]["id"]
    assert Trade.objects.get(pk=trade_id).status == "initiated"
    (event,) = WebhookEvent.objects.filter(subject_id=trade_id)
    assert (event.status, event.attempts, event.is_approval) == ("pending", 0, True)
    assert hooks.received == []

    celery_app.conf.task_always_eager = True  # the worker, once the broker is back
    try:
        assert sweep_webhooks() >= 1
    finally:
        celery_app.conf.task_always_eager = False
    assert [r.json["id"] for r in hooks.of_type("trade.initiated")] == [str(event.id)]
    assert Trade.objects.get(pk=trade_id).status == "pending"
    assert TradeItem.objects.get(trade_id=trade_id).purchase_ref
    assert SandboxPurchase.objects.count() == 1
    assert wallet_invariants_check().clean
