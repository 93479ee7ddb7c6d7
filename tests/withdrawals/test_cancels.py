"""Cancels of withdrawals (contract 3, 4.7; decisions 4 and 6): whole trades and single items,
for merchants (self buys) and clients (their own withdrawals), and autoCancel."""

import uuid
from decimal import Decimal

import pytest

from core.handoffs import HANDOFFS
from sandbox.models import SandboxListing, SandboxPurchase
from tests.factories import Actor, assert_error, trade_url
from tests.withdrawals.conftest import (
    Desk,
    advance_minutes,
    client_headers,
    make_listing,
    make_rust_listing,
    money,
    ok_data,
    sandbox_event,
    wallet_clean,
)
from trading.models import Trade, TradeItem
from trading.withdrawals.services.cancels import CANCELS_COMPLETE, withdrawal_auto_cancels_due

pytestmark = pytest.mark.django_db

TOO_SOON = "TRADE_CANCEL_TOO_SOON"


def self_buy(
    desk: Desk, actor: Actor, listings: list[SandboxListing], *, fee: str = "1.05", **extra
) -> dict:
    """A self buy of ``listings``, each with item externalId ``line-<n>``; approved and ordered
    (items ``pending`` with a purchase) unless the receiver withholds its answer."""
    items = [
        {
            "itemId": listing.id,
            "price": (listing.price * Decimal(fee)).quantize(Decimal("0.01"), "ROUND_CEILING"),
            "externalId": f"line-{n}",
        }
        for n, listing in enumerate(listings, start=1)
    ]
    body = {"tradeUrl": trade_url(42), "items": items, **extra}
    return ok_data(desk.post("/secure/buy", body, headers=actor.headers))


def client_withdraw(
    desk: Desk, headers: dict[str, str], listings: list[SandboxListing], **extra
) -> dict:
    items = [
        {"itemId": listing.id, "price": listing.price * Decimal("1.05"), "externalId": f"c-{n}"}
        for n, listing in enumerate(listings, start=1)
    ]
    return ok_data(
        desk.post("/client/trading/withdraw", {"items": items, **extra}, headers=headers)
    )


def statuses(trade_id: str) -> list[str]:
    return list(
        TradeItem.objects.filter(trade_id=trade_id)
        .order_by("position")
        .values_list("status", flat=True)
    )


def trade_status(trade_id: str) -> str:
    return Trade.objects.get(pk=trade_id).status


@pytest.fixture
def pair(catalog_item) -> list[SandboxListing]:
    return [
        make_listing(catalog_item, "10.00"),
        make_listing(catalog_item, "20.00"),
    ]  # 10.50, 21.00


# --- POST /secure/buy/{tradeId}/cancel -----------------------------------------------------


def test_a_trade_younger_than_30_minutes_is_refused_item_by_item(desk, alice_funded, pair, hooks):
    trade = self_buy(desk, alice_funded, pair, externalId="buy-1")
    assert statuses(trade["id"]) == ["pending", "pending"]
    before = money(alice_funded)
    advance_minutes(desk, alice_funded, 29)
    result = ok_data(desk.post(f"/secure/buy/{trade['id']}/cancel", headers=alice_funded.headers))
    assert result == {
        "tradeId": trade["id"],
        "requested": 2,
        "cancelled": 0,
        "failed": 2,
        "items": [
            {"itemId": pair[0].id, "externalId": "line-1", "status": "failed", "reason": TOO_SOON},
            {"itemId": pair[1].id, "externalId": "line-2", "status": "failed", "reason": TOO_SOON},
        ],
    }
    assert statuses(trade["id"]) == ["pending", "pending"]
    assert money(alice_funded) == before
    assert set(SandboxPurchase.objects.values_list("status", flat=True)) == {"accepted"}
    assert [r.json["type"] for r in hooks.received] == ["trade.initiated", "trade.pending"]


