"""The sandbox helpers POST /sandbox/platform/users and POST /sandbox/bots (decisions section 8),
and their absence when SANDBOX is off."""

import importlib
from collections.abc import Iterator

import pytest
from django.test import override_settings
from django.urls import clear_url_caches

from sandbox.models import SandboxBotState, SandboxPlatformUser
from tests.factories import assert_error, platform_id
from tests.trading.factories import SandboxBotFactory
from tests.trading.helpers import ok

pytestmark = pytest.mark.django_db

USERS = "/sandbox/platform/users"
BOTS = "/sandbox/bots"
PID = platform_id(7)


def post(api, actor, path, payload):
    return api.post(path, payload, format="json", headers=actor.headers)


def refused(api, actor, path, payload, *fields):
    error = assert_error(post(api, actor, path, payload), 400, 1001, "VALIDATION_FAILED")
    assert set(error["fields"]) == set(fields), error


class TestPlatformUsers:
    def test_configures_and_replaces_a_user(self, api, alice):
        payload = {
            "platformId": PID,
            "tradeUrlState": 9,
            "antiCheatBanned": True,
            "gameBans": 3,
            "economyBan": "probation",
            "escrowDays": 15,
            "inventoryPrivate": True,
            "inventory": [
                {"marketHashName": "Tempered AK47", "game": 252490, "amount": 5},
                {
                    "marketHashName": "AK-47 | Redline (Field-Tested)",
                    "wear": 0.25,
                    "tradable": False,
                },
            ],
            "fault": "rate_limited",
        }
        assert ok(post(api, alice, USERS, payload)) == {"platformId": PID, "configured": True}
        user = SandboxPlatformUser.objects.get(merchant=alice.merchant, platform_id=PID)
        assert (user.trade_url_state, user.anti_cheat_banned, user.game_bans) == (9, True, 3)
        assert (user.economy_ban, user.escrow_days, user.inventory_private) == (
            "probation",
            15,
            True,
        )
        assert user.fault == "rate_limited"
        assert [i["marketHashName"] for i in user.inventory] == [
            "Tempered AK47",
            "AK-47 | Redline (Field-Tested)",
        ]
        # A second call replaces the whole configuration: omitted fields are reset.
        ok(post(api, alice, USERS, {"platformId": PID}))
        user.refresh_from_db()
        assert (user.trade_url_state, user.anti_cheat_banned, user.game_bans) == (None, False, 0)
        assert (user.economy_ban, user.escrow_days, user.inventory_private) == ("none", 0, False)
        assert (user.inventory, user.fault) == (None, "")
        assert SandboxPlatformUser.objects.count() == 1

    def test_integers_with_a_zero_fraction_are_those_integers(self, api, alice):
        # OpenAPI 3.1's integer (JSON Schema 2020-12): 4.0 is 4, in every integer of the body.
        item = {"marketHashName": "AK-47 | Redline (Field-Tested)", "game": 730.0, "amount": 2.0}
        payload = {
            "platformId": PID,
            "tradeUrlState": 4.0,
            "gameBans": 3.0,
            "escrowDays": 7.0,
            "inventory": [item],
        }

        ok(post(api, alice, USERS, payload))

        user = SandboxPlatformUser.objects.get(merchant=alice.merchant, platform_id=PID)
        assert (user.trade_url_state, user.game_bans, user.escrow_days) == (4, 3, 7)
        stored = user.inventory[0]
        assert (stored["game"], stored["amount"]) == (730, 2)
        assert type(stored["game"]) is type(stored["amount"]) is int

    def test_null_state_and_null_inventory_are_not_given(self, api, alice):
        ok(post(api, alice, USERS, {"platformId": PID, "tradeUrlState": None, "inventory": None}))
        user = SandboxPlatformUser.objects.get(merchant=alice.merchant, platform_id=PID)
        assert (user.trade_url_state, user.inventory) == (None, None)

    @pytest.mark.parametrize(
        "value",
        [
            "123",
            "7656119796026572",  # 16 digits
            "765611979602657290",  # 18 digits
            "86561197960265729",
            "7656119796026572x",
            76561197960265729,
            None,
            "",
        ],
    )
    def test_bad_platform_id(self, api, alice, value):
        refused(api, alice, USERS, {"platformId": value}, "platformId")
        assert not SandboxPlatformUser.objects.exists()

    def test_platform_id_is_required(self, api, alice):
        refused(api, alice, USERS, {"tradeUrlState": 4}, "platformId")

    def test_unknown_property(self, api, alice):
        refused(api, alice, USERS, {"platformId": PID, "banned": True}, "banned")
        refused(
            api,
            alice,
            USERS,
            {"platformId": PID, "inventory": [{"marketHashName": "x", "color": "red"}]},
            "inventory.0.color",
        )

    @pytest.mark.parametrize(
        ("field", "value"),
        [
            ("tradeUrlState", "4"),
            ("tradeUrlState", 0),
            ("tradeUrlState", 11),
            ("tradeUrlState", 4.5),
            ("tradeUrlState", True),
            ("antiCheatBanned", "true"),
            ("antiCheatBanned", 1),
            ("gameBans", "2"),
            ("gameBans", -1),
            ("gameBans", 101),
            ("gameBans", 1.5),
            ("economyBan", "suspended"),
            ("economyBan", None),
            ("escrowDays", 31),
            ("escrowDays", "7"),
            ("inventoryPrivate", "false"),
            ("inventory", "AK-47"),
            ("inventory", {"marketHashName": "x"}),
            ("fault", "down"),
            ("fault", True),
        ],
    )
    def test_wrong_types_and_values(self, api, alice, field, value):
        refused(api, alice, USERS, {"platformId": PID, field: value}, field)
        assert not SandboxPlatformUser.objects.exists()

    @pytest.mark.parametrize(
        ("entry", "field"),
        [
            ({}, "marketHashName"),
            ({"marketHashName": 5}, "marketHashName"),
            ({"marketHashName": "x", "game": "730"}, "game"),
            ({"marketHashName": "x", "game": 440}, "game"),
            ({"marketHashName": "x", "amount": 0}, "amount"),
            ({"marketHashName": "x", "amount": "2"}, "amount"),
            ({"marketHashName": "x", "tradable": "yes"}, "tradable"),
            ({"marketHashName": "x", "wear": 1.5}, "wear"),
            ({"marketHashName": "x", "wear": "0.1"}, "wear"),
            ({"marketHashName": "x", "phase": "Phase 9"}, "phase"),
            ({"marketHashName": "x", "assetId": 123}, "assetId"),
        ],
    )
    def test_bad_inventory_entries(self, api, alice, entry, field):
        payload = {"platformId": PID, "inventory": [{"marketHashName": "ok"}, entry]}
        refused(api, alice, USERS, payload, f"inventory.1.{field}")

    def test_a_null_inventory_entry_is_refused(self, api, alice):
        # Found by schemathesis from the documented example: a null item was a 500.
        payload = {"platformId": PID, "inventory": [{"marketHashName": "ok"}, None]}
        refused(api, alice, USERS, payload, "inventory.1")
        assert not SandboxPlatformUser.objects.exists()

    def test_needs_an_api_key(self, api, db):
        assert_error(api.post(USERS, {"platformId": PID}, format="json"), 401, 1100, "UNAUTHORIZED")


