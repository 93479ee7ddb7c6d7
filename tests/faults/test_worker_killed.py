"""A Celery worker SIGKILLed in the middle of a task, then started again.

"In the middle" is made certain, not hoped for: the callback endpoint holds the worker's request
open until the kill (deliveries, approvals), or the test holds the merchant's wallet rows so the
worker waits on them inside its transaction, which PostgreSQL shows in ``pg_stat_activity``
(fills, cancels). The whole worker dies with its task, so the message is never acknowledged nor
rejected: what brings the work back is the periodic sweeps, once their deadlines (the delivery
lease, the purchase grace, the cancel grace) have passed on the service clock."""

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from merchants.models import WebhookDelivery, WebhookEvent
from merchants.webhooks import LEASE, webhook_events_due
from tests.factories import Actor
from tests.faults.callback import CallbackServer
from tests.faults.conftest import (
    TRADE_URL,
    bought,
    buy,
    events_delivered,
    every_event_received,
    sweeps_send,
)
from tests.faults.database import backends_alive, backends_waiting_on_lock, rows_locked
from tests.faults.processes import Process, wait_until
from tests.withdrawals.conftest import make_listing, money, wallet_clean
from trading.models import CatalogItem, SandboxPurchase, Status, Trade, TradeEvent, TradeItem
from trading.services.sweeps import PURCHASE_GRACE
from wallet.models import Account, Transfer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WALLET_UPDATE = 'UPDATE "wallet_account"'


def of_type(event_type: str) -> Callable[[object], bool]:
    return lambda received: received.json.get("type") == event_type  # type: ignore[attr-defined]


def spendable_and_locked(actor: Actor) -> tuple[Decimal, Decimal]:
    balances = money(actor)
    return balances["available"], balances["locked"]


def seconds(delta: timedelta) -> int:
    return int(delta.total_seconds()) + 1


def killed_while_waiting_on_the_wallet(actor: Actor, worker: Process, start: Callable[[], None]):  # type: ignore[no-untyped-def]
    """Holds the merchant's wallet rows, runs ``start``, waits until the worker blocks on them
    inside its task's transaction, SIGKILLs it, then lets the rows go and waits until the dead
    worker's transaction is gone (rolled back: it never committed)."""
    accounts = list(Account.objects.filter(merchant=actor.merchant).values_list("pk", flat=True))
    with rows_locked("wallet_account", accounts):
        start()
        wait_until(
            lambda: backends_waiting_on_lock(WALLET_UPDATE),
            "the worker at the wallet",
            alive=[worker],
        )
        blocked = backends_waiting_on_lock(WALLET_UPDATE)
        worker.kill()
    wait_until(lambda: not backends_alive(blocked), "the killed worker's transaction to end")


def test_a_webhook_delivery_cut_by_a_kill_is_delivered_after_the_restart(
    api: APIClient,
    shop: Actor,
    callback: CallbackServer,
    catalog_item: CatalogItem,
    worker: Process,
    clock_advance: Callable[[int], None],
) -> None:
    trade_id = bought(api, shop, [make_listing(catalog_item, "10.00")])
    before = money(shop)
    callback.hold(of_type("trade.active"))
    response = api.post(
        f"/sandbox/trades/{trade_id}/events",
        {"event": "purchased"},
        format="json",
        headers=shop.headers,
    )
    assert response.status_code == 200, response.content
    event = WebhookEvent.objects.get(subject_id=trade_id, type="trade.active")
    wait_until(lambda: callback.count(str(event.id)) == 1, "the delivery", alive=[worker])
    worker.kill()
    callback.release()

    # The attempt died with the worker: nothing recorded, the row still leased to the dead one.
    event.refresh_from_db()
    assert (event.status, event.attempts) == ("pending", 0)
    assert not WebhookDelivery.objects.filter(event=event).exists()
    assert str(event.id) not in webhook_events_due()

    worker.start()
    clock_advance(seconds(LEASE))
    assert str(event.id) in webhook_events_due()
    sweeps_send()
    wait_until(lambda: events_delivered(shop), "every event delivered", alive=[worker])

    event.refresh_from_db()
    assert (event.attempts, event.last_error) == (1, "")
    assert list(WebhookDelivery.objects.filter(event=event).values_list("status_code")) == [(200,)]
    first, again = [r for r in callback.received if r.json["id"] == str(event.id)]
    assert first.body == again.body  # same id, same body: receivers de-duplicate on the id
    assert Trade.objects.get(pk=trade_id).status == Status.ACTIVE
    assert money(shop) == before
    every_event_received(shop, callback)
    assert wallet_clean()


def test_an_approval_cut_by_a_kill_is_asked_again_and_decided_once(
    api: APIClient,
    shop: Actor,
    callback: CallbackServer,
    catalog_item: CatalogItem,
    worker: Process,
    clock_advance: Callable[[int], None],
) -> None:
    callback.hold(of_type("trade.initiated"))
    trade_id = buy(api, shop, [make_listing(catalog_item, "10.00")])
    approval = WebhookEvent.objects.get(subject_id=trade_id, is_approval=True)
    wait_until(lambda: callback.count(str(approval.id)) == 1, "the approval", alive=[worker])
    worker.kill()
    callback.release()

    approval.refresh_from_db()
    assert (approval.status, approval.attempts) == ("pending", 0)
    assert Trade.objects.get(pk=trade_id).status == Status.INITIATED
    assert money(shop)["locked"] == Decimal("10.50")

    worker.start()
    clock_advance(seconds(LEASE))
    sweeps_send()
    (item,) = TradeItem.objects.filter(trade_id=trade_id)
    wait_until(
        lambda: TradeItem.objects.filter(pk=item.pk).exclude(purchase_ref="").exists(),
        "the purchase after the approval",
        alive=[worker],
    )
    wait_until(lambda: events_delivered(shop), "every event delivered", alive=[worker])

    assert callback.count(str(approval.id)) == 2  # asked again: the first answer never arrived
    approval.refresh_from_db()
    assert (approval.status, approval.attempts) == ("delivered", 1)
    assert TradeEvent.objects.filter(trade_id=trade_id, kind="approved").count() == 1
    assert list(SandboxPurchase.objects.values_list("key", flat=True)) == [f"ti-{item.pk}"]
    assert Trade.objects.get(pk=trade_id).status == Status.PENDING
    assert spendable_and_locked(shop) == (Decimal("989.50"), Decimal("10.50"))
    every_event_received(shop, callback)
    assert wallet_clean()