@pytest.mark.parametrize("by", ["id", "externalId"])
def test_after_30_minutes_the_cancel_is_accepted_and_completed_by_the_worker(
    desk, alice_funded, pair, hooks, by
):
    trade = self_buy(desk, alice_funded, pair, externalId="buy-2")
    assert money(alice_funded)["locked"] == Decimal("31.50")
    advance_minutes(desk, alice_funded, 30)
    clock = ok_data(desk.get("/sandbox/clock", headers=alice_funded.headers))
    assert clock["offsetSeconds"] == 1800
    ref = trade["id"] if by == "id" else "buy-2"
    result = ok_data(desk.post(f"/secure/buy/{ref}/cancel", headers=alice_funded.headers))
    assert result["tradeId"] == trade["id"]
    assert (result["requested"], result["cancelled"], result["failed"]) == (2, 2, 0)
    assert result["items"] == [
        {"itemId": pair[0].id, "externalId": "line-1", "status": "cancelled"},
        {"itemId": pair[1].id, "externalId": "line-2", "status": "cancelled"},
    ]
    # The worker (eager here, after commit) moved the items to canceled, with the refund.
    assert statuses(trade["id"]) == ["canceled", "canceled"]
    assert trade_status(trade["id"]) == "canceled"
    assert money(alice_funded)["locked"] == Decimal("0.00")
    assert money(alice_funded)["available"] == Decimal("1000.00")
    assert set(SandboxPurchase.objects.values_list("status", flat=True)) == {"canceled"}
    (canceled,) = hooks.of_type("trade.canceled")
    assert canceled.json["trade"]["status"] == "canceled"
    assert [i["status"] for i in canceled.json["trade"]["items"]] == ["canceled", "canceled"]
    shown = ok_data(desk.get(f"/secure/trades/{trade['id']}", headers=alice_funded.headers))
    assert shown["status"] == "canceled"
    # Nothing is left to cancel: an empty result, still a 200.
    again = ok_data(desk.post(f"/secure/buy/{ref}/cancel", headers=alice_funded.headers))
    assert again == {
        "tradeId": trade["id"],
        "requested": 0,
        "cancelled": 0,
        "failed": 0,
        "items": [],
    }
    assert wallet_clean()


def test_items_without_an_external_id_have_none_in_the_result(desk, alice_funded, pair):
    body = {
        "tradeUrl": trade_url(42),
        "items": [{"itemId": pair[0].id, "price": Decimal("10.50")}],
    }
    trade = ok_data(desk.post("/secure/buy", body, headers=alice_funded.headers))
    advance_minutes(desk, alice_funded, 30)
    result = ok_data(desk.post(f"/secure/buy/{trade['id']}/cancel", headers=alice_funded.headers))
    assert result["items"] == [{"itemId": pair[0].id, "status": "cancelled"}]


def test_an_active_item_can_be_cancelled_too(desk, alice_funded, pair):
    trade = self_buy(desk, alice_funded, pair)
    ok_data(sandbox_event(desk, alice_funded, trade["id"], "purchased", [pair[0].id]))
    assert statuses(trade["id"]) == ["active", "pending"]
    advance_minutes(desk, alice_funded, 30)
    result = ok_data(desk.post(f"/secure/buy/{trade['id']}/cancel", headers=alice_funded.headers))
    assert result["cancelled"] == 2
    assert statuses(trade["id"]) == ["canceled", "canceled"]
    assert money(alice_funded)["available"] == Decimal("1000.00")
    assert wallet_clean()


def test_items_in_hold_or_ended_are_absent_from_the_result(desk, alice_funded, catalog_item):
    listings = [make_listing(catalog_item, p) for p in ("1.00", "2.00", "3.00", "4.00")]
    trade = self_buy(desk, alice_funded, listings)
    held, done, failed = listings[0].id, listings[1].id, listings[2].id
    ok_data(sandbox_event(desk, alice_funded, trade["id"], "purchased", [held, done]))
    ok_data(sandbox_event(desk, alice_funded, trade["id"], "accepted", [held, done]))
    ok_data(sandbox_event(desk, alice_funded, trade["id"], "hold_ended", [done]))
    ok_data(sandbox_event(desk, alice_funded, trade["id"], "purchase_failed", [failed]))
    assert statuses(trade["id"]) == ["hold", "completed", "failed", "pending"]
    advance_minutes(desk, alice_funded, 30)
    before = money(alice_funded)
    result = ok_data(desk.post(f"/secure/buy/{trade['id']}/cancel", headers=alice_funded.headers))
    assert result["requested"] == 1
    assert result["items"] == [
        {"itemId": listings[3].id, "externalId": "line-4", "status": "cancelled"}
    ]
    assert statuses(trade["id"]) == ["hold", "completed", "failed", "canceled"]
    assert money(alice_funded)["available"] - before["available"] == Decimal("4.20")
    assert wallet_clean()


