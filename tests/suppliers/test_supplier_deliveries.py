"""How bought items reach the recipient, against the recorded Waxpeer and DMarket: the trade
offer's id is the one the supplier reports (Waxpeer's ``trade_id``, never one we make up); an
item bought from DMarket's own inventory is withdrawn to our bot once, under a request id
written before DMarket is asked, whatever answers are lost or workers die; a p2p offer is
bought as one and traded by its seller."""

from decimal import Decimal

import pytest

from tests.factories import trade_url
from tests.suppliers.servers import Listing
from tests.withdrawals.conftest import ok_data, wallet_clean
from trading.models import SupplierOrder, SupplierWithdraw, TradeItem
from trading.services.supplier_withdraws import CLAIM, HELD_AFTER_LOST
from trading.services.suppliers import supplier_listings_poll, supplier_orders_follow

pytestmark = pytest.mark.django_db

WAX_ID = "27165625733"
DM_OFFER = "c3d4e5f6-a7b8-4012-8def-345678901234"
DM_ASSET = "b1a2c3d4-0000-4000-8000-000000000001"
NAME = "AK-47 | Redline (Field-Tested)"
WEEK = 7 * 24 * 3600


@pytest.fixture
def later(clock_advance, suppliers):
    """Move the service clock and the suppliers' clocks together."""

    def move(seconds: float) -> None:
        clock_advance(int(seconds))
        suppliers.clock_moved(seconds)

    return move


def buy(desk, actor, listing_id: str, price: str) -> TradeItem:
    body = {"tradeUrl": trade_url(42), "items": [{"itemId": listing_id, "price": Decimal(price)}]}
    trade_id = ok_data(desk.post("/secure/buy", body, headers=actor.headers))["id"]
    return TradeItem.objects.get(trade_id=trade_id)


def follow(later) -> int:
    later(120)
    return supplier_orders_follow()


def shown(desk, actor, item: TradeItem) -> dict:
    return ok_data(desk.get(f"/secure/trades/{item.trade_id}", headers=actor.headers))


@pytest.fixture
def dmarket_bought(suppliers, desk, alice_funded, catalog_item):
    """An item bought from DMarket's own inventory (``dmarket``), locked for ``locked_for``."""

    def bought(locked_for: int = 0) -> TradeItem:
        suppliers.dmarket.world.listings[DM_OFFER] = Listing(
            ref=DM_OFFER, name=NAME, price=1_100, asset=DM_ASSET, locked_for=locked_for
        )
        supplier_listings_poll(name="dmarket")
        item = buy(desk, alice_funded, f"dmarket-{DM_OFFER}", "11.55")
        assert suppliers.dmarket.world.buys[0]["type"] == "dmarket"
        return item

    return bought


def test_the_offer_id_is_the_one_waxpeer_reports_once_it_reports_one(
    suppliers, desk, alice_funded, catalog_item, later
):
    suppliers.waxpeer.world.listings[WAX_ID] = Listing(ref=WAX_ID, name=NAME, price=10_500)
    supplier_listings_poll(name="waxpeer")
    item = buy(desk, alice_funded, f"waxpeer-{WAX_ID}", "11.03")
    trade = suppliers.waxpeer.world.trades[item.purchase_ref]
    trade["status"] = 4  # Waxpeer says sent, but no trade offer is reported yet
    assert follow(later) == 0
    assert "offerID" not in shown(desk, alice_funded, item)
    assert TradeItem.objects.get(pk=item.pk).status == "pending"

    offer_id = suppliers.waxpeer.world.seller_sends(item.purchase_ref)
    assert follow(later) == 1
    active = shown(desk, alice_funded, item)
    assert (active["status"], active["offerID"]) == ("active", offer_id)
    assert active["items"][0]["offerID"] == offer_id