def bot_statuses(actor) -> set[str]:
    return set(
        SandboxBotState.objects.filter(merchant=actor.merchant).values_list("status", flat=True)
    )


class TestBots:
    def test_sets_every_bot(self, api, alice):
        first = SandboxBotFactory(name="Bot A", platform_id="76561199100000001")
        second = SandboxBotFactory(name="Bot B", platform_id="76561199100000002")
        SandboxBotState.objects.create(merchant=alice.merchant, bot=second, status="offline")
        data = ok(post(api, alice, BOTS, {"status": "degraded"}))
        assert data == {
            "status": "degraded",
            "bots": [
                {
                    "name": "Bot A",
                    "avatar": first.avatar,
                    "platformId": first.platform_id,
                    "status": "degraded",
                },
                {
                    "name": "Bot B",
                    "avatar": second.avatar,
                    "platformId": second.platform_id,
                    "status": "degraded",
                },
            ],
        }
        assert bot_statuses(alice) == {"degraded"}
        ok(post(api, alice, BOTS, {"status": "online"}))
        assert bot_statuses(alice) == {"online"}
        assert SandboxBotState.objects.count() == 2

    def test_without_bots(self, api, alice):
        assert ok(post(api, alice, BOTS, {"status": "online"})) == {"status": "online", "bots": []}

    @pytest.mark.parametrize(
        ("payload", "fields"),
        [
            ({}, {"status"}),
            ({"status": "broken"}, {"status"}),
            ({"status": "ONLINE"}, {"status"}),
            ({"status": None}, {"status"}),
            ({"status": 1}, {"status"}),
            ({"status": "online", "count": 3}, {"count"}),
        ],
    )
    def test_bad_body(self, api, alice, payload, fields):
        SandboxBotFactory()
        refused(api, alice, BOTS, payload, *fields)
        assert not SandboxBotState.objects.exists()


def _reload_urls() -> None:
    import config.urls

    importlib.reload(config.urls)
    clear_url_caches()


@pytest.fixture
def sandbox_off() -> Iterator[None]:
    """SANDBOX=false with the URLconf built again under it; restored afterwards."""
    try:
        with override_settings(SANDBOX=False):
            _reload_urls()
            yield
    finally:
        _reload_urls()


@pytest.mark.parametrize("path", [USERS, BOTS])
def test_helpers_do_not_exist_outside_the_sandbox(api, alice, sandbox_off, path):
    response = post(api, alice, path, {"platformId": PID, "status": "online"})
    assert_error(response, 404, 1002, "NOT_FOUND")
    assert not SandboxPlatformUser.objects.exists()
    # The rest of the API is still there.
    assert ok(api.get("/secure/prices", headers=alice.headers)) == []


def test_helpers_are_back_after_the_sandbox_is_on_again(api, alice):
    from django.conf import settings

    assert settings.SANDBOX is True
    assert ok(post(api, alice, USERS, {"platformId": PID}))["configured"] is True
    assert ok(post(api, alice, BOTS, {"status": "online"}))["bots"] == []
