"""Withdrawals filled by the real suppliers (recorded Waxpeer and DMarket servers), through the
HTTP API: market reads from the polled snapshot with their feed events, a buy filled end to end
by each supplier, quick fills falling back across suppliers, a lost answer reconciled by our
reference without buying twice, a supplier's cancel refunded once, staff's switch."""

from datetime import timedelta
from decimal import Decimal

import orjson
import pytest

import core.feed
from core import clock
from core.market_version import market_version
from tests.factories import trade_url
from tests.suppliers.conftest import DMARKET_BOT
from tests.suppliers.servers import Listing
from tests.withdrawals.conftest import money, ok_data, service_money, wallet_clean
from trading.models import (
    BotDelivery,
    Supplier,
    SupplierListing,
    SupplierOrder,
    SupplierWithdraw,
    Trade,
    TradeItem,
)
from trading.services.suppliers import (
    supplier_balances_check,
    supplier_listings_poll,
    supplier_orders_follow,
    supplier_switch,
)
from trading.tasks import sweep_purchases
from trading.withdrawals.services.sweeps import withdrawal_holds_due_complete

pytestmark = pytest.mark.django_db

WAX_ID = "27165625733"
DM_OFFER = "c3d4e5f6-a7b8-4012-8def-345678901234"
DM_ASSET = "b1a2c3d4-0000-4000-8000-000000000001"
NAME = "AK-47 | Redline (Field-Tested)"


@pytest.fixture(autouse=True)
def _clock(time_passes, suppliers) -> None:
    global _advance

    def advance(seconds: int) -> None:
        time_passes(seconds)
        suppliers.clock_moved(seconds)

    _advance = advance


_advance = None


def later(minutes: float) -> None:
    """Time passes: the service clock moves on (deadlines and rechecks are read from it), real
    time too (what the suppliers compare with their clocks), and the suppliers' clocks."""
    assert _advance is not None
    _advance(int(minutes * 60))


def poll() -> int:
    return supplier_listings_poll(name="waxpeer") + supplier_listings_poll(name="dmarket")


def stock(suppliers, *, wax: int | None = 10_500, dm: int | None = 1_100) -> None:
    """Waxpeer sells at ``wax`` thousandths, DMarket at ``dm`` cents."""
    if wax is not None:
        suppliers.waxpeer.world.listings[WAX_ID] = Listing(ref=WAX_ID, name=NAME, price=wax)
    if dm is not None:
        suppliers.dmarket.world.listings[DM_OFFER] = Listing(
            ref=DM_OFFER, name=NAME, price=dm, asset=DM_ASSET
        )


@pytest.fixture
def published(monkeypatch) -> list[tuple[dict, dict]]:
    """The feed messages sent after commit, as (header, data)."""
    sent: list[tuple[dict, dict]] = []

    def publish(payload: bytes) -> bool:
        header, data = payload.split(b"\n", 1)
        sent.append((orjson.loads(header), orjson.loads(data)))
        return True

    monkeypatch.setattr(core.feed, "feed_publish", publish)
    return sent


def market(desk, actor) -> list[dict]:
    page = ok_data(desk.get("/secure/market", headers=actor.headers, params={"search": "Redline"}))
    return page["items"]


def buy(desk, actor, listing_id: str, price: str):
    body = {
        "tradeUrl": trade_url(42),
        "items": [{"itemId": listing_id, "price": Decimal(price)}],
    }
    return desk.post("/secure/buy", body, headers=actor.headers)


def quick_body(item) -> dict:
    return {"tradeUrl": trade_url(42), "itemId": item.id, "maxPrice": Decimal("12.00"), "amount": 1}


def item_of(trade_id: str) -> TradeItem:
    return TradeItem.objects.get(trade_id=trade_id)


def follow() -> int:
    later(2)
    return supplier_orders_follow()


