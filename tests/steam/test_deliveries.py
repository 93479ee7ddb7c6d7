"""Withdrawal items our bots hand to the recipient, through the HTTP API with the real adapters
on both sides: ``GAME_PLATFORM`` is the Steam adapter against the recorded Steam,
``MARKETPLACE`` the supplier marketplace against the recorded DMarket (and Waxpeer).

A DMarket fill: bought at DMarket, delivered by DMarket's bot to the Steam account linked to our
DMarket account (our bot, which accepts that offer because it expects the item), held there
under CS2 trade protection, then offered by our bot to the recipient once it may be traded,
confirmed, and followed by the poller through every end: completed, declined and expired
(refunded once), reversed. Own stock: an item a bot holds, listed by staff, bought and handed
over at once. Beat's sweeps drive everything after the request (sent as beat sends them)."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command

from tests.factories import platform_id, trade_url
from tests.steam.conftest import AK, BOT_ID
from tests.steam.helpers import poll
from tests.steam.recorded import Asset
from tests.suppliers.conftest import DMARKET_BOT, suppliers  # noqa: F401 (fixture)
from tests.suppliers.servers import Listing
from tests.withdrawals.conftest import money, ok_data, service_money, wallet_clean
from trading.accounts.selectors.tradeurls import trade_url_check
from trading.models import BotDelivery, SupplierOrder, TradeEvent, TradeItem
from trading.services.suppliers import supplier_listings_poll, supplier_orders_follow
from trading.tasks import sweep_deliveries, sweep_holds
from trading.withdrawals.services.deliveries import CLAIM, NOT_TRADABLE_YET
from trading.withdrawals.services.handover import ARRIVAL_LOOK_EVERY
from wallet.models import Transfer

pytestmark = pytest.mark.django_db

RECIPIENT = 42
DM_OFFER = "c3d4e5f6-a7b8-4012-8def-345678901234"
DM_ASSET = "b1a2c3d4-0000-4000-8000-000000000001"
DMARKET_STEAM_BOT = "76561199200000009"  # DMarket's own bot, which sends us what we bought
WEAR = "0.2512345678"
PAID = Decimal("11.55")  # DMarket's 11.00 with alice's 5 % fee


def seconds(delta: timedelta) -> int:
    return int(delta.total_seconds()) + 1


@pytest.fixture
def world(steam, suppliers, bot, ak):  # noqa: F811 (the suppliers fixture)
    assert DMARKET_BOT == BOT_ID  # DMarket delivers to our bot
    steam.user(platform_id(RECIPIENT))
    suppliers.dmarket.world.listings[DM_OFFER] = Listing(
        ref=DM_OFFER, name=AK, price=1_100, asset=DM_ASSET, wear=float(WEAR)
    )
    assert supplier_listings_poll(name="dmarket") == 1
    return suppliers


def buy(desk, alice, listing_id: str, price: Decimal) -> str:
    body = {"tradeUrl": trade_url(RECIPIENT), "items": [{"itemId": listing_id, "price": price}]}
    return ok_data(desk.post("/secure/buy", body, headers=alice.headers))["id"]


def trade_json(desk, alice, trade_id: str) -> dict:
    return ok_data(desk.get(f"/secure/trades/{trade_id}", headers=alice.headers))


def follow(desk, clock_advance) -> int:
    """The supplier follow sweep, once its recheck is due."""
    clock_advance(120)
    return desk.run(supplier_orders_follow)


def sweep(desk) -> int:
    """Beat's delivery sweep; its tasks run here (eagerly)."""
    return desk.run(lambda: sweep_deliveries.apply().get())


def list_stock(asset: str, price: str) -> None:
    """Staff put an item the bot holds on sale (``manage.py stock_list``)."""
    call_command("stock_list", "--bot", BOT_ID, "--asset", asset, "--price", price)


