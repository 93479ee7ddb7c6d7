"""POST /sandbox/autopilot: a merchant stops the autopilot in its own world (its trades and chain
transactions wait for the ``/sandbox/`` helpers) while every other merchant's world keeps
moving; turning it on again, or a reset, lets it move them."""

from typing import Any

import pytest
from django.test import override_settings

from sandbox.services.autopilot import sandbox_autopilot_step
from sandbox.tasks import crypto_sandbox_autopilot
from tests.factories import assert_error, platform_id, trade_url
from tests.sandbox.conftest import data

pytestmark = pytest.mark.django_db

AUTOPILOT = "/sandbox/autopilot"
STEP_SECONDS = 5


def autopilot(desk, actor, enabled: Any):
    return desk.post(AUTOPILOT, {"enabled": enabled}, headers=actor.headers)


def buy(desk, actor) -> str:
    """A standard-delivery buy, approved and bought: pending at the supplier."""
    market = data(desk.get("/secure/market", headers=actor.headers, params={"perPage": 100}))
    listing = next(row for row in market["items"] if row["offer"]["delivery"] == "standard")
    line = {"itemId": listing["id"], "price": listing["offer"]["price"]}
    trade = data(
        desk.post("/secure/buy", {"tradeUrl": trade_url(1), "items": [line]}, headers=actor.headers)
    )
    return str(trade["id"])


def trade_status(desk, actor, trade_id: str) -> str:
    status: str = data(desk.get(f"/secure/trades/{trade_id}", headers=actor.headers))["status"]
    return status


def transfer(desk, actor) -> str:
    address = data(
        desk.get(
            "/secure/crypto/deposit-address",
            headers=actor.headers,
            params={"chain": "BSC", "platformId": platform_id(1)},
        )
    )["address"]
    sent = data(
        desk.post(
            "/sandbox/crypto/transfers",
            {"chain": "BSC", "token": "USDT", "address": address, "amount": "20"},
            headers=actor.headers,
        )
    )
    return str(sent["deposit"]["id"])


def deposit_status(desk, actor, deposit_id: str) -> str:
    rows = data(
        desk.get(
            "/secure/crypto/deposits", headers=actor.headers, params={"platformId": platform_id(1)}
        )
    )["deposits"]
    status: str = next(row["status"] for row in rows if row["id"] == deposit_id)
    return status


@override_settings(SANDBOX_AUTOPILOT_SECONDS=STEP_SECONDS)
def test_the_answer_says_whether_and_how_often_the_world_moves(desk, alice):
    assert data(autopilot(desk, alice, False)) == {"enabled": False, "stepSeconds": STEP_SECONDS}
    assert data(autopilot(desk, alice, True)) == {"enabled": True, "stepSeconds": STEP_SECONDS}


@override_settings(SANDBOX_AUTOPILOT_SECONDS=STEP_SECONDS)
@pytest.mark.parametrize("again", ["enabled", "reset"])
def test_a_stopped_world_keeps_its_trades_where_they_are(desk, alice, bob, clock_advance, again):
    data(autopilot(desk, alice, False))
    alices, bobs = buy(desk, alice), buy(desk, bob)
    assert trade_status(desk, alice, alices) == trade_status(desk, bob, bobs) == "pending"

    clock_advance(STEP_SECONDS + 1)
    desk.run(sandbox_autopilot_step)

    assert trade_status(desk, alice, alices) == "pending"
    assert trade_status(desk, bob, bobs) == "active"

    if again == "enabled":
        data(autopilot(desk, alice, True))
    else:
        data(desk.post("/sandbox/reset", headers=alice.headers))
    desk.run(sandbox_autopilot_step)

    assert trade_status(desk, alice, alices) == "active"


@override_settings(SANDBOX_AUTOPILOT_SECONDS=STEP_SECONDS)
def test_a_stopped_world_leaves_its_transfers_unconfirmed(desk, alice, bob, clock_advance):
    data(autopilot(desk, alice, False))
    alices, bobs = transfer(desk, alice), transfer(desk, bob)

    clock_advance(STEP_SECONDS + 1)
    assert desk.run(crypto_sandbox_autopilot.delay).get() == 1

    assert deposit_status(desk, alice, alices) == "pending"
    assert deposit_status(desk, bob, bobs) == "completed"

    data(autopilot(desk, alice, True))
    assert desk.run(crypto_sandbox_autopilot.delay).get() == 1
    assert deposit_status(desk, alice, alices) == "completed"


@override_settings(SANDBOX_AUTOPILOT_SECONDS=STEP_SECONDS)
def test_a_stopped_world_still_moves_by_hand(desk, alice, clock_advance):
    data(autopilot(desk, alice, False))
    trade_id = buy(desk, alice)

    moved = data(
        desk.post(
            f"/sandbox/trades/{trade_id}/events", {"event": "purchased"}, headers=alice.headers
        )
    )

    assert moved["status"] == "active"


@pytest.mark.parametrize("body", [{"enabled": "no"}, {}, {"enabled": None}])
def test_enabled_must_be_a_boolean(desk, alice, body):
    response = desk.post(AUTOPILOT, body, headers=alice.headers)

    error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
    assert list(error["fields"]) == ["enabled"]