def test_an_item_still_awaiting_approval_is_not_considered(desk, alice_funded, pair, hooks):
    hooks.answer = lambda _: (503, b"")
    trade = self_buy(desk, alice_funded, pair)
    assert statuses(trade["id"]) == ["initiated", "initiated"]
    advance_minutes(desk, alice_funded, 60)
    result = ok_data(desk.post(f"/secure/buy/{trade['id']}/cancel", headers=alice_funded.headers))
    assert result["requested"] == 0
    assert statuses(trade["id"]) == ["initiated", "initiated"]


def test_an_item_cancel_on_a_finished_trade_says_it_is_finished(
    desk, alice_funded, bob_funded, pair
):
    """alice's trade has completed: the refusal says so; bob's, still in flight, cancels."""
    mine = self_buy(desk, alice_funded, [pair[0]])
    for event in ("purchased", "accepted", "hold_ended"):
        ok_data(sandbox_event(desk, alice_funded, mine["id"], event))
    bobs = self_buy(desk, bob_funded, [pair[1]], fee="1.10")
    advance_minutes(desk, alice_funded, 30)

    response = desk.post(
        f"/secure/buy/{mine['id']}/items/line-1/cancel", headers=alice_funded.headers
    )

    error = assert_error(response, 400, 28, "TRADE_NOT_CANCELLABLE")
    assert error["message"] == "The trade is finished (completed): nothing is left to cancel."
    assert error["details"] == {"status": "completed"}
    assert statuses(mine["id"]) == ["completed"]
    result = ok_data(
        desk.post(f"/secure/buy/{bobs['id']}/items/line-1/cancel", headers=bob_funded.headers)
    )
    assert result["status"] == "cancelled"


def test_a_finished_item_of_a_trade_in_flight_says_it_is_finished(desk, alice_funded, pair):
    trade = self_buy(desk, alice_funded, pair)
    ok_data(sandbox_event(desk, alice_funded, trade["id"], "purchase_failed", [pair[0].id]))
    advance_minutes(desk, alice_funded, 30)

    response = desk.post(
        f"/secure/buy/{trade['id']}/items/line-1/cancel", headers=alice_funded.headers
    )

    error = assert_error(response, 400, 28, "TRADE_NOT_CANCELLABLE")
    assert error["message"] == "The item is finished (failed)."


def test_a_purchase_the_marketplace_no_longer_cancels_fails_its_row(desk, alice_funded, pair):
    trade = self_buy(desk, alice_funded, pair)
    first = TradeItem.objects.get(trade_id=trade["id"], position=0)
    SandboxPurchase.objects.filter(key=first.purchase_ref).update(status="delivered")
    advance_minutes(desk, alice_funded, 30)
    result = ok_data(desk.post(f"/secure/buy/{trade['id']}/cancel", headers=alice_funded.headers))
    assert (result["requested"], result["cancelled"], result["failed"]) == (2, 1, 1)
    assert result["items"][0] == {
        "itemId": pair[0].id,
        "externalId": "line-1",
        "status": "failed",
        "reason": "TRADE_NOT_CANCELLABLE",
    }
    assert result["items"][1]["status"] == "cancelled"
    assert statuses(trade["id"]) == ["pending", "canceled"]
    assert money(alice_funded)["locked"] == Decimal("10.50")
    assert wallet_clean()