def test_market_shows_polled_listings_and_publishes_each_change(
    suppliers, desk, alice_funded, catalog_item, published, django_capture_on_commit_callbacks
):
    stock(suppliers, wax=12_345)
    version = market_version()
    with django_capture_on_commit_callbacks(execute=True):
        assert poll() == 2
    items = market(desk, alice_funded)
    by_id = {item["id"]: item for item in items}
    # 12.345 USD (Waxpeer thousandths) costs 12.35; with alice's 5 %: 12.97.
    assert by_id[f"waxpeer-{WAX_ID}"]["offer"]["price"] == Decimal("12.97")
    assert by_id[f"dmarket-{DM_OFFER}"]["offer"]["price"] == Decimal("11.55")
    assert market_version() != version
    upserts = [data for header, data in published if data.get("type") == "upsert"]
    assert {u["item"]["id"] for u in upserts} == set(by_id)

    published.clear()
    suppliers.waxpeer.world.listings[WAX_ID].price = 11_000
    del suppliers.dmarket.world.listings[DM_OFFER]
    with django_capture_on_commit_callbacks(execute=True):
        assert poll() == 2
    kinds = {(data["type"], data.get("itemId") or data["item"]["id"]) for _, data in published}
    assert kinds == {("patch", f"waxpeer-{WAX_ID}"), ("remove", f"dmarket-{DM_OFFER}")}
    assert [item["id"] for item in market(desk, alice_funded)] == [f"waxpeer-{WAX_ID}"]


def test_a_buy_is_filled_by_waxpeer_end_to_end(suppliers, desk, alice_funded, catalog_item):
    stock(suppliers, dm=None)
    poll()
    before = money(alice_funded)["available"]
    trade_id = ok_data(buy(desk, alice_funded, f"waxpeer-{WAX_ID}", "11.03"))["id"]
    item = item_of(trade_id)
    assert item.status == "pending"
    (sent,) = suppliers.waxpeer.world.buys
    order = SupplierOrder.objects.get(key=f"ti-{item.pk}")
    # Our reference is Waxpeer's project_id; the price is its exact thousandths; the item goes
    # straight to the recipient's trade URL.
    assert sent["project_id"] == order.reference == item.purchase_ref
    assert (sent["price"], sent["partner"], sent["item_id"]) == ("10500", "42", WAX_ID)
    assert not SupplierListing.objects.exists()  # bought: out of the market at once

    offer_id = suppliers.waxpeer.world.seller_sends(order.reference)
    assert follow() == 1
    assert item_of(trade_id).status == "active"
    # The merchant's offerID is the Steam offer the seller sent, as Waxpeer reports it.
    shown = ok_data(desk.get(f"/secure/trades/{trade_id}", headers=alice_funded.headers))
    assert shown["offerID"] == offer_id
    assert {row["offerID"] for row in shown["items"]} == {offer_id}
    suppliers.waxpeer.world.recipient_accepts(order.reference)
    assert follow() == 1
    assert item_of(trade_id).status == "hold"
    later(8 * 24 * 60)
    assert withdrawal_holds_due_complete() == 1
    assert Trade.objects.get(pk=trade_id).status == "completed"
    assert money(alice_funded)["available"] == before - Decimal("11.03")
    assert service_money("supplier") == Decimal("10.50")
    assert wallet_clean()


