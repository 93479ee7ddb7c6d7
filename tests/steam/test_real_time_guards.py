"""What guards the Steam adapter runs on real time, Steam's: the sandbox clock, which any merchant
moves with ``POST /sandbox/clock/advance``, never lets a second worker send an offer or poll a
bot while the first holds it, never lifts a bot's pause after Steam's 429, and never renews a
session Steam still honours. Real time passing does each (docs/decisions.md, "Clocks")."""

import pytest

from tests.steam.helpers import deposit_offer_row
from trading.models import SteamBot, SteamOffer
from trading.platform.base import PlatformRateLimitedError, PlatformUnavailableError
from trading.platform.steam import SteamPlatform
from trading.platform.steam.fleet import fleet_bots
from trading.platform.steam.offers import SEND_LEASE, _lease, offer_send
from trading.platform.steam.polling import POLL_LEASE, bot_poll_lease
from trading.platform.steam.session import bot_session

pytestmark = pytest.mark.django_db

DAY = 24 * 3600


def test_a_send_lease_ends_by_real_time_only(
    steam, bot, owner_user, clock_advance, real_clock_advance
):
    row = deposit_offer_row(bot, "deposit-00000000-0000-0000-0000-000000000002")
    assert _lease(row)  # a worker is sending it

    clock_advance(DAY)
    with pytest.raises(PlatformUnavailableError, match="being sent by another worker"):
        offer_send(row)
    assert steam.calls_to("/tradeoffer/new/send") == []

    real_clock_advance(int(SEND_LEASE.total_seconds()) + 1)  # that worker died
    offer = offer_send(row)
    assert len(steam.calls_to("/tradeoffer/new/send")) == 1
    assert SteamOffer.objects.get(pk=row.pk).offer_id == offer.offer_id


def test_a_poll_lease_ends_by_real_time_only(steam, bot, clock_advance, real_clock_advance):
    assert bot_poll_lease(bot)  # a worker is polling it

    clock_advance(DAY)
    assert SteamPlatform().offer_updates(poller=str(bot.pk)) == []
    assert steam.calls_to("GetTradeOffers") == []

    real_clock_advance(int(POLL_LEASE.total_seconds()) + 1)
    SteamPlatform().offer_updates(poller=str(bot.pk))
    assert len(steam.calls_to("GetTradeOffers")) == 1


def test_a_bots_pause_after_steams_429_ends_by_real_time_only(
    steam, bot, settings, clock_advance, real_clock_advance
):
    settings.STEAM_RETRIES = 1
    steam.rate_limit_next = 10
    with pytest.raises(PlatformRateLimitedError):
        SteamPlatform().offer_updates(poller=str(bot.pk))
    assert SteamBot.objects.get(pk=bot.pk).state == SteamBot.State.RATE_LIMITED

    clock_advance(DAY)
    assert fleet_bots() == []

    real_clock_advance(settings.STEAM_RATE_LIMIT_PAUSE_SECONDS + 1)
    assert [b.pk for b in fleet_bots()] == [bot.pk]


def test_a_session_steam_still_honours_is_not_renewed_by_the_sandbox_clock(
    steam, bot, clock_advance, real_clock_advance
):
    logins = len(steam.calls_to("IAuthenticationService"))

    clock_advance(2 * DAY)  # past the access token's day by the sandbox clock
    bot_session(SteamBot.objects.get(pk=bot.pk))
    assert len(steam.calls_to("IAuthenticationService")) == logins

    real_clock_advance(DAY)  # past it by Steam's
    bot_session(SteamBot.objects.get(pk=bot.pk))
    assert len(steam.calls_to("IAuthenticationService")) > logins
