"""The Steam adapter's own cases against the recorded Steam: the fleet's states reaching the
contract's errors, inventories (pages, private, the count limit), the trade URL states, a
session expiring mid-poll, 429 storms, and a send whose answer was lost never repeated."""

import threading

import pytest

from core.sealed import unseal
from tests.factories import platform_id, trade_url
from tests.steam.conftest import BOT_ID, OWNER, ak_assets, bot_row
from tests.steam.helpers import deposit, deposit_offer_row, poll, sent_offer, trade_of
from tests.withdrawals.conftest import ok_data
from trading.models import SteamBot, SteamOffer
from trading.platform.base import PlatformRateLimitedError, PlatformUnavailableError
from trading.platform.steam import SteamPlatform
from trading.platform.steam.inventory import inventory_pages, public_page
from trading.platform.steam.offers import offer_send

pytestmark = pytest.mark.django_db


def error_key(response) -> str:
    return response.json()["error"]["key"]


def test_no_bot_online_is_no_bots_available(desk, alice, owner, steam, db):
    bot_row(steam.bot(BOT_ID, "atlas"))  # added, never logged in
    asset = steam.users[platform_id(OWNER)].inventory[(730, "2")][0].assetid

    response = deposit(desk, owner, asset)

    assert response.status_code == 503
    assert error_key(response) == "NO_BOTS_AVAILABLE"


def test_a_rate_limited_fleet_is_degraded(desk, alice, owner, steam, bot, settings):
    settings.STEAM_RETRIES = 1
    steam.rate_limit_next = 10
    with pytest.raises(PlatformRateLimitedError):
        SteamPlatform().offer_updates(poller=str(bot.pk))
    bot.refresh_from_db()
    assert bot.state == SteamBot.State.RATE_LIMITED
    asset = steam.users[platform_id(OWNER)].inventory[(730, "2")][0].assetid

    response = deposit(desk, owner, asset)

    assert response.status_code == 503
    assert error_key(response) == "FLEET_DEGRADED"
    assert response["Retry-After"] == "30"


def test_429_storm_within_the_retries_is_ridden_out(steam, bot, owner_user):
    steam.rate_limit_next = 3  # STEAM_RETRIES is 3: the fourth try answers

    assets = SteamPlatform().inventory(platform_id(OWNER), 730, tenant="t")

    assert len(assets) == 3
    assert len(steam.calls_to("/inventory/")) >= 4


def test_5xx_is_retried_then_unavailable(steam, bot, owner_user, settings):
    settings.STEAM_RETRIES = 2
    steam.unavailable_next = 3
    with pytest.raises(PlatformUnavailableError):
        SteamPlatform().inventory(platform_id(OWNER), 730, tenant="t")


def test_inventory_of_several_pages_joins_descriptions(steam, bot):
    many = ak_assets(2500)
    many[7].stickers = ["Natus Vincere | Katowice 2014"]
    steam.user(platform_id(OWNER), inventory={(730, "2"): many})

    assets = SteamPlatform().inventory(platform_id(OWNER), 730, tenant="t")

    pages = steam.calls_to(f"/inventory/{platform_id(OWNER)}/730/2")
    assert len(pages) == 3
    assert all(c[2]["count"] == "1000" for c in pages)
    assert pages[1][2]["start_assetid"] == many[999].assetid
    assert [a.asset_id for a in assets] == [a.assetid for a in many]
    assert str(assets[7].wear) == "0.2512"
    assert assets[7].paint_seed == 8
    assert assets[7].stickers[0]["name"] == "Sticker | Natus Vincere | Katowice 2014"


def test_count_above_1000_is_refused_by_steam(steam, bot, owner_user):
    with pytest.raises(Exception, match="400"):
        next(inventory_pages(public_page, platform_id(OWNER), 730, "2", count=1001))


def test_private_inventory_is_the_contracts_state(desk, alice, owner, steam, bot):
    steam.user(platform_id(OWNER), private=True)

    response = desk.get("/client/inventory", headers=owner, params={"game": 730})

    assert response.status_code == 400
    assert error_key(response) == "INVENTORY_PRIVATE"


