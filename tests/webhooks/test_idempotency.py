"""At least once, never twice: deliveries, purchases, quick fills and cancel completions may run
again (a retried task, a sweep, a second worker) without sending, buying or refunding twice."""

from decimal import Decimal

import pytest

from core import clock
from merchants.webhooks import delivery, signing
from merchants.webhooks.models import WebhookDelivery
from merchants.webhooks.tasks import sweep_webhooks
from sandbox.models import SandboxListing, SandboxPurchase
from tests.webhooks.conftest import TRADE_URL, approval_event, bought, trade_events
from tests.withdrawals.conftest import make_listing
from trading.marketplace import get_marketplace
from trading.models import Trade, TradeItem
from trading.tasks import sweep_cancels, sweep_purchases
from trading.withdrawals.services.cancels import (
    withdrawal_cancels_complete,
    withdrawal_cancels_pending,
)
from trading.withdrawals.services.fulfilment import withdrawal_purchase
from trading.withdrawals.services.quick import quick_fill
from trading.withdrawals.services.sweeps import PURCHASE_GRACE, withdrawal_purchases_due
from wallet.models import Transfer
from wallet.selectors import wallet_balances, wallet_invariants_check

pytestmark = pytest.mark.django_db


class WorkerLostError(BaseException):
    """The worker process died (not an error the code under test could catch)."""


def balances(actor) -> tuple[Decimal, Decimal]:  # type: ignore[no-untyped-def]
    got = wallet_balances(merchant=actor.merchant)
    return got["available"], got["locked"]


def approve_losing_the_purchase_task(trade_id: str) -> None:
    """The merchant approves, but the purchase task queued after commit is lost."""
    delivery.webhook_event_deliver(event_id=str(approval_event(trade_id).id))
    assert Trade.objects.get(pk=trade_id).status == "pending"


def test_delivering_an_event_twice_sends_it_once(api, shop, listing, hooks, deliver):
    trade_id = bought(api, shop, listing)
    approval = str(approval_event(trade_id).id)
    deliver(approval)
    deliver(approval)
    pending = str(trade_events(trade_id)[-1].id)
    deliver(pending)
    deliver(pending)

    assert [r.headers["webhook-id"] for r in hooks.received] == [approval, pending]
    assert WebhookDelivery.objects.count() == 2
    assert SandboxPurchase.objects.count() == 1
    assert delivery.webhook_events_due() == []


def test_a_claim_whose_worker_died_waits_for_its_lease_then_goes_out_once(
    api, shop, listing, hooks, deliver, past_lease, clock_advance, time_passes, monkeypatch
):
    trade_id = bought(api, shop, listing)
    event = approval_event(trade_id)

    def crash(**_: object) -> signing.PostResult:
        raise WorkerLostError

    real_post = delivery.signed_post
    monkeypatch.setattr(delivery, "signed_post", crash)
    with pytest.raises(WorkerLostError):
        delivery.webhook_event_deliver(event_id=str(event.id))  # claimed, then the worker died
    monkeypatch.setattr(delivery, "signed_post", real_post)

    event.refresh_from_db()
    assert event.lease_until is not None
    assert (event.status, event.attempts) == ("pending", 0)
    assert hooks.received == []
    assert str(event.id) not in delivery.webhook_events_due()
    deliver(str(event.id))  # a second worker while the lease is live: nothing
    clock_advance(24 * 3600)  # the sandbox clock (any merchant's advance) never ends a lease
    assert str(event.id) not in delivery.webhook_events_due()
    deliver(str(event.id))
    time_passes(30)
    deliver(str(event.id))
    assert hooks.received == []
    assert not WebhookDelivery.objects.exists()

    past_lease(event.lease_until)
    assert delivery.webhook_events_due() == [str(event.id)]
    deliver(str(event.id))
    deliver(str(event.id))
    assert [r.headers["webhook-id"] for r in hooks.received] == [str(event.id)]
    event.refresh_from_db()
    assert (event.status, event.attempts, event.lease_until) == ("delivered", 1, None)
    assert Trade.objects.get(pk=trade_id).status == "pending"
    assert SandboxPurchase.objects.count() == 1


