"""The sandbox world's moves on withdrawals (decisions 4 and 8): POST /sandbox/trades/{id}/events
with the money of each move, the sandbox clock, and the sweep that ends protection windows."""

from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from core.json import dumps
from merchants.webhooks.outbox import Approval
from tests.factories import assert_error, trade_url
from tests.withdrawals.conftest import (
    Desk,
    advance_minutes,
    make_listing,
    money,
    ok_data,
    sandbox_event,
    service_money,
    wallet_clean,
)
from trading.models import GameSettings, Trade, TradeEvent, TradeItem
from trading.withdrawals.services.lifecycle import withdrawal_approval_resolve
from trading.withdrawals.services.sweeps import withdrawal_holds_due_complete

pytestmark = pytest.mark.django_db

DAY = 24 * 60


def when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@pytest.fixture
def bought(desk, alice_funded, catalog_item) -> dict:
    """alice's self buy of two listings (10.00 and 20.00: 10.50 and 21.00 for her), approved
    and ordered: both items pending."""
    first, second = make_listing(catalog_item, "10.00"), make_listing(catalog_item, "20.00")
    trade = ok_data(
        desk.post(
            "/secure/buy",
            {
                "tradeUrl": trade_url(42),
                "items": [
                    {"itemId": first.id, "price": Decimal("10.50"), "externalId": "one"},
                    {"itemId": second.id, "price": Decimal("21.00"), "externalId": "two"},
                ],
                "externalId": "sbx-1",
            },
            headers=alice_funded.headers,
        )
    )
    return {"id": trade["id"], "first": first.id, "second": second.id}


def move(desk: Desk, actor, trade_id: str, event: str, item_ids=None) -> dict:
    return ok_data(sandbox_event(desk, actor, trade_id, event, item_ids))


def item_statuses(trade_id: str) -> list[str]:
    rows = TradeItem.objects.filter(trade_id=trade_id).order_by("position")
    return list(rows.values_list("status", flat=True))


def unchanged(trade_id: str) -> tuple:
    trade = Trade.objects.get(pk=trade_id)
    return (
        trade.status,
        trade.next_sequence,
        item_statuses(trade_id),
        TradeEvent.objects.filter(trade_id=trade_id).count(),
    )


def test_purchased_before_the_worker_ordered_places_the_order_first(
    api, desk, alice_funded, catalog_item
):
    """Approved but not yet ordered (the worker's purchase still queued), the trade already
    shows pending: the supplier's delivery places the order first, once, then sends the offer."""
    listing = make_listing(catalog_item, "10.00")
    body = {"tradeUrl": trade_url(42), "items": [{"itemId": listing.id, "price": Decimal("10.50")}]}
    # Without the desk, nothing scheduled on commit runs: the approval's answer comes by hand.
    created = api.post(
        "/secure/buy", dumps(body), content_type="application/json", headers=alice_funded.headers
    )
    trade_id = ok_data(created)["id"]
    withdrawal_approval_resolve(trade_id, Approval.APPROVED, "")
    item = TradeItem.objects.get(trade_id=trade_id)
    assert (item.status, item.purchase_ref) == ("pending", "")

    active = move(desk, alice_funded, trade_id, "purchased")

    assert active["status"] == "active"
    item.refresh_from_db()
    assert item.purchase_ref
    assert (
        ok_data(desk.get(f"/secure/trades/{trade_id}", headers=alice_funded.headers))["status"]
        == "active"
    )
    assert wallet_clean()


