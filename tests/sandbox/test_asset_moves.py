"""The sandbox platform remembers what trades moved (issue 25, item 3): an asset whose deposit
completed leaves its seller's inventory, for every merchant when the seller is a generated user
(an asset exists once), and a withdrawal's item arrives in its recipient's inventory when the
offer is accepted; reversals undo them. It used to forget: a sold asset could be sold and
credited again and again."""

import pytest

from tests.factories import assert_error, platform_id, trade_url
from tests.sandbox.conftest import data
from tests.withdrawals.conftest import money, sandbox_event, wallet_clean

pytestmark = pytest.mark.django_db

SELLER = 41  # a generated platform user: every merchant's world shares it
RECIPIENT = 42


def inventory(desk, actor, partner: int) -> dict[str, dict]:
    answer = data(
        desk.get(
            "/secure/inventory",
            headers=actor.headers,
            params={"tradeUrl": trade_url(partner), "refresh": "true", "limit": "-1"},
        )
    )
    return {row["id"]: row for row in answer["inventory"]}


def an_accepted_item(desk, actor) -> dict:
    return next(row for row in inventory(desk, actor, SELLER).values() if row["offer"]["price"] > 0)


def a_standard_listing(desk, actor) -> dict:
    """A supplier's listing: bought, then delivered by the sandbox's ``purchased``."""
    page = data(desk.get("/secure/market", headers=actor.headers, params={"perPage": 100}))
    return next(row for row in page["items"] if row["offer"]["delivery"] == "standard")


def sell(desk, actor, row: dict):
    return desk.post(
        "/secure/sell",
        {
            "tradeUrl": trade_url(SELLER),
            "items": [{"itemId": row["id"], "price": row["offer"]["price"]}],
        },
        headers=actor.headers,
    )


def sold_and_completed(desk, actor, row: dict) -> dict:
    trade = data(sell(desk, actor, row))
    assert data(desk.get(f"/secure/trades/{trade['id']}", headers=actor.headers))["status"] == (
        "active"
    )
    data(sandbox_event(desk, actor, trade["id"], "accepted"))
    completed: dict = data(sandbox_event(desk, actor, trade["id"], "hold_ended"))
    assert completed["status"] == "completed"
    return completed


def test_a_sold_asset_leaves_its_seller_for_every_merchant(desk, alice, bob):
    row = an_accepted_item(desk, alice)
    assert row["id"] in inventory(desk, bob, SELLER)
    sold_and_completed(desk, alice, row)
    credited = money(alice)["available"]

    assert row["id"] not in inventory(desk, alice, SELLER)
    assert row["id"] not in inventory(desk, bob, SELLER)
    for actor in (alice, bob):
        error = assert_error(sell(desk, actor, row), 400, 9, "ITEMS_UNAVAILABLE")
        assert row["id"] in str(error)
    assert money(alice)["available"] == credited
    assert wallet_clean()


def test_a_reversed_sale_leaves_the_asset_with_its_owner(desk, alice):
    row = an_accepted_item(desk, alice)
    trade = data(sell(desk, alice, row))
    data(sandbox_event(desk, alice, trade["id"], "accepted"))
    data(sandbox_event(desk, alice, trade["id"], "reversed"))

    assert row["id"] in inventory(desk, alice, SELLER)
    assert data(sell(desk, alice, row))["status"] == "initiated"


def test_a_bought_item_arrives_in_its_recipients_inventory(desk, alice, bob):
    chosen = a_standard_listing(desk, alice)
    before = inventory(desk, alice, RECIPIENT)
    trade = data(
        desk.post(
            "/secure/buy",
            {
                "tradeUrl": trade_url(RECIPIENT),
                "items": [{"itemId": chosen["id"], "price": chosen["offer"]["price"]}],
            },
            headers=alice.headers,
        )
    )
    data(sandbox_event(desk, alice, trade["id"], "purchased"))
    data(sandbox_event(desk, alice, trade["id"], "accepted"))

    arrived = {k: v for k, v in inventory(desk, alice, RECIPIENT).items() if k not in before}
    assert [r["marketHashName"] for r in arrived.values()] == [chosen["marketHashName"]]
    assert [r["tradable"] for r in arrived.values()] == [False]  # its trade's hold is not over
    assert set(inventory(desk, bob, RECIPIENT)) == set(arrived) | set(before)

    data(sandbox_event(desk, alice, trade["id"], "hold_ended"))
    assert [
        r["tradable"] for r in inventory(desk, alice, RECIPIENT).values() if r["id"] in arrived
    ] == [True]


def test_a_reversed_withdrawal_takes_the_item_back(desk, alice):
    chosen = a_standard_listing(desk, alice)
    before = set(inventory(desk, alice, RECIPIENT))
    trade = data(
        desk.post(
            "/secure/buy",
            {
                "tradeUrl": trade_url(RECIPIENT),
                "items": [{"itemId": chosen["id"], "price": chosen["offer"]["price"]}],
            },
            headers=alice.headers,
        )
    )
    for event in ("purchased", "accepted", "reversed"):
        data(sandbox_event(desk, alice, trade["id"], event))
    assert set(inventory(desk, alice, RECIPIENT)) == before


def test_a_configured_users_moves_stay_in_its_merchants_world(desk, alice, bob):
    configured = [
        {"marketHashName": an_accepted_item(desk, alice)["marketHashName"], "assetId": "9100000001"}
    ]
    for actor in (alice, bob):
        data(
            desk.post(
                "/sandbox/platform/users",
                {"platformId": platform_id(SELLER), "inventory": configured},
                headers=actor.headers,
            )
        )
    row = inventory(desk, alice, SELLER)["730_9100000001"]
    sold_and_completed(desk, alice, row)

    assert inventory(desk, alice, SELLER) == {}
    assert list(inventory(desk, bob, SELLER)) == ["730_9100000001"]
