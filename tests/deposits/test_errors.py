"""Every refusal of the two deposit routes, provoked through the HTTP API. A refused deposit
stores nothing."""

from decimal import Decimal

import pytest

from merchants.callers import callers_changed
from merchants.models import Merchant
from sandbox.models import SandboxListing
from tests.deposits.conftest import (
    OWNER,
    ak_item,
    authenticate,
    configure_owner,
    deposit,
    fleet,
    sell,
)
from tests.factories import assert_error
from tests.withdrawals.conftest import ok_data
from trading.models import GameSettings, Trade

pytestmark = pytest.mark.django_db


def nothing_stored() -> bool:
    return not Trade.objects.exists()


def test_missing_items(desk, owner):
    assert_error(deposit(desk, owner), 400, 2, "MISSING_ITEMS")
    assert nothing_stored()


def test_too_many_items(desk, owner):
    items = [f"730_{9000000000 + n}" for n in range(251)]
    assert_error(deposit(desk, owner, *items), 400, 8, "TOO_MANY_ITEMS")


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"itemId": "730_", "price": Decimal(1)}, "items.0.itemId"),
        ({"itemId": "x" * 257, "price": Decimal(1)}, "items.0.itemId"),
        ({"itemId": ak_item(0), "price": Decimal(1), "amount": 10_001}, "items.0.amount"),
        ({"itemId": ak_item(0), "price": Decimal(1), "amount": 0}, "items.0.amount"),
        ({"itemId": ak_item(0), "price": Decimal(-1)}, "items.0.price"),
        ({"itemId": ak_item(0), "price": "36.00"}, "items.0.price"),
        ({"itemId": ak_item(0), "price": Decimal(1), "colour": "red"}, "items.0.colour"),
    ],
)
def test_bad_items_are_validation_failures(desk, owner, item, field):
    response = desk.post("/client/trading/deposit", {"items": [item]}, headers=owner)
    error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
    assert field in error["fields"]


def test_external_id_too_long_and_is_instant_must_be_boolean(desk, owner):
    response = deposit(desk, owner, ak_item(0), externalId="x" * 129, isInstant="yes")
    error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
    assert set(error["fields"]) == {"externalId", "isInstant"}


def test_same_item_twice_in_one_deposit_is_more_units_than_one_entry_may_ask(desk, owner):
    item_id = ak_item(0)
    error = assert_error(deposit(desk, owner, item_id, item_id), 400, 18, "EXCEEDS_MAX_AMOUNT")

    assert error["details"] == {"itemId": item_id}
    assert nothing_stored()


def test_items_unavailable_names_the_missing_items(desk, owner):
    error = assert_error(
        deposit(desk, owner, ak_item(0), "730_1234567890"), 400, 9, "ITEMS_UNAVAILABLE"
    )
    assert error["details"] == {"items": ["730_1234567890"]}
    assert nothing_stored()


@pytest.mark.parametrize(
    "item_id",
    ["730_5000000001", "730_3000000001", "730_4000000001"],
    ids=["untradable", "below floor", "unknown"],
)
def test_items_not_accepted(desk, owner, item_id):
    error = assert_error(deposit(desk, owner, item_id, price="0"), 400, 10, "ITEMS_NOT_ACCEPTED")
    assert error["details"] == {"items": [item_id]}


def test_item_overstocked_when_stock_is_full(desk, owner, knife, bot):
    SandboxListing.objects.create(
        id="00000000-0000-4000-8000-000000000001",
        item=knife,
        game=730,
        market_hash_name=knife.market_hash_name,
        price=Decimal("480.00"),
        delivery="instant",
        bot=bot,
    )
    error = assert_error(
        deposit(desk, owner, "730_2000000001", price="0"), 409, 45, "ITEM_OVERSTOCKED"
    )
    assert error["details"] == {"items": ["730_2000000001"]}


def test_item_overstocked_when_one_deposit_would_overflow_the_stock(desk, owner):
    response = deposit(desk, owner, "730_2000000001", "730_2000000002", price="450.00")
    error = assert_error(response, 409, 45, "ITEM_OVERSTOCKED")
    assert error["details"] == {"items": ["730_2000000002"]}


def test_price_changed_gives_the_current_offer(desk, owner):
    error = assert_error(deposit(desk, owner, ak_item(0), price="36.01"), 400, 11, "PRICE_CHANGED")
    assert error["details"] == {"itemId": ak_item(0), "price": 36.0}


def test_insufficient_item_amount(desk, owner):
    response = desk.post(
        "/client/trading/deposit",
        {
            "game": "252490",
            "items": [{"itemId": "252490_6000000002", "price": Decimal("1.80"), "amount": 2}],
        },
        headers=owner,
    )
    assert_error(response, 400, 17, "INSUFFICIENT_ITEM_AMOUNT")


def test_exceeds_max_amount_for_a_stack(desk, owner):
    response = desk.post(
        "/client/trading/deposit",
        {
            "game": "252490",
            "items": [{"itemId": "252490_6000000001", "price": Decimal("1.80"), "amount": 2}],
        },
        headers=owner,
    )
    assert_error(response, 400, 18, "EXCEEDS_MAX_AMOUNT")