def test_a_worker_that_outlived_its_lease_cannot_overwrite_the_outcome(
    api, shop, listing, hooks, deliver, past_lease, monkeypatch
):
    """Worker A's call hangs past its lease; worker B delivers (approved); A's late 500 is
    dropped instead of counting as a failed attempt."""
    trade_id = bought(api, shop, listing)
    event = approval_event(trade_id)
    real_post = delivery.signed_post

    def hanging_post(**kwargs: object) -> signing.PostResult:
        claimed = delivery.WebhookEvent.objects.get(pk=event.pk)
        assert claimed.lease_until is not None
        past_lease(claimed.lease_until)
        monkeypatch.setattr(delivery, "signed_post", real_post)
        deliver(str(event.id))  # worker B
        return signing.PostResult(500, b"", 10_000, "")

    monkeypatch.setattr(delivery, "signed_post", hanging_post)
    deliver(str(event.id))  # worker A

    event.refresh_from_db()
    assert (event.status, event.attempts) == ("delivered", 1)
    assert [d.status_code for d in WebhookDelivery.objects.filter(event=event)] == [200]
    assert len(hooks.received) == 1
    assert Trade.objects.get(pk=trade_id).status == "pending"


def test_the_sweep_resends_events_whose_delivery_task_was_lost(api, shop, listing, hooks):
    trade_id = bought(api, shop, listing)  # its delivery task is never run
    assert sweep_webhooks() == 1  # the approval
    assert Trade.objects.get(pk=trade_id).status == "pending"
    assert sweep_webhooks() == 1  # trade.pending, whose task was lost too
    assert sweep_webhooks() == 0
    assert [r.json["type"] for r in hooks.received] == ["trade.initiated", "trade.pending"]
    assert WebhookDelivery.objects.count() == 2


def test_withdrawal_purchase_twice_buys_once(api, shop, listing):
    trade_id = bought(api, shop, listing)
    approve_losing_the_purchase_task(trade_id)
    item = TradeItem.objects.get(trade_id=trade_id)
    assert item.purchase_ref == ""

    withdrawal_purchase(trade_id=trade_id)
    withdrawal_purchase(trade_id=trade_id)

    purchase = SandboxPurchase.objects.get()
    item.refresh_from_db()
    assert (item.status, item.purchase_ref) == ("pending", f"ti-{item.pk}")
    assert purchase.key == item.purchase_ref
    assert not SandboxListing.objects.filter(pk=listing.id).exists()
    assert balances(shop) == (Decimal("989.50"), Decimal("10.50"))
    assert [e.type for e in trade_events(trade_id)] == ["trade.initiated", "trade.pending"]
    assert wallet_invariants_check().clean


def test_a_purchase_made_before_the_worker_died_is_found_again_by_its_key(api, shop, listing):
    trade_id = bought(api, shop, listing)
    approve_losing_the_purchase_task(trade_id)
    item = TradeItem.objects.get(trade_id=trade_id)
    # The first worker bought the listing and died before recording the order.
    first = get_marketplace().purchase(
        listing_id=listing.id, max_price=Decimal("10.00"), key=f"ti-{item.pk}"
    )
    assert first.ok

    withdrawal_purchase(trade_id=trade_id)  # the listing is gone, but it is ours

    item.refresh_from_db()
    assert (item.status, item.purchase_ref, item.error) == ("pending", first.ref, "")
    assert SandboxPurchase.objects.count() == 1
    assert balances(shop) == (Decimal("989.50"), Decimal("10.50"))


def test_a_failed_purchase_refunds_once(api, shop, listing):
    trade_id = bought(api, shop, listing)
    approve_losing_the_purchase_task(trade_id)
    SandboxListing.objects.filter(pk=listing.id).delete()  # sold to someone else meanwhile

    withdrawal_purchase(trade_id=trade_id)
    withdrawal_purchase(trade_id=trade_id)

    trade = Trade.objects.get(pk=trade_id)
    assert (trade.status, trade.error) == ("failed", "LISTING_UNAVAILABLE")
    assert balances(shop) == (Decimal("1000.00"), Decimal("0.00"))
    assert Transfer.objects.filter(kind="REFUND").count() == 1
    assert [e.type for e in trade_events(trade_id)][-1] == "trade.failed"
    assert len(trade_events(trade_id)) == 3
    assert wallet_invariants_check().clean


def _quick(api, shop, catalog_item, amount: int) -> str:  # type: ignore[no-untyped-def]
    response = api.post(
        "/secure/buy/quick",
        {"tradeUrl": TRADE_URL, "itemId": catalog_item.id, "maxPrice": 21, "amount": amount},
        format="json",
        headers=shop.headers,
    )
    assert response.status_code == 200, response.content
    return str(response.json()["data"]["id"])


