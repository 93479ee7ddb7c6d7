"""The approval callback (``trade.initiated`` of a withdrawal) against a real HTTP endpoint:
2xx approves unless it says reject, 4xx rejects, everything else is a failed attempt and three
failed attempts fail the withdrawal with APPROVAL_TIMEOUT. Every attempt is one delivery row."""

import time
from datetime import timedelta
from decimal import Decimal

import orjson
import pytest

from core import clock
from merchants.models import Merchant
from merchants.webhooks import delivery
from merchants.webhooks.models import WebhookDelivery, WebhookEvent
from sandbox.models import SandboxListing, SandboxPurchase
from tests.webhooks.conftest import approval_event, bought, closed_port_url, trade_events
from trading.models import Trade, TradeItem
from wallet.selectors import wallet_balances, wallet_invariants_check

pytestmark = pytest.mark.django_db

AVAILABLE_AFTER_LOCK = Decimal("989.50")


def balances(actor) -> tuple[Decimal, Decimal]:  # type: ignore[no-untyped-def]
    got = wallet_balances(merchant=actor.merchant)
    return got["available"], got["locked"]


def assert_released(actor, trade_id: str, error: str) -> None:  # type: ignore[no-untyped-def]
    trade = Trade.objects.get(pk=trade_id)
    assert trade.status == "failed"
    assert trade.error == error
    assert [(i.status, i.error, i.locked) for i in trade.items.all()] == [
        ("failed", error, Decimal("0.00"))
    ]
    assert balances(actor) == (Decimal("1000.00"), Decimal("0.00"))
    assert not SandboxPurchase.objects.exists()
    failed = trade_events(trade_id)[-1]
    assert (failed.type, failed.sequence, failed.is_approval) == ("trade.failed", 2, False)
    assert failed.payload["trade"]["error"] == error
    assert failed.status == WebhookEvent.Status.PENDING  # a regular event, on its way
    assert wallet_invariants_check().clean


@pytest.mark.parametrize("status", [200, 201, 204])
def test_2xx_approves_and_the_purchase_starts(api, shop, listing, hooks, deliver, status):
    hooks.answer = lambda _: (status, b"")
    trade_id = bought(api, shop, listing)
    assert balances(shop) == (AVAILABLE_AFTER_LOCK, Decimal("10.50"))
    event = approval_event(trade_id)
    deliver(str(event.id))

    event.refresh_from_db()
    assert (event.status, event.attempts, event.next_attempt_at) == ("delivered", 1, None)
    assert event.delivered_at is not None
    (row,) = WebhookDelivery.objects.filter(event=event)
    assert (row.attempt, row.status_code, row.error, row.url) == (1, status, "", hooks.url)
    assert row.latency_ms is not None
    assert row.latency_ms >= 0

    trade = Trade.objects.get(pk=trade_id)
    assert trade.status == "pending"
    (item,) = trade.items.all()
    assert item.status == "pending"
    assert item.purchase_ref == f"ti-{item.pk}"
    purchase = SandboxPurchase.objects.get()
    assert (purchase.key, purchase.listing_id) == (item.purchase_ref, listing.id)
    assert not SandboxListing.objects.filter(pk=listing.id).exists()
    assert balances(shop) == (AVAILABLE_AFTER_LOCK, Decimal("10.50"))
    pending = trade_events(trade_id)[-1]
    assert (pending.type, pending.sequence, pending.is_approval) == ("trade.pending", 2, False)
    assert wallet_invariants_check().clean


def test_2xx_with_a_reject_action_rejects(api, shop, listing, hooks, deliver):
    hooks.answer = lambda _: (200, orjson.dumps({"action": "reject", "reason": "x"}))
    trade_id = bought(api, shop, listing)
    event = approval_event(trade_id)
    deliver(str(event.id))

    event.refresh_from_db()
    assert (event.status, event.attempts) == ("delivered", 1)
    assert WebhookDelivery.objects.get(event=event).status_code == 200
    assert_released(shop, trade_id, "MERCHANT_REJECTED")
    assert SandboxListing.objects.filter(pk=listing.id).exists()


def test_2xx_with_another_action_approves(api, shop, listing, hooks, deliver):
    hooks.answer = lambda _: (200, orjson.dumps({"action": "approve"}))
    trade_id = bought(api, shop, listing)
    deliver(str(approval_event(trade_id).id))
    assert Trade.objects.get(pk=trade_id).status == "pending"