def test_a_withdrawal_runs_to_completion_and_settles(desk, alice_funded, bought, hooks):
    supplier, revenue = service_money("supplier"), service_money("revenue")
    assert money(alice_funded)["locked"] == Decimal("31.50")

    active = move(desk, alice_funded, "sbx-1", "purchased")
    assert active["status"] == "active"
    assert active["offerID"]
    assert {row["offerID"] for row in active["items"]} == {active["offerID"]}
    assert when(active["activeAt"]) <= when(active["updatedAt"])

    held = move(desk, alice_funded, bought["id"], "accepted")
    assert held["status"] == "hold"
    # holdEndDate = the moment of acceptance + 8 days (the first game's default).
    window = when(held["holdEndDate"]) - when(held["updatedAt"])
    assert timedelta(days=8, seconds=-2) < window <= timedelta(days=8)
    assert {row["holdEndDate"] for row in held["items"]} == {held["holdEndDate"]}
    # Nothing settles while the items are in hold.
    assert service_money("supplier") == supplier
    assert money(alice_funded)["locked"] == Decimal("31.50")

    done = move(desk, alice_funded, bought["id"], "hold_ended")
    assert done["status"] == "completed"
    assert [row["status"] for row in done["items"]] == ["completed", "completed"]
    assert service_money("supplier") - supplier == Decimal("30.00")
    assert service_money("revenue") - revenue == Decimal("1.50")
    assert money(alice_funded) == {
        "available": Decimal("968.50"),
        "locked": Decimal("0.00"),
        "escrow": Decimal("0.00"),
        "collateral": Decimal("0.00"),
    }
    assert [r.json["type"] for r in hooks.received] == [
        "trade.initiated",
        "trade.pending",
        "trade.active",
        "trade.hold",
        "trade.completed",
    ]
    assert [r.json["sequence"] for r in hooks.received] == [1, 2, 3, 4, 5]
    for received in hooks.received:
        Webhook(alice_funded.merchant.webhook_secret).verify(received.body, received.headers)
    assert wallet_clean()


@pytest.mark.parametrize(
    ("steps", "status", "error"),
    [
        (["purchase_failed"], "failed", "PURCHASE_FAILED"),
        (["purchased", "declined"], "declined", "OFFER_NOT_ACCEPTED"),
        (["purchased", "accepted", "reversed"], "reverted", ""),
    ],
)
def test_items_that_end_undelivered_are_refunded(
    desk, alice_funded, bought, hooks, steps, status, error
):
    supplier, revenue = service_money("supplier"), service_money("revenue")
    for event in steps:
        trade = move(desk, alice_funded, bought["id"], event)
    assert trade["status"] == status
    assert [row["status"] for row in trade["items"]] == [status, status]
    if error:
        assert [row["error"] for row in trade["items"]] == [error, error]
        assert trade["error"] == error
    if status == "reverted":
        assert trade["revertedBy"] == "user"
        shown = ok_data(desk.get(f"/secure/trades/{bought['id']}", headers=alice_funded.headers))
        assert shown["revertedBy"] == "user"
    else:
        assert "revertedBy" not in trade
    assert money(alice_funded)["available"] == Decimal("1000.00")
    assert money(alice_funded)["locked"] == Decimal("0.00")
    assert service_money("supplier") == supplier
    assert service_money("revenue") == revenue
    assert hooks.received[-1].json["type"] == f"trade.{status}"
    assert wallet_clean()


def test_item_ids_move_a_subset(desk, alice_funded, bought, hooks):
    one = move(desk, alice_funded, bought["id"], "purchased", [bought["first"]])
    assert [row["status"] for row in one["items"]] == ["active", "pending"]
    assert one["status"] == "pending"  # the least advanced item in flight
    assert hooks.received[-1].json["type"] == "trade.updated"
    assert money(alice_funded)["locked"] == Decimal("31.50")

    # By the item's externalId; the trade's status now changes.
    both = move(desk, alice_funded, bought["id"], "purchased", ["two"])
    assert both["status"] == "active"
    assert hooks.received[-1].json["type"] == "trade.active"

    # One declines, one is accepted: refund of the first only.
    move(desk, alice_funded, bought["id"], "declined", ["one"])
    assert hooks.received[-1].json["type"] == "trade.updated"
    assert money(alice_funded)["available"] == Decimal("979.00")
    assert money(alice_funded)["locked"] == Decimal("21.00")
    held = move(desk, alice_funded, bought["id"], "accepted", [bought["second"]])
    assert held["status"] == "hold"
    done = move(desk, alice_funded, bought["id"], "hold_ended")
    assert done["status"] == "completed"  # completed comes before declined
    assert [row["status"] for row in done["items"]] == ["declined", "completed"]
    assert money(alice_funded)["available"] == Decimal("979.00")
    assert money(alice_funded)["locked"] == Decimal("0.00")
    assert wallet_clean()


def test_item_ids_that_are_not_eligible_are_left_alone(desk, alice_funded, bought):
    move(desk, alice_funded, bought["id"], "purchased", [bought["first"]])
    trade = move(desk, alice_funded, bought["id"], "accepted", [bought["first"], bought["second"]])
    assert [row["status"] for row in trade["items"]] == ["hold", "pending"]