def test_quick_fill_twice_settles_once(api, shop, catalog_item):
    cheap = make_listing(catalog_item, "10.00")
    dearer = make_listing(catalog_item, "12.00")
    too_dear = make_listing(catalog_item, "20.01")  # 21.02 with the fee: above maxPrice 21
    trade_id = _quick(api, shop, catalog_item, 2)
    assert balances(shop) == (Decimal("958.00"), Decimal("42.00"))
    approve_losing_the_purchase_task(trade_id)

    quick_fill(trade_id=trade_id)
    quick_fill(trade_id=trade_id)

    rows = list(TradeItem.objects.filter(trade_id=trade_id).order_by("position"))
    assert [(r.listing_id, r.price, r.locked, r.status) for r in rows] == [
        (cheap.id, Decimal("10.50"), Decimal("10.50"), "pending"),
        (dearer.id, Decimal("12.60"), Decimal("12.60"), "pending"),
    ]
    assert all(r.purchase_ref == f"ti-{r.pk}" for r in rows)
    assert SandboxPurchase.objects.count() == 2
    assert SandboxListing.objects.filter(pk=too_dear.id).exists()
    assert Trade.objects.get(pk=trade_id).total_price == Decimal("23.10")
    # Savings (21.00 - 10.50 and 21.00 - 12.60) went back once each.
    assert balances(shop) == (Decimal("976.90"), Decimal("23.10"))
    assert Transfer.objects.filter(kind="QUICK_SAVINGS").count() == 2
    assert [e.type for e in trade_events(trade_id)] == [
        "trade.initiated",
        "trade.pending",
        "trade.updated",
        "trade.updated",
    ]
    assert wallet_invariants_check().clean


def test_the_purchase_sweep_picks_up_approved_trades_whose_task_was_lost(
    api, shop, catalog_item, listing, clock_advance
):
    make_listing(catalog_item, "9.00")  # cheaper: the quick trade takes it, not ``listing``
    plain = bought(api, shop, listing)
    quick = _quick(api, shop, catalog_item, 1)
    approve_losing_the_purchase_task(plain)
    approve_losing_the_purchase_task(quick)

    assert withdrawal_purchases_due() == []  # still within the grace period
    assert sweep_purchases() == 0
    clock_advance(int(PURCHASE_GRACE.total_seconds()) + 1)
    assert set(withdrawal_purchases_due()) == {plain, quick}

    assert sweep_purchases() == 2
    assert withdrawal_purchases_due() == []
    assert sweep_purchases() == 0

    assert SandboxPurchase.objects.count() == 2
    assert all(i.purchase_ref for i in TradeItem.objects.all())
    assert {t.status for t in Trade.objects.all()} == {"pending"}
    # 10.50 for the plain trade, 9.45 (of a 21.00 ceiling) for the quick one.
    assert balances(shop) == (Decimal("980.05"), Decimal("19.95"))
    assert wallet_invariants_check().clean


def test_completing_a_cancel_twice_refunds_once(api, shop, listing, deliver, clock_advance):
    trade_id = bought(api, shop, listing)
    deliver(str(approval_event(trade_id).id))  # approved and bought
    purchase = SandboxPurchase.objects.get()
    clock_advance(31 * 60)  # cancels need the trade to be 30 minutes old
    cancelled = api.post(f"/secure/buy/{trade_id}/cancel", headers=shop.headers)
    assert cancelled.status_code == 200, cancelled.content
    assert cancelled.json()["data"]["cancelled"] == 1
    # The completion task queued after commit is lost.
    item = TradeItem.objects.get(trade_id=trade_id)
    assert item.status == "pending"
    assert item.cancel_requested_at is not None
    assert withdrawal_cancels_pending() == []
    clock_advance(31)
    assert withdrawal_cancels_pending() == [trade_id]

    assert withdrawal_cancels_complete(trade_id=trade_id) == 1
    assert withdrawal_cancels_complete(trade_id=trade_id) == 0
    assert sweep_cancels() == 0

    assert Trade.objects.get(pk=trade_id).status == "canceled"
    assert withdrawal_cancels_pending() == []
    assert balances(shop) == (Decimal("1000.00"), Decimal("0.00"))
    assert Transfer.objects.filter(kind="REFUND").count() == 1
    purchase.refresh_from_db()
    assert purchase.status == SandboxPurchase.Status.CANCELED
    assert [e.type for e in trade_events(trade_id)].count("trade.canceled") == 1
    assert clock.now() > Trade.objects.get(pk=trade_id).created_at
    assert wallet_invariants_check().clean