def test_the_second_game_has_no_cancel(desk, alice_funded, rust_item):
    listing = make_rust_listing(rust_item, "10.00")
    trade = self_buy(desk, alice_funded, [listing], game="252490")
    advance_minutes(desk, alice_funded, 30)
    before = money(alice_funded)
    assert_error(
        desk.post(f"/secure/buy/{trade['id']}/cancel", headers=alice_funded.headers),
        400,
        44,
        "TRADE_CANCEL_UNSUPPORTED",
    )
    assert_error(
        desk.post(
            f"/secure/buy/{trade['id']}/items/{listing.id}/cancel", headers=alice_funded.headers
        ),
        400,
        44,
        "TRADE_CANCEL_UNSUPPORTED",
    )
    assert statuses(trade["id"]) == ["pending"]
    assert money(alice_funded) == before


def test_own_stock_items_have_no_cancel(desk, alice_funded, catalog_item):
    stock = make_listing(catalog_item, "10.00", delivery="instant")
    trade = self_buy(desk, alice_funded, [stock])
    advance_minutes(desk, alice_funded, 30)
    assert_error(
        desk.post(f"/secure/buy/{trade['id']}/cancel", headers=alice_funded.headers),
        400,
        44,
        "TRADE_CANCEL_UNSUPPORTED",
    )
    assert statuses(trade["id"]) == ["pending"]


def test_a_mixed_trade_leaves_its_unsupported_items_out(desk, alice_funded, catalog_item):
    stock = make_listing(catalog_item, "10.00", delivery="instant")
    supplier = make_listing(catalog_item, "12.00")
    trade = self_buy(desk, alice_funded, [stock, supplier])
    advance_minutes(desk, alice_funded, 30)
    result = ok_data(desk.post(f"/secure/buy/{trade['id']}/cancel", headers=alice_funded.headers))
    assert result["requested"] == 1
    assert [row["itemId"] for row in result["items"]] == [supplier.id]
    assert statuses(trade["id"]) == ["pending", "canceled"]
    assert money(alice_funded)["locked"] == Decimal("10.50")
    assert_error(
        desk.post(
            f"/secure/buy/{trade['id']}/items/{stock.id}/cancel", headers=alice_funded.headers
        ),
        400,
        44,
        "TRADE_CANCEL_UNSUPPORTED",
    )


@pytest.mark.parametrize("ref", [str(uuid.uuid4()), "no-such-external-id"])
def test_an_unknown_trade_is_item_not_found(desk, alice_funded, ref):
    assert_error(
        desk.post(f"/secure/buy/{ref}/cancel", headers=alice_funded.headers),
        404,
        2201,
        "ITEM_NOT_FOUND",
    )
    assert_error(
        desk.post(f"/secure/buy/{ref}/items/abcde/cancel", headers=alice_funded.headers),
        404,
        2201,
        "ITEM_NOT_FOUND",
    )


def test_a_client_withdrawal_is_forbidden_on_the_self_buy_cancel(desk, alice_funded, pair):
    trade = client_withdraw(desk, client_headers(desk.api, alice_funded), pair)
    advance_minutes(desk, alice_funded, 30)
    before = money(alice_funded)
    assert_error(
        desk.post(f"/secure/buy/{trade['id']}/cancel", headers=alice_funded.headers),
        403,
        1300,
        "FORBIDDEN",
    )
    assert_error(
        desk.post(
            f"/secure/buy/{trade['id']}/items/{pair[0].id}/cancel", headers=alice_funded.headers
        ),
        403,
        1300,
        "FORBIDDEN",
    )
    assert statuses(trade["id"]) == ["pending", "pending"]
    assert money(alice_funded) == before


# --- per-item cancels ------------------------------------------------------------------------


def test_an_item_younger_than_30_minutes_is_refused(desk, alice_funded, pair):
    trade = self_buy(desk, alice_funded, pair)
    before = money(alice_funded)
    for ref in (pair[0].id, "line-1"):
        assert_error(
            desk.post(
                f"/secure/buy/{trade['id']}/items/{ref}/cancel", headers=alice_funded.headers
            ),
            400,
            46,
            TOO_SOON,
        )
    assert statuses(trade["id"]) == ["pending", "pending"]
    assert money(alice_funded) == before