def test_a_buy_is_filled_by_dmarket_end_to_end(suppliers, desk, alice_funded, catalog_item):
    stock(suppliers, wax=None)
    poll()
    trade_id = ok_data(buy(desk, alice_funded, f"dmarket-{DM_OFFER}", "11.55"))["id"]
    (sent,) = suppliers.dmarket.world.buys  # signed, or the server would have refused it
    assert sent == {
        "offerId": DM_OFFER,
        "price": {"amount": "1100", "currency": "USD"},
        "type": "dmarket",  # held by DMarket's bots (inMarket)
    }
    item = item_of(trade_id)
    assert item.status == "pending"
    # DMarket delivers to our bot (DMARKET_BOT_STEAM_ID), which hands the item on: the
    # delivery is expected from the purchase on (tests/steam/test_deliveries.py sends it).
    delivery = BotDelivery.objects.get(item=item)
    assert (delivery.bot_platform_id, delivery.asset_id) == (DMARKET_BOT, "")
    # Bought from DMarket's own inventory: ours at DMarket, withdrawn to our bot on request.
    assert follow() == 0
    (withdraw,) = suppliers.dmarket.world.withdraws
    row = SupplierWithdraw.objects.get(order__key=f"ti-{item.pk}")
    assert withdraw == {
        "assets": [{"id": DM_ASSET, "gameId": "a8db", "classId": "310776898"}],
        "requestId": row.request_id,
    }
    assert (row.state, row.attempts, row.transfer_id != "") == ("sent", 1, True)
    assert suppliers.dmarket.world.trades[DM_ASSET]["Location"] == "AssetLocationInTransfer"
    assert follow() == 0  # on its way to our bot, not to the recipient
    assert item_of(trade_id).status == "pending"
    assert SupplierOrder.objects.get(key=f"ti-{item.pk}").state == "sent"
    suppliers.dmarket.world.arrives_in_steam(DM_ASSET)
    assert follow() == 1
    assert item_of(trade_id).status == "pending"
    order = SupplierOrder.objects.get(key=f"ti-{item.pk}")
    assert (order.state, order.next_check_at) == ("at_bot", None)
    delivery.refresh_from_db()
    assert delivery.next_attempt_at <= clock.now()  # in our bot: due now
    assert follow() == 0  # DMarket has nothing more to tell
    assert len(suppliers.dmarket.world.withdraws) == 1
    assert wallet_clean()


def test_quick_withdrawal_falls_back_when_the_cheapest_supplier_is_down(
    suppliers, desk, alice_funded, catalog_item
):
    stock(suppliers, wax=10_000, dm=1_100)  # Waxpeer is cheaper
    poll()
    suppliers.waxpeer.world.fault = "maintenance"
    before = money(alice_funded)["available"]
    body = {
        "tradeUrl": trade_url(42),
        "itemId": catalog_item.id,
        "maxPrice": Decimal("12.00"),
        "amount": 1,
    }
    trade_id = ok_data(desk.post("/secure/buy/quick", body, headers=alice_funded.headers))["id"]
    item = item_of(trade_id)
    assert item.listing_id == f"dmarket-{DM_OFFER}"
    assert item.price == Decimal("11.55")  # 11.00 at DMarket with the 5 % fee
    assert money(alice_funded)["available"] == before - Decimal("11.55")  # savings back
    assert suppliers.waxpeer.world.buys == []  # maintenance: nothing reached the buy
    assert Supplier.objects.get(pk="waxpeer").paused_until is not None
    assert wallet_clean()


def test_quick_withdrawal_falls_back_when_the_cheapest_listing_vanished(
    suppliers, desk, alice_funded, catalog_item
):
    stock(suppliers, wax=10_000, dm=1_100)
    poll()
    del suppliers.waxpeer.world.listings[WAX_ID]  # sold elsewhere since the poll
    body = {
        "tradeUrl": trade_url(42),
        "itemId": catalog_item.id,
        "maxPrice": Decimal("12.00"),
        "amount": 1,
    }
    trade_id = ok_data(desk.post("/secure/buy/quick", body, headers=alice_funded.headers))["id"]
    assert item_of(trade_id).listing_id == f"dmarket-{DM_OFFER}"
    assert not SupplierListing.objects.filter(pk=f"waxpeer-{WAX_ID}").exists()
    assert SupplierOrder.objects.get(listing_id=f"waxpeer-{WAX_ID}").state == "refused"