@pytest.mark.parametrize(
    ("fields", "url_partner", "state"),
    [
        ({}, OWNER, 1),
        ({"vac": True}, OWNER, 2),
        ({"economy": "banned"}, OWNER, 4),
        ({"private": True}, OWNER, 5),
        ({"token": "Zz9_y-A1"}, OWNER, 6),
    ],
)
def test_trade_url_states(desk, alice, steam, bot, fields, url_partner, state):
    steam.user(platform_id(OWNER), **fields)

    response = desk.post(
        "/secure/check-tradeurl", {"tradeurl": trade_url(url_partner)}, headers=alice.headers
    )

    assert ok_data(response)["state"] == state


def test_unknown_user_is_user_not_found(desk, alice, steam, bot):
    response = desk.post(
        "/secure/check-tradeurl", {"tradeurl": trade_url(77)}, headers=alice.headers
    )
    assert ok_data(response)["state"] == 7


def test_platform_down_is_platform_unavailable_and_not_cached(desk, alice, steam, bot, settings):
    settings.STEAM_RETRIES = 0
    steam.user(platform_id(OWNER))
    steam.unavailable_next = 1
    first = ok_data(
        desk.post("/secure/check-tradeurl", {"tradeurl": trade_url(OWNER)}, headers=alice.headers)
    )
    second = ok_data(
        desk.post("/secure/check-tradeurl", {"tradeurl": trade_url(OWNER)}, headers=alice.headers)
    )
    assert (first["state"], second["state"]) == (10, 1)


def test_session_expiring_mid_poll_logs_in_again_and_loses_nothing(desk, alice, owner, steam, bot):
    asset = steam.users[platform_id(OWNER)].inventory[(730, "2")][0].assetid
    trade = ok_data(deposit(desk, owner, asset))
    steam.accept(sent_offer(steam, bot))
    steam.expire_sessions()
    before = unseal(SteamBot.objects.get(pk=bot.pk).access_token_sealed)

    poll(desk)

    assert trade_of(desk, owner, trade["id"])["status"] == "hold"
    bot.refresh_from_db()
    assert bot.state == SteamBot.State.ONLINE
    assert unseal(bot.access_token_sealed) != before
    assert steam.calls_to("GenerateAccessTokenForApp")


def test_refused_refresh_token_logs_in_with_password_and_guard_code(steam, bot):
    steam.revoke_refresh_tokens(bot.steam_id)
    steam.expire_sessions()

    SteamPlatform().offer_updates(poller=str(bot.pk))

    assert steam.calls_to("UpdateAuthSessionWithSteamGuardCode")
    assert SteamBot.objects.get(pk=bot.pk).state == SteamBot.State.ONLINE


def test_no_way_to_log_in_marks_the_session_expired(steam, bot):
    steam.revoke_refresh_tokens(bot.steam_id)
    steam.expire_sessions()
    SteamBot.objects.filter(pk=bot.pk).update(password_sealed="")
    bot.refresh_from_db()

    with pytest.raises(PlatformUnavailableError):
        SteamPlatform().offer_updates(poller=str(bot.pk))

    assert SteamBot.objects.get(pk=bot.pk).state == SteamBot.State.SESSION_EXPIRED
    assert SteamPlatform().fleet_status(tenant="t") == "degraded"


def test_a_send_whose_answer_was_lost_is_found_not_sent_again(steam, bot, owner_user, settings):
    """The state a worker killed between sending and recording leaves: the attempt counted, no
    offer id stored. The next attempt finds the offer by its reference and sends nothing."""
    settings.STEAM_TIMEOUT_SECONDS = 0.5
    steam.send_release = threading.Event()  # Steam makes the offer but its answer never comes
    row = deposit_offer_row(bot, "deposit-00000000-0000-0000-0000-000000000001")
    with pytest.raises(PlatformUnavailableError):
        offer_send(row)
    row.refresh_from_db()
    assert (row.offer_id, row.send_attempts) == ("", 1)
    steam.send_release.set()
    steam.send_release = None
    SteamOffer.objects.filter(pk=row.pk).update(send_lease_until=None)
    row.refresh_from_db()

    offer = offer_send(row)

    assert len(steam.calls_to("/tradeoffer/new/send")) == 1
    assert offer.offer_id == steam.sent_by(bot.steam_id)[0].id
    assert SteamOffer.objects.get(pk=row.pk).offer_id == offer.offer_id