@pytest.mark.parametrize("by", ["id", "externalId"])
def test_one_item_is_cancelled_and_the_other_stays(desk, alice_funded, pair, hooks, by):
    trade = self_buy(desk, alice_funded, pair, externalId="buy-3")
    advance_minutes(desk, alice_funded, 30)
    ref = pair[1].id if by == "id" else "line-2"
    result = ok_data(
        desk.post(f"/secure/buy/buy-3/items/{ref}/cancel", headers=alice_funded.headers)
    )
    assert result == {
        "tradeId": trade["id"],
        "itemId": pair[1].id,
        "externalId": "line-2",
        "status": "cancelled",
    }
    assert statuses(trade["id"]) == ["pending", "canceled"]
    assert trade_status(trade["id"]) == "pending"
    assert money(alice_funded)["locked"] == Decimal("10.50")
    assert money(alice_funded)["available"] == Decimal("989.50")
    # The trade's status stayed: the change is a trade.updated.
    assert hooks.received[-1].json["type"] == "trade.updated"
    assert [i["status"] for i in hooks.received[-1].json["trade"]["items"]] == [
        "pending",
        "canceled",
    ]
    # A second cancel of the same item is refused.
    assert_error(
        desk.post(f"/secure/buy/buy-3/items/{ref}/cancel", headers=alice_funded.headers),
        400,
        28,
        "TRADE_NOT_CANCELLABLE",
    )
    assert wallet_clean()


def test_per_item_refusals(desk, alice_funded, catalog_item):
    listings = [make_listing(catalog_item, p) for p in ("1.00", "2.00")]
    trade = self_buy(desk, alice_funded, listings)
    ok_data(sandbox_event(desk, alice_funded, trade["id"], "purchased", [listings[0].id]))
    ok_data(sandbox_event(desk, alice_funded, trade["id"], "accepted", [listings[0].id]))
    second = TradeItem.objects.get(trade_id=trade["id"], position=1)
    SandboxPurchase.objects.filter(key=second.purchase_ref).update(status="delivered")
    advance_minutes(desk, alice_funded, 30)
    before = money(alice_funded)
    base = f"/secure/buy/{trade['id']}/items"
    # In hold: not cancellable.
    assert_error(
        desk.post(f"{base}/{listings[0].id}/cancel", headers=alice_funded.headers),
        400,
        28,
        "TRADE_NOT_CANCELLABLE",
    )
    # The marketplace refuses.
    assert_error(
        desk.post(f"{base}/line-2/cancel", headers=alice_funded.headers),
        400,
        28,
        "TRADE_NOT_CANCELLABLE",
    )
    # Not an item of this trade.
    assert_error(
        desk.post(f"{base}/{uuid.uuid4()}/cancel", headers=alice_funded.headers),
        404,
        2201,
        "ITEM_NOT_FOUND",
    )
    assert statuses(trade["id"]) == ["hold", "pending"]
    assert money(alice_funded) == before


# --- client cancels ----------------------------------------------------------------------------


def test_a_client_cancels_its_own_withdrawal(desk, alice_funded, pair, hooks):
    headers = client_headers(desk.api, alice_funded)
    trade = client_withdraw(desk, headers, pair, externalId="cw-1", autoCancel=720)
    too_soon = ok_data(desk.post(f"/client/trading/withdraw/{trade['id']}/cancel", headers=headers))
    assert [row["reason"] for row in too_soon["items"]] == [TOO_SOON, TOO_SOON]
    advance_minutes(desk, alice_funded, 30)
    result = ok_data(desk.post("/client/trading/withdraw/cw-1/cancel", headers=headers))
    assert (result["requested"], result["cancelled"]) == (2, 2)
    assert result["items"][0] == {"itemId": pair[0].id, "externalId": "c-1", "status": "cancelled"}
    assert statuses(trade["id"]) == ["canceled", "canceled"]
    assert money(alice_funded)["available"] == Decimal("1000.00")
    assert hooks.received[-1].json["type"] == "trade.canceled"
    assert hooks.received[-1].json["trade"]["source"] == "client"
    assert wallet_clean()