def test_a_lost_answer_is_reconciled_by_reference_and_never_bought_twice(
    suppliers, desk, alice_funded, catalog_item
):
    stock(suppliers, dm=None)
    poll()
    suppliers.waxpeer.world.fault = "hold"  # Waxpeer buys, its answer never arrives in time
    trade_id = ok_data(buy(desk, alice_funded, f"waxpeer-{WAX_ID}", "11.03"))["id"]
    item = item_of(trade_id)
    assert (item.status, item.purchase_ref) == ("pending", "")
    order = SupplierOrder.objects.get(key=f"ti-{item.pk}")
    assert order.state == "unknown"
    locked = money(alice_funded)["locked"]
    assert locked == Decimal("11.03")  # nothing refunded while the outcome is unknown

    later(3)
    sweep_purchases()  # the purchase is driven again: it asks Waxpeer by project_id first
    item = item_of(trade_id)
    assert item.purchase_ref == order.reference
    assert SupplierOrder.objects.get(pk=order.pk).state == "bought"
    assert len(suppliers.waxpeer.world.buys) == 1
    assert money(alice_funded)["locked"] == locked
    assert wallet_clean()


def test_another_merchants_advance_never_has_a_lost_answer_asked_about_early(
    suppliers, desk, alice_funded, bob_funded, catalog_item, real_clock_advance
):
    """Issue 39: a lost answer is asked about a minute of real time after the request (Waxpeer
    counts it by its clock). Bob's advance of the shared sandbox clock brings the re-drive, not
    the question: asked while Waxpeer may still be buying, "not found" would refund a purchase
    that then goes through."""
    stock(suppliers, dm=None)
    poll()
    suppliers.waxpeer.world.fault = "hold"
    trade_id = ok_data(buy(desk, alice_funded, f"waxpeer-{WAX_ID}", "11.03"))["id"]
    order = SupplierOrder.objects.get(key=f"ti-{item_of(trade_id).pk}")
    assert order.state == "unknown"

    ok_data(desk.post("/sandbox/clock/advance", {"minutes": 5}, headers=bob_funded.headers))
    sweep_purchases()
    supplier_orders_follow()
    assert "/v1/check-many-project-id" not in suppliers.waxpeer.world.requests
    assert SupplierOrder.objects.get(pk=order.pk).state == "unknown"
    assert item_of(trade_id).status == "pending"

    real_clock_advance(61)
    sweep_purchases()
    assert SupplierOrder.objects.get(pk=order.pk).state == "bought"
    assert item_of(trade_id).purchase_ref == order.reference
    assert len(suppliers.waxpeer.world.buys) == 1
    assert wallet_clean()


def test_a_supplier_cancel_is_refunded_exactly_once(suppliers, desk, alice_funded, catalog_item):
    stock(suppliers, dm=None)
    poll()
    before = money(alice_funded)
    trade_id = ok_data(buy(desk, alice_funded, f"waxpeer-{WAX_ID}", "11.03"))["id"]
    reference = item_of(trade_id).purchase_ref
    # The seller never sent the trade: Waxpeer cancels it and refunds our account (status 6).
    suppliers.waxpeer.world.waxpeer_cancels(reference, "Seller did not send")
    assert follow() == 1
    assert follow() == 0
    item = item_of(trade_id)
    assert (item.status, item.error) == ("failed", "PURCHASE_FAILED")
    assert money(alice_funded) == before
    assert SupplierOrder.objects.get(reference=reference).state == "canceled"
    assert wallet_clean()


def test_a_cancel_after_sending_declines_and_refunds_once(
    suppliers, desk, alice_funded, catalog_item
):
    stock(suppliers, dm=None)
    poll()
    before = money(alice_funded)
    trade_id = ok_data(buy(desk, alice_funded, f"waxpeer-{WAX_ID}", "11.03"))["id"]
    reference = item_of(trade_id).purchase_ref
    suppliers.waxpeer.world.seller_sends(reference)
    follow()
    suppliers.waxpeer.world.waxpeer_cancels(reference, "Buyer failed to accept")
    assert follow() == 1
    assert follow() == 0
    assert item_of(trade_id).status == "declined"
    assert money(alice_funded) == before
    assert wallet_clean()


