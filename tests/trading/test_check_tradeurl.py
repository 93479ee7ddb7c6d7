"""POST /secure/check-tradeurl (contract 4.2 and 2.5) against the sandbox platform."""

import pytest

from sandbox.models import SandboxPlatformUser
from tests.factories import assert_error, platform_id, trade_url
from tests.trading.helpers import ok

pytestmark = pytest.mark.django_db

CHECK = "/secure/check-tradeurl"
USERS = "/sandbox/platform/users"
HOST = "https://steamcommunity.com/tradeoffer/new/"
STATE_NAMES = {
    1: "Normal",
    2: "Game730Banned",
    3: "Game252490Banned",
    4: "Banned",
    5: "InventoryPrivate",
    6: "TradeUrlInvalid",
    7: "UserNotFound",
    8: "UnknownError",
    9: "UserNotTradeable",
    10: "PlatformUnavailable",
}


def check(api, actor, url, **extra):
    return ok(api.post(CHECK, {"tradeurl": url, **extra}, format="json", headers=actor.headers))


def configure(api, actor, partner, **fields):
    response = api.post(
        USERS, {"platformId": platform_id(partner), **fields}, format="json", headers=actor.headers
    )
    assert ok(response) == {"platformId": platform_id(partner), "configured": True}


def test_unconfigured_user_is_normal(api, alice):
    assert check(api, alice, trade_url(5)) == {
        "state": 1,
        "platformid": "76561197960265733",
        "message": "Normal: the account can trade.",
        "canTrade": True,
        "reason": {"escrowDays": 0, "probation": False},
        "bans": {"antiCheatBanned": False, "gameBans": 0, "economyBan": "none"},
    }


@pytest.mark.parametrize("partner", [0, 1, 4294967295, 9999999999])
def test_platform_id_is_base_plus_partner(api, alice, partner):
    assert check(api, alice, trade_url(partner))["platformid"] == str(76561197960265728 + partner)


class TestBody:
    @pytest.mark.parametrize(
        "url",
        [
            "https://evil.com/tradeoffer/new/?partner=1&token=Ab3_x-Z9",
            "http://steamcommunity.com/tradeoffer/new/?partner=1&token=Ab3_x-Z9",
            "https://steamcommunity.com.evil.com/tradeoffer/new/?partner=1&token=Ab3_x-Z9",
            HOST + "?partner=12345678901&token=Ab3_x-Z9",  # 11 digits
            HOST + "?partner=&token=Ab3_x-Z9",
            HOST + "?partner=1&token=Ab3_x-Z",  # 7 characters
            HOST + "?partner=1&token=Ab3_x-Z90",  # 9 characters
            HOST + "?partner=1&token=Ab3_x+Z9",
            HOST + "?partner=1&token=Ab3_x-Z9&extra=1",
            HOST + "?token=Ab3_x-Z9&partner=1",
            "",
        ],
    )
    def test_bad_trade_url(self, api, alice, url):
        response = api.post(CHECK, {"tradeurl": url}, format="json", headers=alice.headers)
        error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
        assert set(error["fields"]) == {"tradeurl"}

    @pytest.mark.parametrize(
        ("payload", "fields"),
        [
            ({}, {"tradeurl"}),
            ({"tradeurl": 1}, {"tradeurl"}),
            ({"tradeurl": None}, {"tradeurl"}),
            ({"tradeurl": trade_url(1), "forceRefresh": "true"}, {"forceRefresh"}),
            ({"tradeurl": trade_url(1), "forceRefresh": 1}, {"forceRefresh"}),
            ({"tradeurl": trade_url(1), "force": True}, {"force"}),
            ({"tradeUrl": trade_url(1)}, {"tradeurl", "tradeUrl"}),
        ],
    )
    def test_bad_body(self, api, alice, payload, fields):
        response = api.post(CHECK, payload, format="json", headers=alice.headers)
        error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
        assert set(error["fields"]) == fields