def test_a_client_cancels_one_item(desk, alice_funded, pair):
    headers = client_headers(desk.api, alice_funded)
    trade = client_withdraw(desk, headers, pair, autoCancel=720)
    assert_error(
        desk.post(f"/client/trading/withdraw/{trade['id']}/items/c-1/cancel", headers=headers),
        400,
        46,
        TOO_SOON,
    )
    advance_minutes(desk, alice_funded, 30)
    result = ok_data(
        desk.post(f"/client/trading/withdraw/{trade['id']}/items/c-1/cancel", headers=headers)
    )
    assert result == {
        "tradeId": trade["id"],
        "itemId": pair[0].id,
        "externalId": "c-1",
        "status": "cancelled",
    }
    assert statuses(trade["id"]) == ["canceled", "pending"]
    assert money(alice_funded)["locked"] == Decimal("21.00")


def test_a_client_cannot_cancel_a_self_buy(desk, alice_funded, pair):
    """The client's scope holds only its own client withdrawals, even to the same account."""
    headers = client_headers(desk.api, alice_funded, partner=42)  # the self buy's recipient
    trade = self_buy(desk, alice_funded, pair, externalId="buy-4")
    advance_minutes(desk, alice_funded, 30)
    for path in (f"{trade['id']}/cancel", "buy-4/cancel", f"{trade['id']}/items/line-1/cancel"):
        assert_error(
            desk.post(f"/client/trading/withdraw/{path}", headers=headers),
            404,
            2201,
            "ITEM_NOT_FOUND",
        )
    assert statuses(trade["id"]) == ["pending", "pending"]


def test_client_cancels_of_the_second_game_are_unsupported(desk, alice_funded, rust_item):
    listing = make_rust_listing(rust_item, "10.00")
    headers = client_headers(desk.api, alice_funded)
    trade = client_withdraw(desk, headers, [listing], game="252490")
    advance_minutes(desk, alice_funded, 30)
    assert_error(
        desk.post(f"/client/trading/withdraw/{trade['id']}/cancel", headers=headers),
        400,
        44,
        "TRADE_CANCEL_UNSUPPORTED",
    )


# --- autoCancel --------------------------------------------------------------------------------


def test_auto_cancel_cancels_pending_items_only_once_due(desk, alice_funded, pair, hooks):
    headers = client_headers(desk.api, alice_funded)
    trade = client_withdraw(desk, headers, pair)  # autoCancel defaults to 30 minutes
    ok_data(sandbox_event(desk, alice_funded, trade["id"], "purchased", [pair[0].id]))
    assert statuses(trade["id"]) == ["active", "pending"]

    advance_minutes(desk, alice_funded, 29)
    assert desk.run(withdrawal_auto_cancels_due) == 0
    assert statuses(trade["id"]) == ["active", "pending"]

    advance_minutes(desk, alice_funded, 2)
    assert desk.run(withdrawal_auto_cancels_due) == 1
    assert statuses(trade["id"]) == ["active", "canceled"]  # the active item stays
    assert trade_status(trade["id"]) == "active"
    assert money(alice_funded)["locked"] == Decimal("10.50")
    assert money(alice_funded)["available"] == Decimal("989.50")
    assert SandboxPurchase.objects.get(listing_id=pair[1].id).status == "canceled"
    assert SandboxPurchase.objects.get(listing_id=pair[0].id).status == "accepted"
    # pending + active was pending; active + canceled is active.
    assert hooks.received[-1].json["type"] == "trade.active"
    # Nothing more to do on a second run.
    assert desk.run(withdrawal_auto_cancels_due) == 0
    assert wallet_clean()


def test_auto_cancel_follows_the_minutes_given(desk, alice_funded, pair):
    headers = client_headers(desk.api, alice_funded)
    trade = client_withdraw(desk, headers, pair, autoCancel=90)
    advance_minutes(desk, alice_funded, 89)
    assert desk.run(withdrawal_auto_cancels_due) == 0
    advance_minutes(desk, alice_funded, 2)
    assert desk.run(withdrawal_auto_cancels_due) == 2
    assert statuses(trade["id"]) == ["canceled", "canceled"]
    assert trade_status(trade["id"]) == "canceled"
    assert money(alice_funded)["available"] == Decimal("1000.00")
    assert money(alice_funded)["locked"] == Decimal("0.00")
    assert wallet_clean()