def test_deposit_in_progress_for_an_item_already_offered(desk, owner):
    ok_data(deposit(desk, owner, ak_item(0)))

    error = assert_error(
        deposit(desk, owner, ak_item(1), ak_item(0)), 409, 19, "DEPOSIT_IN_PROGRESS"
    )
    assert error["details"] == {"items": [ak_item(0)]}
    assert Trade.objects.count() == 1


def test_user_not_tradeable_with_an_anti_cheat_ban_carries_the_bans(desk, owner):
    configure_owner(anti_cheat_banned=True, game_bans=2)

    error = assert_error(deposit(desk, owner, ak_item(0)), 400, 7, "USER_NOT_TRADEABLE")
    assert error["details"] == {"antiCheatBanned": True, "gameBans": 2, "economyBan": "none"}


def test_anti_cheat_ban_does_not_block_the_second_game(desk, owner):
    configure_owner(anti_cheat_banned=True)

    response = deposit(desk, owner, "252490_6000000002", price="1.80", game="252490")
    assert ok_data(response)["status"] == "initiated"


def test_user_not_tradeable_when_trade_banned(desk, owner):
    configure_owner(economy_ban="banned")

    error = assert_error(deposit(desk, owner, ak_item(0)), 400, 7, "USER_NOT_TRADEABLE")
    assert error["details"]["economyBan"] == "banned"


def test_inventory_private(desk, owner):
    configure_owner(inventory_private=True)
    assert_error(deposit(desk, owner, ak_item(0)), 400, 30, "INVENTORY_PRIVATE")


def test_escrow_not_allowed(desk, owner):
    configure_owner(escrow_days=7)
    assert_error(deposit(desk, owner, ak_item(0)), 400, 29, "ESCROW_NOT_ALLOWED")


def test_user_not_found(desk, owner):
    configure_owner(trade_url_state=7)
    assert_error(deposit(desk, owner, ak_item(0)), 404, 1310, "USER_NOT_FOUND")


@pytest.mark.parametrize(
    ("fault", "status", "code", "key"),
    [
        ("unavailable", 424, 31, "PLATFORM_UNAVAILABLE"),
        ("rate_limited", 424, 33, "PLATFORM_RATE_LIMITED"),
        ("error", 424, 3, "INVENTORY_FETCH_FAILED"),
    ],
)
def test_platform_failures(desk, owner, fault, status, code, key):
    configure_owner(fault=fault)
    assert_error(deposit(desk, owner, ak_item(0)), status, code, key)
    assert nothing_stored()


def test_instant_deposits_disabled(desk, api, bob, world):
    headers = authenticate(api, bob, OWNER)
    response = deposit(desk, headers, ak_item(0), price="32.00", isInstant=True)
    assert_error(response, 400, 1622, "INSTANT_DEPOSITS_DISABLED")


def test_deposits_paused(desk, owner):
    GameSettings.objects.update_or_create(game=730, defaults={"deposits_paused": True})
    assert_error(deposit(desk, owner, ak_item(0)), 503, 1014, "DEPOSITS_PAUSED")


def test_no_bots_available(desk, api, alice, owner):
    fleet(api, alice, "offline")
    assert_error(deposit(desk, owner, ak_item(0)), 503, 1010, "NO_BOTS_AVAILABLE")


def test_fleet_degraded(desk, api, alice, owner):
    fleet(api, alice, "degraded")
    response = deposit(desk, owner, ak_item(0))
    assert_error(response, 503, 1011, "FLEET_DEGRADED")
    assert response["Retry-After"] == "30"


def test_external_id_exists_even_after_the_first_trade_failed(desk, alice, owner):
    first = ok_data(deposit(desk, owner, ak_item(0), externalId="same"))
    ok_data(
        desk.post(
            f"/sandbox/trades/{first['id']}/events", {"event": "failed"}, headers=alice.headers
        )
    )

    assert_error(deposit(desk, owner, ak_item(1), externalId="same"), 409, 1, "EXTERNAL_ID_EXISTS")


def test_sell_refuses_a_malformed_trade_url(desk, alice, world):
    response = desk.post(
        "/secure/sell",
        {
            "tradeUrl": "https://example.com/x",
            "items": [{"itemId": ak_item(0), "price": Decimal(36)}],
        },
        headers=alice.headers,
    )
    assert_error(response, 400, 13, "INVALID_TRADEURL")


def test_sell_refuses_a_trade_url_the_platform_rejects(desk, alice, world):
    configure_owner(trade_url_state=6)
    assert_error(sell(desk, alice, ak_item(0)), 400, 13, "INVALID_TRADEURL")


def test_sell_is_limited_by_the_merchant_throttle(desk, alice, world):
    from django.urls import resolve

    Merchant.objects.filter(pk=alice.merchant.pk).update(is_verified=False)
    callers_changed()  # as the admin's change does
    limit = resolve("/secure/sell").func.view_class.rate_limit.rate(verified=False).limit
    for _ in range(limit):
        assert_error(sell(desk, alice, ak_item(0), price="1.00"), 400, 11, "PRICE_CHANGED")

    response = sell(desk, alice, ak_item(0))
    assert_error(response, 429, 1005, "RATE_LIMITED")
    assert int(response["Retry-After"]) > 0