def test_switching_a_supplier_off_keeps_its_trades_in_flight(
    suppliers, desk, alice_funded, catalog_item
):
    stock(suppliers)
    poll()
    trade_id = ok_data(buy(desk, alice_funded, f"waxpeer-{WAX_ID}", "11.03"))["id"]
    reference = item_of(trade_id).purchase_ref
    assert desk.run(lambda: supplier_switch(name="dmarket", enabled=False)) == 1
    assert desk.run(lambda: supplier_switch(name="waxpeer", enabled=False)) == 0
    assert market(desk, alice_funded) == []
    assert poll() == 0  # switched off: not polled
    suppliers.waxpeer.world.seller_sends(reference)
    assert follow() == 1  # its bought trade is still followed
    assert item_of(trade_id).status == "active"
    supplier_switch(name="dmarket", enabled=True)
    assert desk.run(poll) == 1
    assert [item["id"] for item in market(desk, alice_funded)] == [f"dmarket-{DM_OFFER}"]


def test_a_buy_of_a_switched_off_supplier_is_not_sent(suppliers, desk, alice_funded, catalog_item):
    stock(suppliers, dm=None)
    poll()
    Supplier.objects.filter(pk="waxpeer").update(enabled=False)
    response = buy(desk, alice_funded, f"waxpeer-{WAX_ID}", "11.03")
    trade_id = ok_data(response)["id"]
    assert suppliers.waxpeer.world.buys == []
    assert item_of(trade_id).status == "pending"  # left for later: nothing failed or bought


def test_balances_are_read_and_a_price_change_reprices_the_listing(
    suppliers, desk, alice_funded, catalog_item
):
    stock(suppliers)
    suppliers.waxpeer.world.balance = 123_456  # thousandths
    suppliers.dmarket.world.balance = 9_999  # cents
    assert supplier_balances_check() == 2
    assert Supplier.objects.get(pk="waxpeer").balance == Decimal("123.46")
    assert Supplier.objects.get(pk="dmarket").balance == Decimal("99.99")
    poll()
    suppliers.waxpeer.world.listings[WAX_ID].price = 10_990  # went up since the poll
    response = buy(desk, alice_funded, f"waxpeer-{WAX_ID}", "11.03")
    trade_id = ok_data(response)["id"]
    item = item_of(trade_id)
    assert (item.status, item.error) == ("failed", "PRICE_CHANGED")
    assert SupplierListing.objects.get(pk=f"waxpeer-{WAX_ID}").price == Decimal("10.99")
    assert wallet_clean()


def test_dmarket_clock_skew_is_corrected_and_a_429_pauses(
    suppliers, catalog_item, clock_advance, real_clock_advance
):
    stock(suppliers, wax=None)
    suppliers.dmarket.server.RequestHandlerClass.clock_offset = 600  # 10 minutes ahead
    assert supplier_listings_poll(name="dmarket") == 1
    assert suppliers.dmarket.world.requests.count("/exchange/v1/market/items") == 2
    suppliers.waxpeer.world.fault = "429"
    assert supplier_listings_poll(name="waxpeer") == 0
    waxpeer = Supplier.objects.get(pk="waxpeer")
    assert waxpeer.paused_until > clock.real_now() + timedelta(seconds=15)
    assert waxpeer.errors.get().message == "rate limited (429)"
    requests = len(suppliers.waxpeer.world.requests)
    assert supplier_listings_poll(name="waxpeer") == 0  # paused: not asked
    # Waxpeer's rate limit is real time: the sandbox clock (any merchant's advance) lifts nothing.
    clock_advance(3600)
    assert supplier_listings_poll(name="waxpeer") == 0
    assert len(suppliers.waxpeer.world.requests) == requests
    suppliers.waxpeer.world.fault = ""
    real_clock_advance(int((waxpeer.paused_until - clock.real_now()).total_seconds()) + 1)
    supplier_listings_poll(name="waxpeer")  # the pause is over: asked again
    assert len(suppliers.waxpeer.world.requests) > requests