def refunds(trade_id: str) -> int:
    item = TradeItem.objects.get(trade_id=trade_id)
    return Transfer.objects.filter(
        cause_type="trade_item", cause_id=str(item.pk), kind="REFUND"
    ).count()


@pytest.fixture
def dmarket_live(desk, alice, steam, world, bot, clock_advance) -> dict:
    """A DMarket fill offered to the recipient by our bot (``active``), step by step."""
    trade_id = buy(desk, alice, f"dmarket-{DM_OFFER}", PAID)
    item = TradeItem.objects.get(trade_id=trade_id)
    assert item.status == "pending"
    delivery = BotDelivery.objects.get(item=item)
    assert (delivery.bot_platform_id, delivery.asset_id, delivery.market_hash_name) == (
        BOT_ID,
        "",
        AK,
    )

    # DMarket's bot sends the item to our account: on its way, the withdrawal stays pending.
    world.dmarket.world.trades[DM_ASSET]["Location"] = "AssetLocationInTransfer"
    assert follow(desk, clock_advance) == 0
    assert SupplierOrder.objects.get(key=f"ti-{item.pk}").state == "sent"
    gift = steam.gift(DMARKET_STEAM_BOT, BOT_ID, [Asset("12000000001", AK, wear=WEAR)])
    stranger = steam.gift(
        DMARKET_STEAM_BOT, BOT_ID, [Asset("12000000002", "Glock-18 | Fade", classid="520025252")]
    )
    poll(desk)
    assert steam.accepted_by_partner == [gift.id]  # expected: accepted
    assert steam.offers[stranger.id].state == 7  # not asked for: declined
    assert TradeItem.objects.get(pk=item.pk).status == "pending"

    # It arrived (DMarket says so): protected by CS2 for now, so the bot may not trade it yet.
    world.dmarket.world.trades[DM_ASSET]["Location"] = "AssetLocationInGame"
    assert follow(desk, clock_advance) == 1
    order = SupplierOrder.objects.get(key=f"ti-{item.pk}")
    assert (order.state, order.next_check_at) == ("at_bot", None)
    assert steam.sent_by(BOT_ID) == []
    delivery.refresh_from_db()
    assert "not tradable yet" in delivery.error

    # Protection over: the next look finds it tradable and the bot offers it.
    steam.protection_ends(BOT_ID)
    clock_advance(seconds(NOT_TRADABLE_YET))
    assert sweep(desk) == 1
    (offer,) = steam.sent_by(BOT_ID)
    assert offer.partner == platform_id(RECIPIENT)
    assert offer.state == 2  # confirmed on the mobile confirmation endpoints: live
    assert [a["assetid"] for a in offer.give] == steam_asset_ids(steam, AK)
    trade = trade_json(desk, alice, trade_id)
    assert trade["status"] == "active"
    assert trade["offerID"] == offer.id
    assert trade["botInfo"]["platformId"] == BOT_ID
    assert BotDelivery.objects.get(item=item).state == "offered"
    assert sweep(desk) == 0  # nothing due: never a second offer
    return {"trade": trade_id, "offer": offer.id, "item": item.pk}


def steam_asset_ids(steam, name: str) -> list[str]:
    return [a.assetid for a in steam.users[BOT_ID].inventory[(730, "2")] if a.name == name]


def test_a_dmarket_fill_is_handed_over_by_our_bot_and_completes(
    desk, alice, steam, dmarket_live, clock_advance
):
    before = money(alice)
    steam.accept(dmarket_live["offer"])
    poll(desk)
    assert trade_json(desk, alice, dmarket_live["trade"])["status"] == "hold"
    clock_advance(8 * 86400 + 60)
    desk.run(lambda: sweep_holds.apply().get())

    assert trade_json(desk, alice, dmarket_live["trade"])["status"] == "completed"
    assert money(alice)["locked"] == before["locked"] - PAID
    assert service_money("supplier") == Decimal("11.00")
    assert refunds(dmarket_live["trade"]) == 0
    assert wallet_clean()


