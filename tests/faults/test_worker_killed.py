"""A Celery worker SIGKILLed in the middle of a task, then started again.

"In the middle" is made certain, not hoped for: the callback endpoint holds the worker's request
open until the kill (deliveries, approvals), or the test holds the merchant's wallet rows so the
worker waits on them inside its transaction, which PostgreSQL shows in ``pg_stat_activity``
(fills, cancels). Mostly the whole worker dies with its task, so the message is never
acknowledged nor rejected: what brings the work back is the periodic sweeps, once their deadlines
(the delivery lease, the purchase grace, the cancel grace) have passed on the service clock. The
last test kills only the pool process running the task, which the worker itself recovers from."""

import os
import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from config.celery import app as celery_app
from merchants.webhooks.delivery import webhook_events_due
from merchants.webhooks.models import WebhookDelivery, WebhookEvent
from sandbox.models import SandboxListing, SandboxPurchase
from tests.factories import Actor
from tests.faults.callback import CallbackServer
from tests.faults.conftest import (
    TRADE_URL,
    bought,
    buy,
    events_delivered,
    every_event_received,
    lease_past,
    queued_tasks,
    sweeps_send,
)
from tests.faults.database import backends_alive, backends_waiting_on_lock, rows_locked
from tests.faults.processes import Process, child_pids, wait_until
from tests.withdrawals.conftest import make_listing, money, wallet_clean
from tests.withdrawals.receiver import Received
from trading.models import CatalogItem, Status, Trade, TradeEvent, TradeItem
from trading.withdrawals.services.sweeps import PURCHASE_GRACE
from wallet.models import Account, Transfer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WALLET_UPDATE = 'UPDATE "wallet_account"'


def of_type(event_type: str) -> Callable[[Received], bool]:
    return lambda received: received.json.get("type") == event_type


def spendable_and_locked(actor: Actor) -> tuple[Decimal, Decimal]:
    balances = money(actor)
    return balances["available"], balances["locked"]


def seconds(delta: timedelta) -> int:
    return int(delta.total_seconds()) + 1


@contextmanager
def wallet_held(actor: Actor) -> Iterator[None]:
    """The merchant's wallet rows locked by the test: whoever moves its money waits."""
    accounts = list(Account.objects.filter(merchant=actor.merchant).values_list("pk", flat=True))
    with rows_locked("wallet_account", accounts):
        yield


def blocked(
    worker: Process, statement: str = WALLET_UPDATE, besides: Sequence[int] = ()
) -> list[int]:
    """Waits until a task of the worker waits for a row lock inside its transaction."""

    def waiting() -> list[int]:
        return [pid for pid in backends_waiting_on_lock(statement) if pid not in besides]

    wait_until(waiting, f"a task waiting in {statement}", alive=[worker])
    return waiting()


def killed_at_the_wallet(actor: Actor, worker: Process, start: Callable[[], None]) -> None:
    """Runs ``start`` with the wallet held, SIGKILLs the worker once its task waits for the
    wallet, lets the rows go and waits until the dead task's transaction is gone (rolled back:
    it never committed)."""
    with wallet_held(actor):
        start()
        stuck = blocked(worker)
        worker.kill()
    wait_until(lambda: not backends_alive(stuck), "the killed task's transaction to end")