def test_a_dmarket_item_is_withdrawn_once_its_lock_ends(suppliers, dmarket_bought, later):
    item = dmarket_bought(locked_for=WEEK)
    assert follow(later) == 0
    assert suppliers.dmarket.world.withdraws == []  # not withdrawable yet: nothing asked
    assert not SupplierWithdraw.objects.exists()
    later(WEEK)
    assert follow(later) == 0
    (withdraw,) = suppliers.dmarket.world.withdraws
    row = SupplierWithdraw.objects.get()
    assert withdraw["requestId"] == row.request_id
    assert (row.state, row.order.key) == ("sent", f"ti-{item.pk}")
    suppliers.dmarket.world.arrives_in_steam(DM_ASSET)
    assert follow(later) == 1
    assert SupplierOrder.objects.get(key=f"ti-{item.pk}").state == "at_bot"
    assert len(suppliers.dmarket.world.withdraws) == 1


def test_a_lost_withdraw_answer_is_settled_by_the_inventory_not_sent_again(
    suppliers, dmarket_bought, later
):
    dmarket_bought()
    suppliers.dmarket.world.fault = "hold"  # DMarket takes it; the answer never arrives
    follow(later)
    row = SupplierWithdraw.objects.get()
    assert (row.state, row.attempts) == ("unknown", 1)
    assert suppliers.dmarket.world.trades[DM_ASSET]["Location"] == "AssetLocationInTransfer"
    later(HELD_AFTER_LOST.total_seconds())
    follow(later)  # the inventory shows it on its way: it was withdrawn
    row.refresh_from_db()
    assert row.state == "sent"
    assert len(suppliers.dmarket.world.withdraws) == 1
    assert SupplierOrder.objects.get().state == "sent"


def test_a_withdraw_whose_worker_died_is_asked_again_under_the_same_request_id(
    suppliers, dmarket_bought, later
):
    dmarket_bought()
    suppliers.dmarket.world.fault = "maintenance"  # nothing sent: due again a minute later
    suppliers.dmarket.world.fault_path = "/exchange/v1/withdraw-assets"
    follow(later)
    row = SupplierWithdraw.objects.get()
    assert (row.state, row.attempts, suppliers.dmarket.world.withdraws) == ("due", 1, [])
    # A worker claimed it and died before DMarket answered (nothing reached DMarket).
    SupplierWithdraw.objects.filter(pk=row.pk).update(state="sending", attempts=2)
    later(CLAIM.total_seconds())
    follow(later)
    row.refresh_from_db()
    assert row.state == "unknown"  # never sent again blind
    assert suppliers.dmarket.world.withdraws == []
    later(HELD_AFTER_LOST.total_seconds())
    follow(later)  # still held for us: nothing happened, so it is asked for again
    (withdraw,) = suppliers.dmarket.world.withdraws
    row.refresh_from_db()
    assert (withdraw["requestId"], row.state, row.attempts) == (row.request_id, "sent", 3)
    follow(later)
    assert len(suppliers.dmarket.world.withdraws) == 1


def test_a_p2p_offer_is_bought_as_one_and_never_withdrawn(
    suppliers, desk, alice_funded, catalog_item, later
):
    suppliers.dmarket.world.listings[DM_OFFER] = Listing(
        ref=DM_OFFER, name=NAME, price=1_100, asset=DM_ASSET, held=False
    )
    supplier_listings_poll(name="dmarket")
    item = buy(desk, alice_funded, f"dmarket-{DM_OFFER}", "11.55")
    assert suppliers.dmarket.world.buys[0]["type"] == "p2p"
    assert TradeItem.objects.get(pk=item.pk).purchase_ref  # bought, not refused
    assert follow(later) == 0  # its seller has not started the trade: nothing to see yet
    suppliers.dmarket.world.dmarket_bot_sends(DM_ASSET)  # the seller's trade to our bot
    assert follow(later) == 0
    suppliers.dmarket.world.arrives_in_steam(DM_ASSET)
    assert follow(later) == 1
    assert SupplierOrder.objects.get().state == "at_bot"
    assert suppliers.dmarket.world.withdraws == []
    assert not SupplierWithdraw.objects.exists()
    assert wallet_clean()
