"""Bot sessions that renew themselves (issue 38, item 3): the login is the mobile app's, so its
refresh token renews the access token (``GenerateAccessTokenForApp``) after every expiry with
no password; a refresh token of another platform is refused once and replaced by a mobile
login; a new refresh token is asked for only near the end of the current one."""

import jwt
import pytest

from core.sealed import unseal
from tests.steam.conftest import BOOT, BOT_ID, bot_row
from tests.steam.recorded import WEB_BROWSER, RecordedSteam
from trading.models import SteamBot
from trading.platform.base import PlatformUnavailableError
from trading.platform.steam import SteamPlatform
from trading.services.bots import steam_bot_log_in

pytestmark = pytest.mark.django_db

DAY = 86_400


def a_day_later(steam: RecordedSteam, time_passes) -> None:
    """A day passes, at Steam and at the service: the access token has expired."""
    steam.advance(DAY + 60)
    time_passes(DAY + 60)


def logins(steam: RecordedSteam) -> tuple[int, int]:
    """(password logins, renewals) Steam saw."""
    return (
        len(steam.calls_to("BeginAuthSessionViaCredentials")),
        len(steam.calls_to("GenerateAccessTokenForApp")),
    )


def audience(bot: SteamBot) -> list[str]:
    claims = jwt.decode(unseal(bot.refresh_token_sealed), options={"verify_signature": False})
    return list(claims["aud"])


def test_after_a_password_login_every_expiry_renews_without_the_password(steam, bot, time_passes):
    steam.revoke_refresh_tokens(BOT_ID)  # staff's token is gone: the password it is
    steam.expire_sessions()
    SteamPlatform().offer_updates(poller=str(bot.pk))
    assert logins(steam) == (1, 2)  # the fixture's renewal, the refused one, then the login
    login = steam.calls_to("BeginAuthSessionViaCredentials")[0][2]
    assert (login["website_id"], login["device_details[platform_type]"]) == ("Mobile", "3")

    for _ in range(3):
        a_day_later(steam, time_passes)
        SteamPlatform().offer_updates(poller=str(bot.pk))

    assert logins(steam) == (1, 5)  # three renewals, no second password login
    bot.refresh_from_db()
    assert bot.state == SteamBot.State.ONLINE
    assert "mobile" in audience(bot)


def test_a_web_browser_refresh_token_is_refused_once_and_replaced_by_a_mobile_login(
    steam, db, time_passes
):
    row = bot_row(steam.bot(BOT_ID, "atlas", platform=WEB_BROWSER))
    assert audience(row) == ["web", "derive"]

    assert steam_bot_log_in(bot=row, staff=BOOT) == SteamBot.State.ONLINE
    assert logins(steam) == (1, 1)  # refused by GenerateAccessTokenForApp, then the login
    row.refresh_from_db()
    assert "mobile" in audience(row)

    a_day_later(steam, time_passes)
    SteamPlatform().offer_updates(poller=str(row.pk))
    assert logins(steam) == (1, 2)


def test_a_web_browser_refresh_token_without_a_password_leaves_the_session_expired(steam, db):
    row = bot_row(steam.bot(BOT_ID, "atlas", platform=WEB_BROWSER))
    SteamBot.objects.filter(pk=row.pk).update(password_sealed="")
    row.refresh_from_db()

    with pytest.raises(PlatformUnavailableError):
        SteamPlatform().offer_updates(poller=str(row.pk))

    row.refresh_from_db()
    assert row.state == SteamBot.State.SESSION_EXPIRED
    assert "refresh token was refused (not the mobile app's" in row.state_detail
    assert logins(steam) == (0, 1)


def test_a_new_refresh_token_is_asked_for_only_near_the_end_of_the_current_one(
    steam, bot, time_passes
):
    first = unseal(bot.refresh_token_sealed)
    assert steam.calls_to("GenerateAccessTokenForApp")[-1][2]["renewal_type"] == "0"
    assert unseal(SteamBot.objects.get(pk=bot.pk).refresh_token_sealed) == first

    steam.advance(175 * DAY)  # 25 days left of the refresh token's 200
    time_passes(175 * DAY)
    SteamPlatform().offer_updates(poller=str(bot.pk))

    assert steam.calls_to("GenerateAccessTokenForApp")[-1][2]["renewal_type"] == "1"
    renewed = unseal(SteamBot.objects.get(pk=bot.pk).refresh_token_sealed)
    assert renewed != first
    assert first not in steam.bots[BOT_ID].refresh_tokens  # Steam ended the old one
    a_day_later(steam, time_passes)
    SteamPlatform().offer_updates(poller=str(bot.pk))
    assert logins(steam)[0] == 0