def test_a_webhook_delivery_cut_by_a_kill_is_delivered_after_the_restart(
    api: APIClient,
    shop: Actor,
    callback: CallbackServer,
    catalog_item: CatalogItem,
    worker: Process,
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
    lease_past(WebhookEvent.objects.filter(pk=event.pk))
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
    lease_past(WebhookEvent.objects.filter(pk=approval.pk))
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


def quick_withdrawal_awaiting_approval(
    api: APIClient, actor: Actor, item: CatalogItem, callback: CallbackServer, worker: Process
) -> str:
    """Two units of an item at up to 12.00 each; the worker is held inside the approval."""
    callback.hold(of_type("trade.initiated"))
    response = api.post(
        "/secure/buy/quick",
        {"tradeUrl": TRADE_URL, "itemId": item.id, "maxPrice": 12, "amount": 2},
        format="json",
        headers=actor.headers,
    )
    assert response.status_code == 200, response.content
    wait_until(lambda: callback.ids("trade.initiated"), "the approval", alive=[worker])
    assert money(actor)["locked"] == Decimal("24.00")  # the worst case: 2 x 12.00
    return str(response.json()["data"]["id"])


def each_unit_bought_once(
    actor: Actor,
    callback: CallbackServer,
    worker: Process,
    trade_id: str,
    listings: tuple[SandboxListing, SandboxListing],
) -> None:
    wait_until(
        lambda: (
            not TradeItem.objects.filter(
                trade_id=trade_id, status=Status.PENDING, listing_id=""
            ).exists()
        ),
        "every unit filled or failed",
        alive=[worker],
    )
    wait_until(lambda: events_delivered(actor), "every event delivered", alive=[worker])
    first, second = TradeItem.objects.filter(trade_id=trade_id).order_by("position")
    cheap, dearer = listings
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
    assert spendable_and_locked(actor) == (Decimal("978.58"), Decimal("21.42"))
    every_event_received(actor, callback)
    assert wallet_clean()


def test_a_quick_fill_cut_between_purchase_and_record_buys_each_unit_once(
    api: APIClient,
    shop: Actor,
    callback: CallbackServer,
    catalog_item: CatalogItem,
    worker: Process,
    clock_advance: Callable[[int], None],
) -> None:
    listings = make_listing(catalog_item, "10.00"), make_listing(catalog_item, "10.40")
    trade_id = quick_withdrawal_awaiting_approval(api, shop, catalog_item, callback, worker)

    # Approved; the fill buys the first unit, then waits to hand back its savings.
    killed_at_the_wallet(shop, worker, callback.release)
    first, second = TradeItem.objects.filter(trade_id=trade_id).order_by("position")
    assert list(SandboxPurchase.objects.values_list("key", "listing_id")) == [
        (f"ti-{first.pk}", listings[0].id)
    ]
    assert {(row.status, row.listing_id) for row in (first, second)} == {(Status.PENDING, "")}
    assert money(shop)["locked"] == Decimal("24.00")

    worker.start()
    clock_advance(seconds(PURCHASE_GRACE))
    sweeps_send()
    each_unit_bought_once(shop, callback, worker, trade_id, listings)


def test_a_cancel_of_a_cut_fill_cancels_the_purchase_the_dead_run_made(
    api: APIClient,
    shop: Actor,
    callback: CallbackServer,
    catalog_item: CatalogItem,
    worker: Process,
    clock_advance: Callable[[int], None],
) -> None:
    """The worker stays down past the 30 minutes after which the merchant may cancel: the unit
    the dead run bought has no recorded order, yet its purchase is what the cancel must stop.
    The queued completion is lost as well (the broker went meanwhile), so the sweeps finish
    the cancel, and the purchase sweep, running first, must not buy for units being cancelled."""
    make_listing(catalog_item, "10.00"), make_listing(catalog_item, "10.40")
    trade_id = quick_withdrawal_awaiting_approval(api, shop, catalog_item, callback, worker)
    killed_at_the_wallet(shop, worker, callback.release)
    (bought_unrecorded,) = SandboxPurchase.objects.all()

    clock_advance(31 * 60)
    response = api.post(f"/secure/buy/{trade_id}/cancel", headers=shop.headers)
    assert response.status_code == 200, response.content
    assert response.json()["data"]["cancelled"] == 2
    bought_unrecorded.refresh_from_db()
    assert bought_unrecorded.status == "canceled"  # stopped at the supplier, not only here
    assert "trading.complete_cancels" in queued_tasks()
    celery_app.control.purge()  # the broker went, and the completion with it

    worker.start()
    clock_advance(seconds(PURCHASE_GRACE))
    sweeps_send()
    wait_until(
        lambda: Trade.objects.filter(pk=trade_id, status=Status.CANCELED).exists(),
        "the cancel completed",
        alive=[worker],
    )
    wait_until(lambda: events_delivered(shop), "every event delivered", alive=[worker])
    assert list(SandboxPurchase.objects.values_list("pk", "status")) == [
        (bought_unrecorded.pk, "canceled")
    ]
    for item in TradeItem.objects.filter(trade_id=trade_id):
        assert item.status == Status.CANCELED
        assert Transfer.objects.filter(kind="REFUND", cause_id=str(item.pk)).count() == 1
    assert spendable_and_locked(shop) == (Decimal("1000.00"), Decimal("0"))
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

    killed_at_the_wallet(shop, worker, cancel)
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


def test_a_pool_process_killed_mid_fill_has_its_task_run_again_at_once(
    api: APIClient,
    shop: Actor,
    callback: CallbackServer,
    catalog_item: CatalogItem,
    prefork_worker: Process,
) -> None:
    """Only the pool process dies (an out-of-memory kill): the worker sees it go and rejects
    the unacknowledged task back to the broker (``acks_late``, ``reject_on_worker_lost``); a new
    pool process runs it again at once, no sweep and no clock needed."""
    worker = prefork_worker
    listings = make_listing(catalog_item, "10.00"), make_listing(catalog_item, "10.40")
    trade_id = quick_withdrawal_awaiting_approval(api, shop, catalog_item, callback, worker)

    with wallet_held(shop):
        callback.release()
        killed = blocked(worker)
        (pool_process,) = child_pids(worker.pid)
        os.kill(pool_process, signal.SIGKILL)
        # The same task, run again by a new pool process, waits behind the row locks of the
        # killed run (they go when the test lets the wallet go), having found the purchase the
        # killed run made instead of buying another.
        blocked(worker, 'SELECT "trading_trade"', besides=killed)
        assert child_pids(worker.pid) != [pool_process]
        assert SandboxPurchase.objects.count() == 1
    each_unit_bought_once(shop, callback, worker, trade_id, listings)
    assert not backends_alive(killed)
