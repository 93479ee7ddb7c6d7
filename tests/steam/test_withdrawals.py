"""A withdrawal delivered by a bot, service by service: bought through the API (the sandbox
marketplace), the item in the bot's inventory, the bot offers it to the recipient with the
trade URL's token; each terminal path of the offer moves the items and the money as the
sandbox's events do. (tests/steam/test_deliveries.py drives the same through the real supplier
marketplace and the beat's sweeps.)"""

from decimal import Decimal

import pytest
from django.db import transaction

from tests.factories import platform_id, trade_url
from tests.steam.conftest import ak_assets
from tests.steam.helpers import poll, row_of
from tests.withdrawals.conftest import make_listing, money, ok_data, wallet_clean
from trading.marketplace import get_marketplace
from trading.marketplace.base import HeldItem
from trading.models import Trade, TradeItem
from trading.withdrawals.services.deliveries import withdrawal_deliveries_send
from trading.withdrawals.services.handover import bot_delivery_expect
from trading.withdrawals.services.sweeps import withdrawal_holds_due_complete

pytestmark = pytest.mark.django_db
RECIPIENT = 42


@pytest.fixture
def bought(desk, alice, ak, steam, bot) -> dict:
    """alice's self buy of one listing (10.00: 10.50 for her), approved and ordered (pending);
    the item is in the bot's inventory."""
    steam.user(platform_id(RECIPIENT))
    steam.user(bot.steam_id, inventory={(730, "2"): ak_assets(1, start=500)})
    listing = make_listing(ak, "10.00", delivery="instant")
    trade = ok_data(
        desk.post(
            "/secure/buy",
            {
                "tradeUrl": trade_url(RECIPIENT),
                "items": [{"itemId": listing.id, "price": Decimal("10.50")}],
            },
            headers=alice.headers,
        )
    )
    assert Trade.objects.get(pk=trade["id"]).status == "pending"
    return {"id": trade["id"], "item": listing.id, "asset": "11000000500"}


def deliver(desk, bought, bot) -> int:
    """The bot holding the item is told to hand it over (what a purchase of own stock records),
    and the delivery is attempted as its task does."""
    item = TradeItem.objects.get(trade_id=bought["id"])
    purchase = get_marketplace().purchase_get(key=f"ti-{item.pk}")
    assert purchase is not None
    assert purchase.listing is not None
    with transaction.atomic():
        bot_delivery_expect(
            item=item,
            held=HeldItem(bot_platform_id=bot.steam_id, asset_id=bought["asset"]),
            listing=purchase.listing,
        )
    return desk.run(lambda: withdrawal_deliveries_send(trade_id=bought["id"]))


def trade_json(desk, alice, trade_id: str) -> dict:
    return ok_data(desk.get(f"/secure/trades/{trade_id}", headers=alice.headers))


def test_the_bot_offers_the_item_and_it_goes_live(desk, alice, steam, bot, bought):
    assert deliver(desk, bought, bot) == 1
    assert deliver(desk, bought, bot) == 0  # nothing sent twice

    offer = steam.sent_by(bot.steam_id)
    assert len(offer) == 1
    assert offer[0].state == 2
    assert [a["assetid"] for a in offer[0].give] == [bought["asset"]]
    trade = Trade.objects.get(pk=bought["id"])
    assert trade.status == "active"
    assert trade.offer_id == offer[0].id
    assert trade.bot_info["platformId"] == bot.steam_id


def test_accepted_holds_then_completes_and_settles(desk, alice, steam, bot, bought, clock_advance):
    before = money(alice)
    deliver(desk, bought, bot)
    steam.accept(steam.sent_by(bot.steam_id)[0].id)

    poll(desk)
    assert Trade.objects.get(pk=bought["id"]).status == "hold"
    clock_advance(8 * 86400 + 60)
    desk.run(withdrawal_holds_due_complete)

    assert Trade.objects.get(pk=bought["id"]).status == "completed"
    assert money(alice)["locked"] == before["locked"] - Decimal("10.50")
    assert wallet_clean()


def test_escrow_holds_until_the_escrow_ends(desk, alice, steam, bot, bought):
    deliver(desk, bought, bot)
    offer_id = steam.sent_by(bot.steam_id)[0].id
    steam.accept(offer_id, escrow_days=15)

    poll(desk)

    trade = Trade.objects.get(pk=bought["id"])
    assert trade.status == "hold"
    escrow_end = row_of(trade).escrow_end_at
    assert escrow_end is not None
    assert trade.hold_end_date == escrow_end  # 15 days of escrow outlast the 8-day hold


def test_reversed_by_trade_protection_refunds(desk, alice, steam, bot, bought):
    before = money(alice)
    deliver(desk, bought, bot)
    offer_id = steam.sent_by(bot.steam_id)[0].id
    steam.accept(offer_id)
    poll(desk)
    back = steam.reverse(offer_id)

    poll(desk)

    trade = trade_json(desk, alice, bought["id"])
    assert trade["status"] == "reverted"
    assert trade["revertedBy"] == "user"
    assert money(alice)["available"] == before["available"] + Decimal("10.50")
    returned = [
        m["new_assetid"] for m in row_of(bought["id"]).moved_assets if m["trade"] == back.id
    ]
    assert returned
    assert bought["asset"] not in returned  # back in the bot's inventory under a new id
    assert steam.users[bot.steam_id].inventory[(730, "2")][0].assetid in returned
    assert wallet_clean()


@pytest.mark.parametrize(
    ("move", "status", "error"),
    [("decline", "declined", "OFFER_NOT_ACCEPTED"), ("expire", "declined", "OFFER_EXPIRED")],
)
def test_the_recipients_no_refunds(desk, alice, steam, bot, bought, move, status, error):
    before = money(alice)
    deliver(desk, bought, bot)
    getattr(steam, move)(steam.sent_by(bot.steam_id)[0].id)

    poll(desk)

    trade = trade_json(desk, alice, bought["id"])
    assert trade["status"] == status
    assert trade["error"] == error
    assert money(alice)["available"] == before["available"] + Decimal("10.50")


def test_an_item_the_bot_does_not_hold_fails_and_refunds(desk, alice, steam, bot, bought):
    before = money(alice)
    bought = {**bought, "asset": "99999"}

    assert deliver(desk, bought, bot) == 0

    trade = trade_json(desk, alice, bought["id"])
    assert trade["status"] == "failed"
    assert trade["items"][0]["error"] == "ITEMS_UNAVAILABLE"
    assert money(alice)["available"] == before["available"] + Decimal("10.50")
