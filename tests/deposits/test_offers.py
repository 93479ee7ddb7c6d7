"""The trade offer through the game platform: the bots' steps, their failures and retries, offer
expiry, the autopilot, and running each step twice."""

from decimal import Decimal

import pytest
from django.test import override_settings

from sandbox.models import SandboxOffer
from sandbox.services.autopilot import sandbox_autopilot_step
from tests.deposits.conftest import ak_item, configure_owner, deposit, fleet
from tests.factories import assert_error
from tests.withdrawals.conftest import ok_data, sandbox_event, wallet_clean
from trading.deposits.services.offers import deposit_offer_send
from trading.deposits.services.sweeps import (
    deposit_offers_abandon,
    deposit_offers_due,
    deposit_offers_expire,
)
from trading.models import Trade, TradeEvent
from trading.tasks import sweep_deposit_offers

pytestmark = pytest.mark.django_db


def created_without_worker(api, owner) -> str:
    """A deposit whose offer task has not run yet (its on-commit work is not executed)."""
    response = api.post(
        "/client/trading/deposit",
        {"items": [{"itemId": ak_item(0), "price": 36}]},
        format="json",
        headers=owner,
    )
    return ok_data(response)["id"]


def status(trade_id: str) -> str:
    return Trade.objects.get(pk=trade_id).status


def test_offer_refused_by_the_platform_fails_the_deposit(api, desk, owner):
    trade_id = created_without_worker(api, owner)
    configure_owner(escrow_days=3)

    desk.run(lambda: deposit_offer_send(trade_id=trade_id))

    trade = Trade.objects.get(pk=trade_id)
    assert (trade.status, trade.error) == ("failed", "USER_ESCROW")
    assert not SandboxOffer.objects.exists()


def test_items_gone_from_the_inventory_fail_the_offer(api, desk, owner):
    trade_id = created_without_worker(api, owner)
    configure_owner(inventory=[])

    desk.run(lambda: deposit_offer_send(trade_id=trade_id))

    assert Trade.objects.get(pk=trade_id).error == "ITEMS_UNAVAILABLE"


def test_bots_offline_leave_the_deposit_for_the_sweep(api, desk, alice, owner, clock_advance):
    trade_id = created_without_worker(api, owner)
    fleet(api, alice, "offline")

    desk.run(lambda: deposit_offer_send(trade_id=trade_id))
    assert status(trade_id) == "initiated"
    assert deposit_offers_due() == []  # not before its grace period

    clock_advance(61)
    assert deposit_offers_due() == [trade_id]
    fleet(api, alice, "online")
    desk.run(sweep_deposit_offers)

    assert status(trade_id) == "active"
    assert deposit_offers_due() == []


def test_a_deposit_the_bots_cannot_offer_for_thirty_minutes_fails(
    api, desk, alice, owner, clock_advance
):
    trade_id = created_without_worker(api, owner)
    fleet(api, alice, "offline")
    clock_advance(29 * 60)
    assert desk.run(deposit_offers_abandon) == 0

    clock_advance(2 * 60)
    assert desk.run(deposit_offers_abandon) == 1
    assert desk.run(deposit_offers_abandon) == 0

    trade = Trade.objects.get(pk=trade_id)
    assert (trade.status, trade.error) == ("failed", "SERVICE_UNAVAILABLE")


def test_bot_steps_on_demand_through_sandbox_events(api, desk, alice, owner):
    trade_id = created_without_worker(api, owner)

    pending = ok_data(sandbox_event(desk, alice, trade_id, "offer_created"))
    assert pending["status"] == "pending"
    assert "offerID" not in pending
    assert pending["botInfo"]["name"] == "Bot Atlas"

    fleet(api, alice, "degraded")
    assert_error(
        sandbox_event(desk, alice, trade_id, "offer_sent"), 424, 31, "PLATFORM_UNAVAILABLE"
    )
    fleet(api, alice, "online")
    active = ok_data(sandbox_event(desk, alice, trade_id, "offer_sent"))
    assert active["status"] == "active"
    assert active["offerID"] == SandboxOffer.objects.get().offer_id

    response = sandbox_event(desk, alice, trade_id, "offer_created")
    assert_error(response, 409, 3002, "INVALID_TRANSITION")


def test_deposit_items_move_together_in_sandbox_events(desk, alice, owner):
    trade_id = ok_data(deposit(desk, owner, ak_item(0), ak_item(1)))["id"]

    response = sandbox_event(desk, alice, trade_id, "accepted", item_ids=[ak_item(0)])

    assert_error(response, 409, 3002, "INVALID_TRANSITION")
    assert status(trade_id) == "active"


def test_illegal_deposit_events_are_refused(desk, alice, owner):
    trade_id = ok_data(deposit(desk, owner, ak_item(0)))["id"]

    for event in ("hold_ended", "reversed", "purchased"):
        assert_error(sandbox_event(desk, alice, trade_id, event), 409, 3002, "INVALID_TRANSITION")
    failed = ok_data(sandbox_event(desk, alice, trade_id, "failed"))
    assert (failed["status"], failed["error"]) == ("failed", "PLATFORM_ERROR")
    assert_error(sandbox_event(desk, alice, trade_id, "accepted"), 409, 3002, "INVALID_TRANSITION")


def test_an_ignored_offer_expires_and_the_deposit_is_declined(desk, owner, clock_advance):
    trade_id = ok_data(deposit(desk, owner, ak_item(0)))["id"]
    clock_advance(14 * 60)
    assert desk.run(deposit_offers_expire) == 0

    clock_advance(2 * 60)
    assert desk.run(deposit_offers_expire) == 1
    assert desk.run(deposit_offers_expire) == 0

    trade = Trade.objects.get(pk=trade_id)
    assert (trade.status, trade.error, trade.offer_expires_at) == (
        "declined",
        "OFFER_EXPIRED",
        None,
    )


def test_accepted_offer_does_not_expire(desk, alice, owner, clock_advance):
    trade_id = ok_data(deposit(desk, owner, ak_item(0)))["id"]
    ok_data(sandbox_event(desk, alice, trade_id, "accepted"))
    clock_advance(60 * 60)

    assert desk.run(deposit_offers_expire) == 0
    assert status(trade_id) == "hold"


def test_running_the_offer_task_twice_makes_one_offer_and_one_webhook_each(api, desk, owner, hooks):
    trade_id = created_without_worker(api, owner)

    desk.run(lambda: deposit_offer_send(trade_id=trade_id))
    events = TradeEvent.objects.filter(trade_id=trade_id).count()
    desk.run(lambda: deposit_offer_send(trade_id=trade_id))

    assert SandboxOffer.objects.count() == 1
    assert TradeEvent.objects.filter(trade_id=trade_id).count() == events
    assert [r.json["type"] for r in hooks.received] == ["trade.pending", "trade.active"]


@override_settings(SANDBOX_AUTOPILOT_SECONDS=5)
def test_the_autopilot_takes_a_deposit_from_initiated_to_completed(
    desk, alice, owner, clock_advance
):
    trade_id = ok_data(deposit(desk, owner, ak_item(0)))["id"]
    seen = [status(trade_id)]
    for _ in range(2):
        clock_advance(6)
        desk.run(sandbox_autopilot_step)
        seen.append(status(trade_id))

    assert seen == ["active", "hold", "completed"]
    assert Trade.objects.get(pk=trade_id).pending_credit == Decimal("0.00")
    assert wallet_clean()