@pytest.mark.parametrize(
    ("move", "error"), [("decline", "OFFER_NOT_ACCEPTED"), ("expire", "OFFER_EXPIRED")]
)
def test_a_declined_or_expired_handover_is_refunded_once(
    desk, alice, steam, dmarket_live, move, error
):
    before = money(alice)
    getattr(steam, move)(dmarket_live["offer"])
    poll(desk)
    poll(desk)  # seen again: nothing more happens

    trade = trade_json(desk, alice, dmarket_live["trade"])
    assert (trade["status"], trade["error"]) == ("declined", error)
    assert money(alice)["available"] == before["available"] + PAID
    assert refunds(dmarket_live["trade"]) == 1
    assert (
        TradeEvent.objects.filter(trade_id=dmarket_live["trade"], to_status="declined").count() == 1
    )
    assert len(steam.sent_by(BOT_ID)) == 1
    assert wallet_clean()


def test_an_offer_left_past_its_deadline_is_withdrawn_and_refunded_once(
    desk, alice, steam, dmarket_live, clock_advance, settings
):
    before = money(alice)
    clock_advance(settings.STEAM_DELIVERY_OFFER_MINUTES * 60 + 60)
    poll(desk)  # the bot cancels its offer at its deadline
    poll(desk)  # and sees it cancelled: the offer expired

    trade = trade_json(desk, alice, dmarket_live["trade"])
    assert (trade["status"], trade["error"]) == ("declined", "OFFER_EXPIRED")
    assert steam.offers[dmarket_live["offer"]].state == 6
    assert money(alice)["available"] == before["available"] + PAID
    assert refunds(dmarket_live["trade"]) == 1
    assert wallet_clean()


def test_a_handover_reversed_by_trade_protection_is_reverted_and_refunded(
    desk, alice, steam, dmarket_live
):
    before = money(alice)
    steam.accept(dmarket_live["offer"])
    poll(desk)
    steam.reverse(dmarket_live["offer"])
    poll(desk)
    poll(desk)

    trade = trade_json(desk, alice, dmarket_live["trade"])
    assert (trade["status"], trade["revertedBy"]) == ("reverted", "user")
    assert money(alice)["available"] == before["available"] + PAID
    assert refunds(dmarket_live["trade"]) == 1
    assert wallet_clean()


def test_a_send_that_fails_for_now_is_retried_by_the_sweep_once_due(
    desk, alice, steam, world, bot, clock_advance
):
    """Steam down when the item is ready: the delivery waits (nothing failed, nothing
    refunded) and the sweep offers it when its deadline comes, once."""
    steam.user(BOT_ID, inventory={(730, "2"): [Asset("11000000700", AK, wear=WEAR)]})
    list_stock("11000000700", "9.00")
    # The recipient's trade URL was checked a moment ago (the check is cached): then Steam
    # stops answering.
    trade_url_check(merchant=alice.merchant, url=trade_url(RECIPIENT), force_refresh=False)
    steam.unavailable_next = 100
    trade_id = buy(desk, alice, "stock-11000000700", Decimal("9.45"))
    steam.unavailable_next = 0
    delivery = BotDelivery.objects.get(trade_id=trade_id)
    assert (delivery.state, delivery.attempts) == ("waiting", 1)
    assert "Steam" in delivery.error
    assert trade_json(desk, alice, trade_id)["status"] == "pending"
    assert sweep(desk) == 0  # not due yet: the deadline moved on
    clock_advance(60)

    assert sweep(desk) == 1
    assert trade_json(desk, alice, trade_id)["status"] == "active"
    assert len(steam.sent_by(BOT_ID)) == 1
    assert BotDelivery.objects.get(trade_id=trade_id).attempts == 2


