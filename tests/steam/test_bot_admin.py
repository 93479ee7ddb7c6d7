"""Staff's pages for the bots, through the admin over HTTP (Django's test client): the list with
each bot's state, the add form sealing the secrets typed in, the change form that never shows a
secret again, and the "Log in again" action (with the reason staff give) logging the bot in at
the recorded Steam."""

import pytest
from django.contrib.admin.models import LogEntry

from core.models import StaffAction
from core.sealed import unseal
from tests.steam.conftest import BOT_ID
from tests.steam.recorded import RecordedSteam
from trading.models import BotDelivery, SteamBot

pytestmark = pytest.mark.django_db

LIST = "/admin/trading/steambot/"


def added(admin_client, steam: RecordedSteam, **overrides: str) -> SteamBot:
    recorded = steam.bot(BOT_ID, "atlas")
    form = {
        "name": "Bot Atlas",
        "avatar": "",
        "account_name": recorded.account_name,
        "steam_id": recorded.steam_id,
        "games_list": "730, 252490",
        "enabled": "on",
        "inventory_capacity": "900",
        "shared_secret": recorded.shared_secret,
        "identity_secret": recorded.identity_secret,
        "refresh_token": next(iter(recorded.refresh_tokens)),
        "password": recorded.password,
        **overrides,
    }
    response = admin_client.post(f"{LIST}add/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    return SteamBot.objects.get(steam_id=BOT_ID)


def test_staff_add_a_bot_whose_secrets_are_sealed_and_never_shown(admin_client, steam):
    page = admin_client.get(f"{LIST}add/").content.decode()
    for field in ("shared_secret", "identity_secret", "refresh_token", "password", "games_list"):
        assert f'name="{field}"' in page

    bot = added(admin_client, steam)
    recorded = steam.bots[BOT_ID]
    assert bot.games == [730, 252490]
    assert bot.state == SteamBot.State.OFFLINE  # not logged in until the first login
    assert unseal(bot.shared_secret_sealed) == recorded.shared_secret
    assert recorded.shared_secret not in bot.shared_secret_sealed

    change = admin_client.get(f"{LIST}{bot.pk}/change/").content.decode()
    for secret in (
        recorded.shared_secret,
        recorded.identity_secret,
        recorded.password,
        next(iter(recorded.refresh_tokens)),
        bot.shared_secret_sealed,
        bot.refresh_token_sealed,
    ):
        assert secret not in change
    assert "shared_secret, identity_secret, password, refresh_token" in change  # only names
    listing = admin_client.get(LIST).content.decode()
    assert "Bot Atlas" in listing
    assert "offline" in listing


def test_a_blank_secret_keeps_the_stored_one_and_a_bad_one_is_refused(admin_client, steam):
    bot = added(admin_client, steam)
    sealed = bot.identity_secret_sealed
    form = {
        "name": "Bot Atlas 2",
        "avatar": "",
        "account_name": bot.account_name,
        "steam_id": bot.steam_id,
        "games_list": "730",
        "enabled": "on",
        "inventory_capacity": "900",
    }
    response = admin_client.post(f"{LIST}{bot.pk}/change/", form)
    assert response.status_code == 302
    bot.refresh_from_db()
    assert (bot.name, bot.identity_secret_sealed) == ("Bot Atlas 2", sealed)

    refused = admin_client.post(
        f"{LIST}{bot.pk}/change/", {**form, "shared_secret": "not base64 at all!"}
    )
    assert refused.status_code == 200
    assert "shared_secret is not base64." in refused.content.decode()
    assert "not base64 at all!" not in refused.content.decode()  # not echoed back


def log_in_again(admin_client, bot: SteamBot, reason: str = "it went offline overnight"):
    """The list's action, with the reason the page asks for."""
    return admin_client.post(
        LIST,
        {
            "action": "log_in_again",
            "_selected_action": [str(bot.pk)],
            "staff_confirm": "yes",
            "reason": reason,
        },
        follow=True,
    )


def test_log_in_again_asks_for_a_reason_first(admin_client, steam):
    bot = added(admin_client, steam)
    asked = admin_client.post(LIST, {"action": "log_in_again", "_selected_action": [str(bot.pk)]})

    assert 'name="reason"' in asked.content.decode()
    assert not steam.calls_to("GenerateAccessTokenForApp")
    blank = log_in_again(admin_client, bot, reason="   ")
    assert "This field is required." in blank.content.decode()
    assert not StaffAction.objects.exists()


def test_log_in_again_logs_the_bot_in_at_steam(admin_client, steam):
    bot = added(admin_client, steam)
    response = log_in_again(admin_client, bot)

    assert response.status_code == 200
    assert f"{bot}: online." in response.content.decode()
    action = StaffAction.objects.get()
    assert (action.action, action.subject_type, action.subject_id) == (
        "log_in_bot",
        "steam_bot",
        str(bot.pk),
    )
    assert (action.user, action.reason, action.detail["state"]) == (
        "admin",
        "it went offline overnight",
        "online",
    )
    bot.refresh_from_db()
    assert bot.state == SteamBot.State.ONLINE
    assert bot.last_login_at is not None
    assert steam.calls_to("GenerateAccessTokenForApp")  # renewed from the refresh token
    assert "online" in admin_client.get(LIST).content.decode()


def test_log_in_again_with_a_refused_session_says_why(admin_client, steam):
    bot = added(admin_client, steam, password="wrong password")
    steam.revoke_refresh_tokens(BOT_ID)
    response = log_in_again(admin_client, bot)

    page = response.content.decode()
    bot.refresh_from_db()
    assert bot.state == SteamBot.State.SESSION_EXPIRED
    assert f"{bot}: session_expired: {bot.state_detail}." in page


def test_staff_see_the_bots_deliveries(admin_client):
    page = admin_client.get("/admin/trading/botdelivery/")
    assert page.status_code == 200
    assert admin_client.get("/admin/trading/botdelivery/add/").status_code == 403
    assert not BotDelivery.objects.exists()
    assert not LogEntry.objects.exists()