def test_a_quick_fill_cut_between_purchase_and_record_buys_each_unit_once(
    api: APIClient,
    shop: Actor,
    callback: CallbackServer,
    catalog_item: CatalogItem,
    worker: Process,
    clock_advance: Callable[[int], None],
) -> None:
    cheap, dearer = make_listing(catalog_item, "10.00"), make_listing(catalog_item, "10.40")
    callback.hold(of_type("trade.initiated"))
    response = api.post(
        "/secure/buy/quick",
        {"tradeUrl": TRADE_URL, "itemId": catalog_item.id, "maxPrice": 12, "amount": 2},
        format="json",
        headers=shop.headers,
    )
    assert response.status_code == 200, response.content
    trade_id = response.json()["data"]["id"]
    wait_until(lambda: callback.ids("trade.initiated"), "the approval", alive=[worker])
    assert money(shop)["locked"] == Decimal("24.00")  # the worst case: 2 x 12.00

    # Approved; the fill buys the first unit, then waits to hand back its savings.
    killed_while_waiting_on_the_wallet(shop, worker, callback.release)
    first, second = TradeItem.objects.filter(trade_id=trade_id).order_by("position")
    assert list(SandboxPurchase.objects.values_list("key", "listing_id")) == [
        (f"ti-{first.pk}", cheap.id)
    ]
    assert {(row.status, row.listing_id) for row in (first, second)} == {(Status.PENDING, "")}
    assert money(shop)["locked"] == Decimal("24.00")

    worker.start()
    clock_advance(seconds(PURCHASE_GRACE))
    sweeps_send()
    wait_until(
        lambda: (
            not TradeItem.objects.filter(
                trade_id=trade_id, status=Status.PENDING, listing_id=""
            ).exists()
        ),
        "every unit filled or failed",
        alive=[worker],
    )
    wait_until(lambda: events_delivered(shop), "every event delivered", alive=[worker])

    first.refresh_from_db()
    second.refresh_from_db()
    assert [(r.status, r.listing_id, r.price) for r in (first, second)] == [
        (Status.PENDING, cheap.id, Decimal("10.50")),
        (Status.PENDING, dearer.id, Decimal("10.92")),
    ]
    assert sorted(SandboxPurchase.objects.values_list("key", "listing_id")) == sorted(
        [(f"ti-{first.pk}", cheap.id), (f"ti-{second.pk}", dearer.id)]
    )
    savings = Transfer.objects.filter(kind="QUICK_SAVINGS").values_list("cause_id", flat=True)
    assert sorted(savings) == sorted([str(first.pk), str(second.pk)])  # each handed back once
    assert Trade.objects.get(pk=trade_id).total_price == Decimal("21.42")
    assert spendable_and_locked(shop) == (Decimal("978.58"), Decimal("21.42"))
    every_event_received(shop, callback)
    assert wallet_clean()


def test_a_cancel_cut_before_its_refund_refunds_once_after_the_restart(
    api: APIClient,
    shop: Actor,
    callback: CallbackServer,
    catalog_item: CatalogItem,
    worker: Process,
    clock_advance: Callable[[int], None],
) -> None:
    listings = [make_listing(catalog_item, "10.00"), make_listing(catalog_item, "10.00")]
    trade_id = bought(api, shop, listings)
    clock_advance(31 * 60)  # cancels are refused for the first 30 minutes

    def cancel() -> None:
        response = api.post(f"/secure/buy/{trade_id}/cancel", headers=shop.headers)
        assert response.status_code == 200, response.content
        assert response.json()["data"]["cancelled"] == 2

    killed_while_waiting_on_the_wallet(shop, worker, cancel)
    items = list(TradeItem.objects.filter(trade_id=trade_id))
    assert {(i.status, i.cancel_requested_at is not None) for i in items} == {
        (Status.PENDING, True)
    }
    assert money(shop)["locked"] == Decimal("21.00")

    worker.start()
    clock_advance(31)  # past the grace a completion task gets before the sweep steps in
    sweeps_send()
    wait_until(
        lambda: Trade.objects.filter(pk=trade_id, status=Status.CANCELED).exists(),
        "the cancel completed",
        alive=[worker],
    )
    wait_until(lambda: events_delivered(shop), "every event delivered", alive=[worker])

    for item in items:
        ends = TradeEvent.objects.filter(item=item, to_status=Status.CANCELED)
        assert ends.count() == 1
        refunds = Transfer.objects.filter(kind="REFUND", cause_id=str(item.pk))
        assert refunds.count() == 1
    assert set(SandboxPurchase.objects.values_list("status", flat=True)) == {"canceled"}
    assert SandboxPurchase.objects.count() == 2
    assert spendable_and_locked(shop) == (Decimal("1000.00"), Decimal("0"))
    every_event_received(shop, callback)
    assert wallet_clean()