class TestStates:
    @pytest.mark.parametrize("state", range(1, 11))
    def test_each_configured_state(self, api, alice, state):
        configure(api, alice, 7, tradeUrlState=state)
        result = check(api, alice, trade_url(7))
        assert result["state"] == state
        assert result["platformid"] == platform_id(7)
        assert result["message"].startswith(STATE_NAMES[state] + ":")
        assert result["canTrade"] is (state in (1, 2, 3))
        assert set(result) == {"state", "platformid", "message", "canTrade", "reason", "bans"}

    def test_anti_cheat_ban_is_state_2(self, api, alice):
        configure(api, alice, 7, antiCheatBanned=True, gameBans=2)
        result = check(api, alice, trade_url(7))
        assert (result["state"], result["canTrade"]) == (2, True)
        assert result["bans"] == {"antiCheatBanned": True, "gameBans": 2, "economyBan": "none"}

    def test_economy_ban_is_state_4(self, api, alice):
        configure(api, alice, 7, economyBan="banned")
        result = check(api, alice, trade_url(7))
        assert (result["state"], result["canTrade"]) == (4, False)
        assert result["bans"]["economyBan"] == "banned"
        assert result["reason"]["probation"] is False

    def test_probation_can_trade(self, api, alice):
        configure(api, alice, 7, economyBan="probation", escrowDays=7)
        result = check(api, alice, trade_url(7))
        assert (result["state"], result["canTrade"]) == (1, True)
        assert result["reason"] == {"escrowDays": 7, "probation": True}
        assert result["bans"]["economyBan"] == "probation"

    def test_private_inventory_is_state_5(self, api, alice):
        configure(api, alice, 7, inventoryPrivate=True)
        result = check(api, alice, trade_url(7))
        assert (result["state"], result["canTrade"]) == (5, False)

    def test_game_bans_alone_leave_the_account_normal(self, api, alice):
        configure(api, alice, 7, gameBans=3)
        result = check(api, alice, trade_url(7))
        assert (result["state"], result["bans"]["gameBans"]) == (1, 3)

    def test_explicit_state_wins_over_derived_ones(self, api, alice):
        configure(api, alice, 7, tradeUrlState=9, antiCheatBanned=True)
        assert check(api, alice, trade_url(7))["state"] == 9


class TestPlatformFaults:
    @pytest.mark.parametrize(
        ("fault", "state"), [("unavailable", 10), ("rate_limited", 10), ("error", 8)]
    )
    def test_fault_is_a_state_not_a_500(self, api, alice, fault, state):
        configure(api, alice, 7, fault=fault)
        result = check(api, alice, trade_url(7))
        assert result["state"] == state
        assert result["canTrade"] is False
        assert result["message"].startswith(STATE_NAMES[state])
        assert result["platformid"] == platform_id(7)

    @pytest.mark.parametrize("fault", ["unavailable", "rate_limited", "error"])
    def test_faults_are_not_cached(self, api, alice, fault):
        configure(api, alice, 7, fault=fault)
        assert check(api, alice, trade_url(7))["state"] != 1
        configure(api, alice, 7)
        assert check(api, alice, trade_url(7))["state"] == 1

    @pytest.mark.parametrize("state", [8, 10])
    def test_transient_states_are_not_cached(self, api, alice, state):
        configure(api, alice, 7, tradeUrlState=state)
        assert check(api, alice, trade_url(7))["state"] == state
        configure(api, alice, 7)
        assert check(api, alice, trade_url(7))["state"] == 1


class TestCache:
    def test_an_hour_of_service_clock(self, api, alice, advance_clock):
        configure(api, alice, 7)
        assert check(api, alice, trade_url(7))["state"] == 1
        # The platform changes underneath (the sandbox helper would also forget the cache).
        SandboxPlatformUser.objects.filter(platform_id=platform_id(7)).update(trade_url_state=4)
        assert check(api, alice, trade_url(7))["state"] == 1  # cached
        advance_clock(59 * 60)
        assert check(api, alice, trade_url(7))["state"] == 1  # still within the hour
        advance_clock(2 * 60)
        assert check(api, alice, trade_url(7))["state"] == 4  # 61 minutes: asked again

    def test_force_refresh_asks_again_and_caches_the_answer(self, api, alice):
        configure(api, alice, 7)
        assert check(api, alice, trade_url(7))["state"] == 1
        SandboxPlatformUser.objects.filter(platform_id=platform_id(7)).update(trade_url_state=4)
        assert check(api, alice, trade_url(7), forceRefresh=False)["state"] == 1
        assert check(api, alice, trade_url(7), forceRefresh=True)["state"] == 4
        SandboxPlatformUser.objects.filter(platform_id=platform_id(7)).update(trade_url_state=1)
        assert check(api, alice, trade_url(7))["state"] == 4  # the refreshed answer is cached

    def test_the_sandbox_helper_forgets_the_users_cached_checks(self, api, alice):
        assert check(api, alice, trade_url(7))["state"] == 1
        configure(api, alice, 7, tradeUrlState=4)
        assert check(api, alice, trade_url(7))["state"] == 4

    def test_world_changed_underneath_is_not_seen_within_the_hour(self, api, alice):
        check(api, alice, trade_url(7))
        SandboxPlatformUser.objects.create(
            merchant=alice.merchant, platform_id=platform_id(7), trade_url_state=7
        )
        assert check(api, alice, trade_url(7))["state"] == 1
        assert check(api, alice, trade_url(7), forceRefresh=True)["state"] == 7

    def test_each_url_is_cached_on_its_own(self, api, alice):
        check(api, alice, trade_url(7))
        configure(api, alice, 7, tradeUrlState=9)
        other_token = HOST + "?partner=7&token=Zz9_y-X8"
        assert check(api, alice, other_token)["state"] == 9
        assert check(api, alice, trade_url(8))["state"] == 1