@pytest.mark.parametrize("status", [400, 401, 402, 403, 404, 409, 410, 422])
def test_4xx_rejects_and_releases_the_lock(api, shop, listing, hooks, deliver, status):
    hooks.answer = lambda _: (status, b'{"error": "insufficient user balance"}')
    trade_id = bought(api, shop, listing)
    event = approval_event(trade_id)
    deliver(str(event.id))

    event.refresh_from_db()
    assert (event.status, event.attempts) == ("delivered", 1)
    row = WebhookDelivery.objects.get(event=event)
    assert row.status_code == status
    assert "insufficient user balance" in row.response_excerpt
    assert len(hooks.received) == 1
    assert_released(shop, trade_id, "MERCHANT_REJECTED")


def _answer_with(status: int):  # type: ignore[no-untyped-def]
    return lambda _: (status, b"{}")


def _slow(_):  # type: ignore[no-untyped-def]
    time.sleep(2)  # the remote end is slower than the attempt timeout
    return 200, b"{}"


@pytest.mark.parametrize(
    "failure", ["408", "429", "500", "502", "503", "302", "slow", "closed port"]
)
def test_three_failed_attempts_time_the_approval_out(
    api, shop, listing, hooks, deliver, advance_to, monkeypatch, failure
):
    if failure == "slow":
        monkeypatch.setattr(delivery, "ATTEMPT_TIMEOUT_SECONDS", 0.5)
        hooks.answer = _slow
    elif failure == "closed port":
        Merchant.objects.filter(pk=shop.merchant.pk).update(callback_url=closed_port_url())
    else:
        hooks.answer = _answer_with(int(failure))
    trade_id = bought(api, shop, listing)
    event = approval_event(trade_id)

    for attempt, backoff in ((1, timedelta(seconds=2)), (2, timedelta(seconds=5))):
        before = clock.now()
        deliver(str(event.id))
        after = clock.now()
        event.refresh_from_db()
        assert (event.status, event.attempts) == ("pending", attempt)
        assert event.lease_until is None
        assert event.next_attempt_at is not None
        assert before + backoff <= event.next_attempt_at <= after + backoff
        deliver(str(event.id))  # not due yet: nothing is sent
        event.refresh_from_db()
        assert event.attempts == attempt
        assert Trade.objects.get(pk=trade_id).status == "initiated"  # no answer, no progress
        assert not SandboxPurchase.objects.exists()
        assert balances(shop) == (AVAILABLE_AFTER_LOCK, Decimal("10.50"))
        advance_to(event.next_attempt_at)
    deliver(str(event.id))

    event.refresh_from_db()
    assert (event.status, event.attempts, event.next_attempt_at) == ("failed", 3, None)
    rows = list(WebhookDelivery.objects.filter(event=event))
    assert [r.attempt for r in rows] == [1, 2, 3]
    for row in rows:
        assert row.latency_ms is not None
        if failure in ("slow", "closed port"):
            assert row.status_code is None
            assert row.error
        else:
            assert row.status_code == int(failure)
            assert row.error == ""
    if failure == "slow":
        assert all(r.latency_ms >= 500 for r in rows)
        assert all("timed out" in r.error.lower() for r in rows)
    if failure != "closed port":
        assert len(hooks.received) == 3
        assert {r.headers["webhook-id"] for r in hooks.received} == {str(event.id)}
    assert event.last_error
    assert_released(shop, trade_id, "APPROVAL_TIMEOUT")
    assert SandboxListing.objects.filter(pk=listing.id).exists()
    deliver(str(event.id))  # a finished approval is never sent again
    assert WebhookDelivery.objects.filter(event=event).count() == 3


def test_an_answer_after_failed_attempts_still_decides(
    api, shop, catalog_item, hooks, deliver, advance_to
):
    from tests.withdrawals.conftest import make_listing

    answers = iter([500, 429, 200])
    hooks.answer = lambda _: (next(answers), b"{}")
    approved = bought(api, shop, make_listing(catalog_item, "10.00"))
    event = approval_event(approved)
    for _ in range(3):
        deliver(str(event.id))
        event.refresh_from_db()
        if event.next_attempt_at:
            advance_to(event.next_attempt_at)
    assert (event.status, event.attempts) == ("delivered", 3)
    assert Trade.objects.get(pk=approved).status == "pending"
    assert TradeItem.objects.get(trade_id=approved).purchase_ref

    answers = iter([503, 402])
    rejected = bought(api, shop, make_listing(catalog_item, "10.00"))
    event = approval_event(rejected)
    deliver(str(event.id))
    event.refresh_from_db()
    advance_to(event.next_attempt_at)
    deliver(str(event.id))
    event.refresh_from_db()
    assert (event.status, event.attempts) == ("delivered", 2)
    trade = Trade.objects.get(pk=rejected)
    assert (trade.status, trade.error) == ("failed", "MERCHANT_REJECTED")
    assert wallet_balances(merchant=shop.merchant)["locked"] == Decimal("10.50")
    assert wallet_invariants_check().clean
