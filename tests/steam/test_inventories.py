"""CS2 inventories as Steam shows them (issue 38, item 1): a user's where Steam shows it to
others (context 2, without the trade-protected context 16 only its owner may read), a bot's own
with its session (both contexts), and "private" only where Steam means it."""

from decimal import Decimal

import pytest
from django.core.management import call_command

from tests.factories import platform_id
from tests.steam.conftest import AK, BOT_ID, OWNER, ak_assets
from tests.steam.helpers import deposit, poll, sent_offer, trade_of
from tests.steam.recorded import Asset
from tests.withdrawals.conftest import ok_data
from trading.marketplace.suppliers.clients import SUPPLIER_MARKETPLACE
from trading.models import SteamBot, SupplierListing
from trading.platform.steam import SteamPlatform

pytestmark = pytest.mark.django_db


def error_key(response) -> str:
    return response.json()["error"]["key"]


def protected_and_hidden(steam, steam_id: str) -> None:
    """Two tradable items, one shown to its owner only, one trade protected (context 16)."""
    shown = ak_assets(2)
    hidden = Asset("11000000005", AK, wear="0.2512", owner_only=True)
    protected = ak_assets(1, start=9)
    for asset in protected:
        asset.protected_until = steam.now() + 86_400
    steam.user(steam_id, inventory={(730, "2"): [*shown, hidden], (730, "16"): protected})


def test_a_users_inventory_with_protected_items_is_what_steam_shows_others(
    desk, alice, owner, steam, bot
):
    protected_and_hidden(steam, platform_id(OWNER))

    response = desk.get("/client/inventory", headers=owner, params={"game": 730})

    items = ok_data(response)["inventory"]
    assert sorted(i["assetId"] for i in items) == ["11000000001", "11000000002"]
    asked = {c[1] for c in steam.calls_to(f"/inventory/{platform_id(OWNER)}/")}
    assert asked == {f"/inventory/{platform_id(OWNER)}/730/2"}  # never the owner's context 16


def test_a_private_profile_is_inventory_private_and_a_protected_item_is_not(
    desk, alice, owner, steam, bot
):
    steam.user(platform_id(OWNER), private=True)

    response = desk.get("/client/inventory", headers=owner, params={"game": 730})

    assert response.status_code == 400
    assert error_key(response) == "INVENTORY_PRIVATE"


def test_the_bots_own_inventory_is_read_with_its_session(steam, bot):
    protected_and_hidden(steam, BOT_ID)

    assets = SteamPlatform().inventory(BOT_ID, 730, tenant="")

    assert [(a.asset_id, a.tradable) for a in assets] == [
        ("11000000001", True),
        ("11000000002", True),
        ("11000000005", True),  # shown to the bot, its owner, only
        ("11000000009", False),  # trade protected: shown, never tradable here
    ]


def test_a_session_steam_dropped_is_renewed_before_the_bots_inventory_is_read(steam, bot):
    """Steam reads a dropped session's cookies as an anonymous visitor's: context 2 would
    answer its public view; the protected context's 403 makes the bot log in again first."""
    protected_and_hidden(steam, BOT_ID)
    steam.expire_sessions()

    assets = SteamPlatform().inventory(BOT_ID, 730, tenant="")

    assert "11000000005" in [a.asset_id for a in assets]
    assert len(steam.calls_to("GenerateAccessTokenForApp")) == 2  # the fixture's login, and now
    assert SteamBot.objects.get(pk=bot.pk).state == SteamBot.State.ONLINE


def test_the_bots_poll_applies_changes_and_counts_its_protected_items(
    desk, alice, owner, steam, bot
):
    asset = steam.users[platform_id(OWNER)].inventory[(730, "2")][0].assetid
    trade = ok_data(deposit(desk, owner, asset))
    steam.accept(sent_offer(steam, bot))  # the item reaches the bot's context 16

    poll(desk)

    assert trade_of(desk, owner, trade["id"])["status"] == "hold"
    bot.refresh_from_db()
    assert bot.inventory_count == 1
    assert bot.last_poll_at is not None


def test_an_inventory_steam_will_not_count_now_loses_no_change_of_the_poll(
    desk, alice, owner, steam, bot
):
    asset = steam.users[platform_id(OWNER)].inventory[(730, "2")][0].assetid
    trade = ok_data(deposit(desk, owner, asset))
    steam.accept(sent_offer(steam, bot))
    steam.unavailable_paths[f"/inventory/{BOT_ID}/"] = 100

    poll(desk)

    assert trade_of(desk, owner, trade["id"])["status"] == "hold"
    bot.refresh_from_db()
    assert (bot.inventory_counted_at, bot.poll_lease_until) == (None, None)


def test_staff_list_an_item_the_bot_holds_once_its_protection_ends(steam, bot, ak, settings):
    settings.MARKETPLACE = SUPPLIER_MARKETPLACE
    settings.MARKETPLACE_SUPPLIERS = []
    steam.user(BOT_ID, inventory={(730, "16"): [Asset("11000000700", AK, wear="0.2512")]})
    steam.users[BOT_ID].inventory[(730, "16")][0].protected_until = steam.now() + 3600
    with pytest.raises(Exception, match="not a tradable item"):
        call_command("stock_list", "--bot", BOT_ID, "--asset", "11000000700", "--price", "9.00")

    steam.advance(3601)
    (freed,) = steam.users[BOT_ID].inventory[(730, "2")]
    call_command("stock_list", "--bot", BOT_ID, "--asset", freed.assetid, "--price", "9.00")

    listing = SupplierListing.objects.get()
    assert (listing.asset_ref, listing.price) == (freed.assetid, Decimal("9.00"))