def test_auto_cancel_720_and_self_buys_are_never_auto_cancelled(
    desk, alice_funded, catalog_item, rust_item
):
    listings = [make_listing(catalog_item, p) for p in ("1.00", "2.00")]
    headers = client_headers(desk.api, alice_funded)
    off = client_withdraw(desk, headers, [listings[0]], autoCancel=720)
    own = self_buy(desk, alice_funded, [listings[1]])
    rust = client_withdraw(desk, headers, [make_rust_listing(rust_item, "3.00")], game="252490")
    advance_minutes(desk, alice_funded, 60 * 24 * 3)
    assert desk.run(withdrawal_auto_cancels_due) == 0
    for trade in (off, own, rust):
        assert statuses(trade["id"]) == ["pending"]


def test_a_self_buy_with_auto_cancel_is_cancelled_when_due(desk, alice_funded, bob_funded, pair):
    """Only the trade that asked for it: bob's self buy without autoCancel stays."""
    mine = self_buy(desk, alice_funded, [pair[0]], autoCancel=45)
    bobs = self_buy(desk, bob_funded, [pair[1]], fee="1.10")
    advance_minutes(desk, alice_funded, 44)
    assert desk.run(withdrawal_auto_cancels_due) == 0
    advance_minutes(desk, alice_funded, 2)

    assert desk.run(withdrawal_auto_cancels_due) == 1
    assert statuses(mine["id"]) == ["canceled"]
    assert statuses(bobs["id"]) == ["pending"]
    assert money(alice_funded)["locked"] == Decimal("0.00")


def test_auto_cancel_skips_own_stock_items(desk, alice_funded, catalog_item):
    stock = make_listing(catalog_item, "5.00", delivery="instant")
    supplier = make_listing(catalog_item, "6.00")
    trade = client_withdraw(desk, client_headers(desk.api, alice_funded), [stock, supplier])
    advance_minutes(desk, alice_funded, 31)
    assert desk.run(withdrawal_auto_cancels_due) == 1
    assert statuses(trade["id"]) == ["pending", "canceled"]
    assert money(alice_funded)["locked"] == Decimal("5.25")
    assert wallet_clean()


def test_a_refusing_marketplace_keeps_the_item_for_auto_cancel(desk, alice_funded, pair):
    trade = client_withdraw(desk, client_headers(desk.api, alice_funded), pair)
    first = TradeItem.objects.get(trade_id=trade["id"], position=0)
    SandboxPurchase.objects.filter(key=first.purchase_ref).update(status="delivered")
    advance_minutes(desk, alice_funded, 31)
    assert desk.run(withdrawal_auto_cancels_due) == 1
    assert statuses(trade["id"]) == ["pending", "canceled"]
    assert money(alice_funded)["locked"] == Decimal("10.50")


# --- an accepted cancel is final (found by the trading property test) -----------------------


@pytest.mark.parametrize("event", ["purchased", "purchase_failed"])
def test_the_outside_world_no_longer_moves_an_item_whose_cancel_was_accepted(
    desk, alice_funded, pair, monkeypatch, event
):
    # The cancel of one item is accepted; its completion task is lost, so the item waits.
    monkeypatch.setitem(HANDOFFS.bindings, CANCELS_COMPLETE, lambda trade_id: None)
    trade = self_buy(desk, alice_funded, pair)
    advance_minutes(desk, alice_funded, 30)
    item = pair[0].id
    ok_data(
        desk.post(f"/secure/buy/{trade['id']}/items/{item}/cancel", headers=alice_funded.headers)
    )

    response = sandbox_event(desk, alice_funded, trade["id"], event, [item])

    assert_error(response, 409, 3002, "INVALID_TRANSITION")
    assert statuses(trade["id"]) == ["pending", "pending"]
    moved = ok_data(sandbox_event(desk, alice_funded, trade["id"], event))  # the other one
    assert [row["status"] for row in moved["items"]] == [
        "pending",
        "active" if event == "purchased" else "failed",
    ]