def test_own_stock_is_listed_bought_and_handed_over_at_once(
    desk, alice, steam, world, bot, clock_advance
):
    steam.user(BOT_ID, inventory={(730, "2"): [Asset("11000000700", AK, wear=WEAR)]})
    list_stock("11000000700", "9.00")
    market = ok_data(
        desk.get("/secure/market", headers=alice.headers, params={"search": "Redline"})
    )
    listing = next(i for i in market["items"] if i["id"] == "stock-11000000700")
    assert listing["offer"]["delivery"] == "instant"
    assert listing["offer"]["price"] == Decimal("9.45")
    before = money(alice)

    trade_id = buy(desk, alice, "stock-11000000700", Decimal("9.45"))

    # Approved, bought from our own stock, offered by the bot and confirmed: one request.
    (offer,) = steam.sent_by(BOT_ID)
    assert [a["assetid"] for a in offer.give] == ["11000000700"]
    assert offer.state == 2
    trade = trade_json(desk, alice, trade_id)
    assert (trade["status"], trade["offerID"]) == ("active", offer.id)
    assert not world.dmarket.world.buys  # nobody else was asked
    steam.accept(offer.id)
    poll(desk)
    clock_advance(8 * 86400 + 60)
    desk.run(lambda: sweep_holds.apply().get())
    assert trade_json(desk, alice, trade_id)["status"] == "completed"
    assert money(alice)["available"] == before["available"] - Decimal("9.45")
    assert wallet_clean()


def test_an_own_stock_item_gone_from_the_bot_fails_and_is_refunded(desk, alice, steam, world, bot):
    steam.user(BOT_ID, inventory={(730, "2"): [Asset("11000000700", AK, wear=WEAR)]})
    list_stock("11000000700", "9.00")
    steam.user(BOT_ID, inventory={})  # traded away behind the service's back
    before = money(alice)

    trade_id = buy(desk, alice, "stock-11000000700", Decimal("9.45"))

    trade = trade_json(desk, alice, trade_id)
    assert (trade["status"], trade["items"][0]["error"]) == ("failed", "ITEMS_UNAVAILABLE")
    assert money(alice)["available"] == before["available"]
    assert BotDelivery.objects.get(trade_id=trade_id).state == "ended"
    assert wallet_clean()


def test_an_item_never_arriving_keeps_waiting_and_is_looked_for_again(
    desk, alice, steam, world, bot, clock_advance
):
    trade_id = buy(desk, alice, f"dmarket-{DM_OFFER}", PAID)
    clock_advance(seconds(ARRIVAL_LOOK_EVERY))
    assert sweep(desk) == 1
    delivery = BotDelivery.objects.get(trade_id=trade_id)
    assert delivery.error == "not in the bot's inventory yet"
    assert delivery.state == "waiting"
    assert trade_json(desk, alice, trade_id)["status"] == "pending"
    assert money(alice)["locked"] == PAID  # nothing refunded on a guess
    assert CLAIM < ARRIVAL_LOOK_EVERY


def test_a_quick_instant_withdrawal_is_filled_from_own_stock_and_handed_over(
    desk, alice, steam, world, bot, ak
):
    steam.user(BOT_ID, inventory={(730, "2"): [Asset("11000000700", AK, wear=WEAR)]})
    list_stock("11000000700", "9.00")
    body = {
        "tradeUrl": trade_url(RECIPIENT),
        "itemId": ak.id,
        "maxPrice": Decimal("10.00"),
        "amount": 1,
        "delivery": "instant",
    }
    trade_id = ok_data(desk.post("/secure/buy/quick", body, headers=alice.headers))["id"]

    item = TradeItem.objects.get(trade_id=trade_id)
    assert (item.listing_id, item.price) == ("stock-11000000700", Decimal("9.45"))
    (offer,) = steam.sent_by(BOT_ID)
    assert [a["assetid"] for a in offer.give] == ["11000000700"]
    assert trade_json(desk, alice, trade_id)["status"] == "active"
    assert money(alice)["locked"] == Decimal("9.45")  # the savings under maxPrice handed back
    assert wallet_clean()
