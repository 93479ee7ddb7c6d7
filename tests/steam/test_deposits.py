"""A client deposit through the HTTP API with GAME_PLATFORM set to the Steam adapter: the bot
sends the offer with the trade URL's token, confirms it on the mobile endpoints, and every
offer state the user or Steam brings moves the trade as the sandbox's events do."""

from decimal import Decimal

import pytest

from tests.steam.helpers import deposit, poll, row_of, sent_offer, trade_of
from tests.withdrawals.conftest import money, ok_data, wallet_clean
from trading.deposits.services.sweeps import deposit_holds_due_complete
from trading.models import Trade, TradeEvent

pytestmark = pytest.mark.django_db

V = Decimal("36.00")


def first_asset(steam) -> str:
    return next(iter(steam.users.values())).inventory[(730, "2")][0].assetid


def test_offer_is_sent_with_the_token_confirmed_and_live(desk, alice, owner, steam, bot):
    asset = first_asset(steam)
    trade = trade_of(desk, owner, ok_data(deposit(desk, owner, asset))["id"])

    offer_id = sent_offer(steam, bot)
    offer = steam.offers[offer_id]
    assert trade["status"] == "active"
    assert trade["offerID"] == offer_id
    assert trade["botInfo"] == {"name": bot.name, "avatar": "", "platformId": bot.steam_id}
    assert offer.state == 2  # confirmed through /mobileconf
    assert [a["assetid"] for a in offer.receive] == [asset]
    assert offer.give == []
    send = steam.calls_to("/tradeoffer/new/send")[0][2]
    assert '"trade_offer_access_token": "Ab3_x-Z9"' in send["trade_offer_create_params"]
    assert row_of(trade["id"]).offer_id == offer_id


def test_accepted_moves_the_deposit_into_its_hold_once(desk, alice, owner, steam, bot):
    trade = trade_of(desk, owner, ok_data(deposit(desk, owner, first_asset(steam)))["id"])
    steam.accept(sent_offer(steam, bot))

    poll(desk)
    poll(desk)  # a second poll changes nothing

    held = trade_of(desk, owner, trade["id"])
    assert held["status"] == "hold"
    assert money(alice)["escrow"] == V
    assert TradeEvent.objects.filter(trade_id=trade["id"], kind="accepted").count() == 1


def test_reversal_by_trade_protection_reverts_with_new_asset_ids(desk, alice, owner, steam, bot):
    asset = first_asset(steam)
    trade = trade_of(desk, owner, ok_data(deposit(desk, owner, asset))["id"])
    offer_id = sent_offer(steam, bot)
    steam.accept(offer_id)
    poll(desk)
    assert trade_of(desk, owner, trade["id"])["status"] == "hold"

    back = steam.reverse(offer_id)
    poll(desk)

    reverted = trade_of(desk, owner, trade["id"])
    assert reverted["status"] == "reverted"
    assert reverted["revertedBy"] == "user"
    assert money(alice)["escrow"] == Decimal("0.00")
    row = row_of(trade["id"])
    assert row.trade_status == 12
    returned = [m["new_assetid"] for m in row.moved_assets if m["trade"] == back.id]
    assert returned
    assert asset not in returned
    assert wallet_clean()


@pytest.mark.parametrize(
    ("move", "status", "error"),
    [
        ("decline", "declined", "OFFER_NOT_ACCEPTED"),
        ("counter", "declined", "OFFER_NOT_ACCEPTED"),
        ("expire", "declined", "OFFER_EXPIRED"),
        ("remove_items", "failed", "ITEMS_UNAVAILABLE"),
    ],
)
def test_the_users_no_ends_the_deposit(desk, alice, owner, steam, bot, move, status, error):
    trade = trade_of(desk, owner, ok_data(deposit(desk, owner, first_asset(steam)))["id"])
    offer_id = sent_offer(steam, bot)
    getattr(steam, move)(offer_id)

    poll(desk)

    ended = trade_of(desk, owner, trade["id"])
    assert ended["status"] == status
    assert ended["error"] == error
    assert money(alice)["escrow"] == Decimal("0.00")
    if move == "counter":
        counters = [o for o in steam.offers.values() if o.countered == offer_id]
        assert counters[0].state == 7  # the bot declined the counter-offer


def test_bot_cancels_at_its_deadline_and_the_deposit_expires(
    desk, alice, owner, steam, bot, clock_advance
):
    trade = trade_of(desk, owner, ok_data(deposit(desk, owner, first_asset(steam)))["id"])
    offer_id = sent_offer(steam, bot)
    clock_advance(15 * 60 - 30)  # past the bot's deadline, before the domain's

    poll(desk)  # the bot cancels the offer on Steam
    assert steam.offers[offer_id].state == 6
    poll(desk)  # and Steam reports it cancelled

    ended = trade_of(desk, owner, trade["id"])
    assert ended["status"] == "declined"
    assert ended["error"] == "OFFER_EXPIRED"


def test_hold_completes_after_the_hold(desk, alice, owner, steam, bot, clock_advance):
    trade = trade_of(desk, owner, ok_data(deposit(desk, owner, first_asset(steam)))["id"])
    steam.accept(sent_offer(steam, bot))
    poll(desk)
    clock_advance(8 * 86400 + 60)

    desk.run(deposit_holds_due_complete)

    assert Trade.objects.get(pk=trade["id"]).status == "completed"  # (the client token expired)
    assert money(alice)["escrow"] == Decimal("0.00")