@pytest.mark.parametrize(
    ("setup", "event"),
    [
        ([], "accepted"),
        ([], "declined"),
        ([], "hold_ended"),
        ([], "reversed"),
        (["purchased"], "purchased"),
        (["purchased"], "purchase_failed"),
        (["purchased"], "hold_ended"),
        (["purchased", "accepted"], "declined"),
        (["purchased", "accepted", "hold_ended"], "reversed"),
        (["purchase_failed"], "purchased"),
        ([], "offer_sent"),  # deposit events have no meaning on a withdrawal
        ([], "offer_created"),
        ([], "failed"),
    ],
)
def test_an_event_illegal_in_the_current_state_is_a_conflict(
    desk, alice_funded, bought, setup, event
):
    for step in setup:
        move(desk, alice_funded, bought["id"], step)
    before, balances = unchanged(bought["id"]), money(alice_funded)
    assert_error(
        sandbox_event(desk, alice_funded, bought["id"], event), 409, 3002, "INVALID_TRANSITION"
    )
    assert unchanged(bought["id"]) == before
    assert money(alice_funded) == balances


def test_an_unapproved_withdrawal_cannot_be_delivered(desk, alice_funded, catalog_item, hooks):
    hooks.answer = lambda _: (503, b"")
    listing = make_listing(catalog_item, "10.00")
    trade = ok_data(
        desk.post(
            "/secure/buy",
            {"tradeUrl": trade_url(42), "items": [{"itemId": listing.id, "price": 10.5}]},
            headers=alice_funded.headers,
        )
    )
    for event in ("purchased", "accepted", "purchase_failed"):
        assert_error(
            sandbox_event(desk, alice_funded, trade["id"], event), 409, 3002, "INVALID_TRANSITION"
        )
    assert item_statuses(trade["id"]) == ["initiated"]


def test_unknown_items_and_trades_are_not_found(desk, alice_funded, bought):
    before = unchanged(bought["id"])
    assert_error(
        sandbox_event(desk, alice_funded, bought["id"], "purchased", ["no-such-item"]),
        404,
        2201,
        "ITEM_NOT_FOUND",
    )
    # One unknown id refuses the whole event: the known item does not move either.
    assert_error(
        sandbox_event(desk, alice_funded, bought["id"], "purchased", [bought["first"], "nope1"]),
        404,
        2201,
        "ITEM_NOT_FOUND",
    )
    assert unchanged(bought["id"]) == before
    for ref in ("00000000-0000-4000-8000-000000000000", "sbx-unknown"):
        assert_error(
            sandbox_event(desk, alice_funded, ref, "purchased"), 404, 21, "TRADE_NOT_FOUND"
        )


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"event": "exploded"},
        {"event": "PURCHASED"},
        {"event": 1},
        {"event": "purchased", "itemIds": "one"},
        {"event": "purchased", "itemIds": [""]},
        {"event": "purchased", "extra": True},
    ],
)
def test_malformed_event_bodies_are_validation_failures(desk, alice_funded, bought, body):
    before = unchanged(bought["id"])
    assert_error(
        desk.post(f"/sandbox/trades/{bought['id']}/events", body, headers=alice_funded.headers),
        400,
        1001,
        "VALIDATION_FAILED",
    )
    assert unchanged(bought["id"]) == before


# --- the clock ---------------------------------------------------------------------------------


def test_the_clock_moves_forward_for_the_whole_service(desk, alice_funded):
    start = ok_data(desk.get("/sandbox/clock", headers=alice_funded.headers))
    assert start["offsetSeconds"] == 0
    assert abs(when(start["now"]) - timezone.now()) < timedelta(seconds=5)
    advance_minutes(desk, alice_funded, 90)
    advance_minutes(desk, alice_funded, 30)
    later = ok_data(desk.get("/sandbox/clock", headers=alice_funded.headers))
    assert later["offsetSeconds"] == 7200
    assert abs(when(later["now"]) - timezone.now() - timedelta(hours=2)) < timedelta(seconds=5)


