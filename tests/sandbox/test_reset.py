"""POST /sandbox/reset puts the calling merchant's sandbox world back as it starts: each setting
the ``/sandbox/`` helpers can change, seen through the API that it changes, while another
merchant that changed the same settings keeps them."""

import pytest

from sandbox.models import SandboxChain
from tests.factories import assert_error, auth_body, platform_id, trade_url
from tests.sandbox.conftest import data

pytestmark = pytest.mark.django_db

RESET = "/sandbox/reset"
CONFIGURED = 5  # the partner of a platform user the merchants configure


def reset(desk, actor) -> dict:
    answer: dict = data(desk.post(RESET, headers=actor.headers))
    return answer


def helper(desk, actor, path: str, body: dict) -> None:
    data(desk.post(path, body, headers=actor.headers))


def inventory(desk, actor, partner: int):
    return desk.get(
        "/secure/inventory", headers=actor.headers, params={"tradeUrl": trade_url(partner)}
    )


def verification_start(desk, actor):
    token = data(desk.post("/auth/authenticate-client", auth_body(3), headers=actor.headers))
    return desk.post(
        "/client/verification/start",
        {"email": "ann@example.com"},
        headers={"Authorization": f"Bearer {token['token']}"},
    )


def eth_address_status(desk, actor) -> str:
    response = desk.get(
        "/secure/crypto/deposit-address",
        headers=actor.headers,
        params={"chain": "ETH", "platformId": platform_id(3)},
    )
    status: str = data(response)["status"]
    return status


def test_the_answer_is_the_world_as_it_starts(desk, alice):
    helper(desk, alice, "/sandbox/platform/users", {"platformId": platform_id(CONFIGURED)})
    helper(desk, alice, "/sandbox/platform/users", {"platformId": platform_id(6)})
    helper(desk, alice, "/sandbox/bots", {"status": "offline"})
    helper(desk, alice, "/sandbox/autopilot", {"enabled": False})

    assert reset(desk, alice) == {
        "platformUsersForgotten": 2,
        "bots": "online",
        "identityProvider": "online",
        "chains": [
            {"chain": chain, "paused": False, "failBroadcasts": False}
            for chain in ("ETH", "BSC", "SOL")
        ],
        "autopilot": {"enabled": True, "stepSeconds": 0},
    }
    assert reset(desk, alice)["platformUsersForgotten"] == 0


def test_a_configured_platform_user_is_the_generated_one_again(desk, alice, bob):
    for actor in (alice, bob):
        helper(
            desk,
            actor,
            "/sandbox/platform/users",
            {"platformId": platform_id(CONFIGURED), "inventoryPrivate": True},
        )
        assert_error(inventory(desk, actor, CONFIGURED), 400, 30, "INVENTORY_PRIVATE")

    reset(desk, alice)

    assert data(inventory(desk, alice, CONFIGURED))["inventory"]
    assert_error(inventory(desk, bob, CONFIGURED), 400, 30, "INVENTORY_PRIVATE")


@pytest.mark.parametrize(
    ("status", "code", "key"),
    [("degraded", 1011, "FLEET_DEGRADED"), ("offline", 1010, "NO_BOTS_AVAILABLE")],
)
def test_the_bots_are_online_again(desk, alice, bob, status, code, key):
    for actor in (alice, bob):
        helper(desk, actor, "/sandbox/bots", {"status": status})
        assert_error(inventory(desk, actor, 7), 503, code, key)

    reset(desk, alice)

    assert data(inventory(desk, alice, 7))["inventory"]
    assert_error(inventory(desk, bob, 7), 503, code, key)


def test_the_identity_provider_is_online_again(desk, alice, bob):
    for actor in (alice, bob):
        helper(desk, actor, "/sandbox/verification-provider", {"status": "offline"})
        assert_error(verification_start(desk, actor), 503, 3008, "VERIFICATION_NOT_AVAILABLE")

    reset(desk, alice)

    assert data(verification_start(desk, alice))["dossierId"]
    assert_error(verification_start(desk, bob), 503, 3008, "VERIFICATION_NOT_AVAILABLE")


def test_the_chains_run_and_accept_broadcasts_again(desk, alice, bob):
    for actor in (alice, bob):
        helper(desk, actor, "/sandbox/crypto/chains/ETH", {"paused": True, "failBroadcasts": True})
        assert eth_address_status(desk, actor) == "paused"

    reset(desk, alice)

    assert eth_address_status(desk, alice) == "active"
    assert eth_address_status(desk, bob) == "paused"
    assert list(SandboxChain.objects.values_list("merchant_id", "paused", "fail_broadcasts")) == [
        (bob.merchant.pk, True, True)
    ]


def test_what_happened_stays_and_the_clock_does_not_go_back(desk, alice):
    helper(desk, alice, "/sandbox/clock/advance", {"minutes": 60})
    address = data(
        desk.get(
            "/secure/crypto/deposit-address",
            headers=alice.headers,
            params={"chain": "ETH", "platformId": platform_id(3)},
        )
    )["address"]
    sent = data(
        desk.post(
            "/sandbox/crypto/transfers",
            {
                "chain": "ETH",
                "token": "USDC",
                "address": address,
                "amount": "30",
                "confirmations": 12,
            },
            headers=alice.headers,
        )
    )

    reset(desk, alice)

    clock = data(desk.get("/sandbox/clock", headers=alice.headers))
    assert clock["offsetSeconds"] == 3600
    deposits = data(
        desk.get(
            "/secure/crypto/deposits", headers=alice.headers, params={"platformId": platform_id(3)}
        )
    )["deposits"]
    assert [(row["id"], row["status"]) for row in deposits] == [
        (sent["deposit"]["id"], "completed")
    ]


def test_reset_needs_a_merchants_key(desk, alice):
    assert_error(desk.post(RESET, headers={}), 401, 1100, "UNAUTHORIZED")
