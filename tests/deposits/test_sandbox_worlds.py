"""Each merchant drives its own sandbox world (decisions section 8): bob's helper calls never
change what alice's deposits see, and alice's never change bob's."""

from decimal import Decimal

import pytest

from tests.deposits.conftest import OWNER, ak_item, authenticate, deposit, fleet, trade_of
from tests.factories import assert_error, platform_id
from tests.withdrawals.conftest import ok_data, sandbox_event

pytestmark = pytest.mark.django_db


def set_owner(desk, actor, **fields: object) -> None:
    response = desk.post(
        "/sandbox/platform/users",
        {"platformId": platform_id(OWNER), **fields},
        headers=actor.headers,
    )
    assert ok_data(response)["configured"] is True


def created_without_worker(api, headers: dict[str, str], price: str, item: int = 0) -> str:
    """A deposit whose offer task has not run yet (its on-commit work is not executed)."""
    response = api.post(
        "/client/trading/deposit",
        {"items": [{"itemId": ak_item(item), "price": Decimal(price)}]},
        format="json",
        headers=headers,
    )
    return str(ok_data(response)["id"])


@pytest.mark.parametrize(
    ("status", "code", "key"),
    [("offline", 1010, "NO_BOTS_AVAILABLE"), ("degraded", 1011, "FLEET_DEGRADED")],
)
def test_another_merchants_fleet_leaves_deposits_running(
    desk, api, alice, bob, owner, status, code, key
):
    bobs_owner = authenticate(api, bob, OWNER)

    fleet(api, bob, status)

    assert ok_data(desk.get("/client/inventory", headers=owner))["count"] > 0
    created = ok_data(deposit(desk, owner, ak_item(0)))
    assert trade_of(desk, owner, created["id"])["status"] == "active"  # alice's bot sent it
    assert_error(deposit(desk, bobs_owner, ak_item(0), price="32.00"), 503, code, key)


def test_another_merchants_bots_do_not_confirm_this_merchants_offers(desk, api, alice, bob, owner):
    trade_id = created_without_worker(api, owner, "36.00")
    ok_data(sandbox_event(desk, alice, trade_id, "offer_created"))

    fleet(api, bob, "offline")

    assert ok_data(sandbox_event(desk, alice, trade_id, "offer_sent"))["status"] == "active"


def test_a_platform_user_configured_by_another_merchant_is_not_seen(desk, api, alice, bob, owner):
    bobs_owner = authenticate(api, bob, OWNER)

    set_owner(desk, bob, escrowDays=3, inventory=[])

    created = ok_data(deposit(desk, owner, ak_item(0)))
    assert trade_of(desk, owner, created["id"])["status"] == "active"
    response = deposit(desk, bobs_owner, ak_item(1), price="32.00")
    assert_error(response, 400, 29, "ESCROW_NOT_ALLOWED")


def test_the_bots_offer_asks_the_depositing_merchants_world(desk, api, alice, bob, owner):
    """Alice's escrow refuses the offer of alice's deposit, not bob's deposit from the same user
    (another unit of the same item: one asset is never in two live deposits)."""
    bobs_owner = authenticate(api, bob, OWNER)
    alices = created_without_worker(api, owner, "36.00")
    bobs = created_without_worker(api, bobs_owner, "32.00", item=1)

    set_owner(desk, alice, escrowDays=3)
    for actor, trade_id in ((alice, alices), (bob, bobs)):
        ok_data(sandbox_event(desk, actor, trade_id, "offer_created"))

    failed = trade_of(desk, owner, alices)
    assert (failed["status"], failed["error"]) == ("failed", "USER_ESCROW")
    assert trade_of(desk, bobs_owner, bobs)["status"] == "pending"
