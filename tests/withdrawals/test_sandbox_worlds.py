"""A platform user one merchant configured in its sandbox world is the generated user for every
other merchant's withdrawals (decisions section 8)."""

from decimal import Decimal

import pytest

from tests.factories import assert_error, trade_url
from tests.withdrawals.conftest import make_listing, ok_data, set_platform_user

pytestmark = pytest.mark.django_db

PARTNER = 42


def buy(desk, actor, listing, price: str):
    body = {
        "tradeUrl": trade_url(PARTNER),
        "items": [{"itemId": listing.id, "price": Decimal(price)}],
    }
    return desk.post("/secure/buy", body, headers=actor.headers)


def test_a_recipient_banned_in_another_merchants_world_still_receives(
    desk, alice_funded, bob_funded, catalog_item
):
    listing = make_listing(catalog_item, "10.00")  # alice pays 10.50, bob 11.00

    set_platform_user(desk, bob_funded, PARTNER, tradeUrlState=4)

    assert_error(buy(desk, bob_funded, listing, "11.00"), 400, 13, "INVALID_TRADEURL")
    assert ok_data(buy(desk, alice_funded, listing, "10.50"))["status"] == "initiated"


def test_a_recipient_banned_in_this_merchants_world_is_refused_to_it_alone(
    desk, alice_funded, bob_funded, catalog_item
):
    first, second = make_listing(catalog_item, "10.00"), make_listing(catalog_item, "10.00")
    # Each merchant checks (and caches) the trade URL first.
    assert ok_data(buy(desk, alice_funded, first, "10.50"))["status"] == "initiated"

    set_platform_user(desk, alice_funded, PARTNER, tradeUrlState=4)

    assert_error(buy(desk, alice_funded, second, "10.50"), 400, 13, "INVALID_TRADEURL")
    assert ok_data(buy(desk, bob_funded, second, "11.00"))["status"] == "initiated"
