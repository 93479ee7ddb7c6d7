"""Each merchant drives its own sandbox world (decisions section 8): a platform user or a fleet
status one merchant set through the helpers is never seen by another merchant's inventories and
trade URL checks; that merchant keeps the generated user and its own fleet."""

import pytest

from tests.factories import assert_error, platform_id, trade_url
from tests.trading.helpers import ok

pytestmark = pytest.mark.django_db

USERS = "/sandbox/platform/users"
BOTS = "/sandbox/bots"
PID = platform_id(7)
ONE_AK = [{"marketHashName": "AK-47 | Redline (Field-Tested)", "assetId": "9001"}]


def post(api, actor, path, payload):
    return api.post(path, payload, format="json", headers=actor.headers)


def inventory(api, actor, **params):
    query = {"tradeUrl": trade_url(7), "game": "730", **params}
    return api.get("/secure/inventory", query, headers=actor.headers)


def inventory_ids(api, actor, **params) -> list[str]:
    return [row["assetId"] for row in ok(inventory(api, actor, **params))["inventory"]]


def check(api, actor, **body):
    return ok(post(api, actor, "/secure/check-tradeurl", {"tradeurl": trade_url(7), **body}))


def test_a_configured_user_is_seen_only_by_its_merchant(api, alice, bob, world):
    generated = inventory_ids(api, bob)  # read, and cached, before alice configures the user
    assert inventory_ids(api, alice) == generated

    ok(post(api, alice, USERS, {"platformId": PID, "escrowDays": 7, "inventory": ONE_AK}))

    assert inventory_ids(api, alice) == ["9001"]
    assert check(api, alice)["reason"]["escrowDays"] == 7
    assert inventory_ids(api, bob, refresh="true") == generated
    bobs = check(api, bob, forceRefresh=True)
    assert (bobs["state"], bobs["reason"]["escrowDays"]) == (1, 0)

    ok(post(api, bob, USERS, {"platformId": PID, "tradeUrlState": 4}))

    assert check(api, bob)["state"] == 4
    assert check(api, alice)["state"] == 1
    assert check(api, alice, forceRefresh=True)["state"] == 1
    assert inventory_ids(api, alice, refresh="true") == ["9001"]


def test_a_fleet_status_is_seen_only_by_its_merchant(api, alice, bob, world):
    ok(post(api, bob, BOTS, {"status": "offline"}))

    assert inventory_ids(api, alice) == inventory_ids(api, alice, refresh="true")
    assert_error(inventory(api, bob), 503, 1010, "NO_BOTS_AVAILABLE")

    ok(post(api, alice, BOTS, {"status": "degraded"}))

    assert_error(inventory(api, alice), 503, 1011, "FLEET_DEGRADED")
    assert_error(inventory(api, bob), 503, 1010, "NO_BOTS_AVAILABLE")
    bots = ok(post(api, bob, BOTS, {"status": "online"}))["bots"]
    assert [bot["status"] for bot in bots] == ["online"]
    assert inventory_ids(api, bob)