@pytest.mark.parametrize("minutes", [0, -5, "5", 1.5, None])
def test_the_clock_only_moves_forward_by_whole_minutes(desk, alice_funded, minutes):
    body = {} if minutes is None else {"minutes": minutes}
    error = assert_error(
        desk.post("/sandbox/clock/advance", body, headers=alice_funded.headers),
        400,
        1001,
        "VALIDATION_FAILED",
    )
    assert "minutes" in error["fields"]
    assert ok_data(desk.get("/sandbox/clock", headers=alice_funded.headers))["offsetSeconds"] == 0


@pytest.mark.django_db(transaction=True)
def test_the_advance_answers_with_the_moved_clock(desk, alice_funded):
    """Outside a test transaction the cache is dropped on commit, before the answer is built."""
    moved = ok_data(
        desk.post("/sandbox/clock/advance", {"minutes": 60}, headers=alice_funded.headers)
    )
    assert moved["offsetSeconds"] == 3600
    assert abs(when(moved["now"]) - timezone.now() - timedelta(hours=1)) < timedelta(seconds=5)


def test_the_sandbox_needs_an_api_key(desk):
    assert desk.get("/sandbox/clock", headers={}).status_code == 401


# --- the hold sweep ----------------------------------------------------------------------------


def test_the_hold_sweep_completes_items_whose_window_ended(desk, alice_funded, bought, hooks):
    supplier, revenue = service_money("supplier"), service_money("revenue")
    move(desk, alice_funded, bought["id"], "purchased")
    move(desk, alice_funded, bought["id"], "accepted", [bought["first"]])
    advance_minutes(desk, alice_funded, DAY)
    move(desk, alice_funded, bought["id"], "accepted", [bought["second"]])
    assert desk.run(withdrawal_holds_due_complete) == 0

    advance_minutes(desk, alice_funded, 7 * DAY - 1)  # the first window ends in a minute
    assert desk.run(withdrawal_holds_due_complete) == 0
    assert item_statuses(bought["id"]) == ["hold", "hold"]

    advance_minutes(desk, alice_funded, 2)
    assert desk.run(withdrawal_holds_due_complete) == 1
    assert item_statuses(bought["id"]) == ["completed", "hold"]
    assert Trade.objects.get(pk=bought["id"]).status == "hold"
    assert hooks.received[-1].json["type"] == "trade.updated"
    assert service_money("supplier") - supplier == Decimal("10.00")
    assert service_money("revenue") - revenue == Decimal("0.50")
    assert money(alice_funded)["locked"] == Decimal("21.00")
    assert desk.run(withdrawal_holds_due_complete) == 0  # nothing twice

    advance_minutes(desk, alice_funded, DAY)
    assert desk.run(withdrawal_holds_due_complete) == 1
    assert item_statuses(bought["id"]) == ["completed", "completed"]
    assert Trade.objects.get(pk=bought["id"]).status == "completed"
    assert hooks.received[-1].json["type"] == "trade.completed"
    assert service_money("supplier") - supplier == Decimal("30.00")
    assert service_money("revenue") - revenue == Decimal("1.50")
    assert money(alice_funded)["locked"] == Decimal("0.00")
    assert money(alice_funded)["available"] == Decimal("968.50")
    assert wallet_clean()


def test_the_hold_period_is_set_per_game(desk, alice_funded, bought):
    GameSettings.objects.update_or_create(game=730, defaults={"hold_days": 2})
    move(desk, alice_funded, bought["id"], "purchased")
    held = move(desk, alice_funded, bought["id"], "accepted")
    window = when(held["holdEndDate"]) - when(held["updatedAt"])
    assert timedelta(days=2, seconds=-2) < window <= timedelta(days=2)
    advance_minutes(desk, alice_funded, 2 * DAY + 1)
    assert desk.run(withdrawal_holds_due_complete) == 2
    assert Trade.objects.get(pk=bought["id"]).status == "completed"


def test_a_reversal_after_the_sweep_is_too_late(desk, alice_funded, bought):
    move(desk, alice_funded, bought["id"], "purchased")
    move(desk, alice_funded, bought["id"], "accepted")
    advance_minutes(desk, alice_funded, 8 * DAY + 1)
    desk.run(withdrawal_holds_due_complete)
    before = money(alice_funded)
    assert_error(
        sandbox_event(desk, alice_funded, bought["id"], "reversed"), 409, 3002, "INVALID_TRANSITION"
    )
    assert money(alice_funded) == before
