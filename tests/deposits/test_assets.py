"""One rule for a busy asset: a platform asset (each unit of a stack) is in at most one live
deposit (created and not ended, its hold included) of any merchant, client deposit or self
sell alike; a second gets 19 DEPOSIT_IN_PROGRESS. The database refuses it too."""

import threading
from decimal import Decimal

import pytest
from django.db import connection
from rest_framework.test import APIClient

from sandbox.models import SandboxPlatformUser
from tests.deposits.conftest import OWNER, ak_item, authenticate, configure_owner, deposit, sell
from tests.factories import assert_error, platform_id, trade_url
from tests.withdrawals.conftest import ok_data, sandbox_event, wallet_clean
from trading.models import IN_FLIGHT, Trade, TradeItem

pytestmark = pytest.mark.django_db

DOOR_STACK = "252490_6000000001"  # 40 units in the owner's inventory (conftest)
DOOR = "252490_6000000002"  # a single door


def in_progress(response, *item_ids: str) -> None:
    error = assert_error(response, 409, 19, "DEPOSIT_IN_PROGRESS")
    assert error["details"] == {"items": list(item_ids)}


def sell_door(desk, actor, item_id: str):
    return sell(desk, actor, item_id, price="1.80", game="252490")


def stack_of(units: int) -> None:
    """The owner's door stack holds ``units`` now, in every merchant's world."""
    inventory = SandboxPlatformUser.objects.filter(platform_id=platform_id(OWNER)).first().inventory
    configure_owner(
        inventory=[
            {**asset, "amount": units}
            if asset.get("assetId") == DOOR_STACK.split("_")[1]
            else asset
            for asset in inventory
        ]
    )


def test_an_asset_in_its_hold_is_still_busy(desk, alice, owner):
    first = ok_data(sell(desk, alice, ak_item(0)))["id"]
    assert ok_data(sandbox_event(desk, alice, first, "accepted"))["status"] == "hold"

    in_progress(deposit(desk, owner, ak_item(0)), ak_item(0))
    in_progress(sell(desk, alice, ak_item(0)), ak_item(0))
    assert Trade.objects.count() == 1

    # Once the deposit completed, the asset is the bot's: the owner cannot give it again.
    ok_data(sandbox_event(desk, alice, first, "hold_ended"))
    assert_error(sell(desk, alice, ak_item(0)), 400, 9, "ITEMS_UNAVAILABLE")
    assert Trade.objects.count() == 1
    assert wallet_clean()


def test_a_client_deposit_and_a_self_sell_share_the_rule(desk, alice, owner):
    ok_data(deposit(desk, owner, ak_item(0)))

    in_progress(sell(desk, alice, ak_item(1), ak_item(0)), ak_item(0))
    ok_data(sell(desk, alice, ak_item(1)))
    in_progress(deposit(desk, owner, ak_item(1)), ak_item(1))


def test_an_ended_deposit_frees_its_asset(desk, alice, owner):
    first = ok_data(deposit(desk, owner, ak_item(0)))["id"]
    ok_data(sandbox_event(desk, alice, first, "declined"))

    assert ok_data(deposit(desk, owner, ak_item(0)))["status"] == "initiated"


def test_an_asset_in_another_merchants_deposit_is_busy(desk, api, alice, bob, owner):
    ok_data(deposit(desk, owner, ak_item(0)))
    bobs_owner = authenticate(api, bob, OWNER)

    response = deposit(desk, bobs_owner, ak_item(0), price="32.00")
    in_progress(response, ak_item(0))
    # Busy is all bob learns: nothing names alice or her trade.
    assert str(alice.merchant.pk) not in response.content.decode()
    assert alice.merchant.name not in response.content.decode()
    in_progress(sell(desk, bob, ak_item(0), price="32.00"), ak_item(0))
    assert ok_data(deposit(desk, bobs_owner, ak_item(1), price="32.00"))["status"] == "initiated"


def test_each_unit_of_a_stack_is_taken_once(desk, alice, owner):
    stack_of(3)
    trades = [ok_data(sell_door(desk, alice, DOOR_STACK))["id"] for _ in range(3)]
    units = TradeItem.objects.filter(trade_id__in=trades).values_list("asset_unit", flat=True)
    assert sorted(units) == [0, 1, 2]

    in_progress(sell_door(desk, alice, DOOR_STACK), DOOR_STACK)
    ok_data(sandbox_event(desk, alice, trades[1], "accepted"))
    in_progress(sell_door(desk, alice, DOOR_STACK), DOOR_STACK)  # a unit in its hold

    # A unit whose deposit ended is free again, whichever it was.
    ok_data(sandbox_event(desk, alice, trades[2], "declined"))
    again = ok_data(sell_door(desk, alice, DOOR_STACK))["id"]
    assert TradeItem.objects.get(trade_id=again).asset_unit == 2


def test_a_completed_deposit_takes_its_units_out_of_the_stack(desk, alice, owner):
    stack_of(3)
    trade = ok_data(sell_door(desk, alice, DOOR_STACK))["id"]
    ok_data(sandbox_event(desk, alice, trade, "accepted"))
    ok_data(sandbox_event(desk, alice, trade, "hold_ended"))

    inventory = ok_data(
        desk.get(
            "/secure/inventory",
            headers=alice.headers,
            params={"tradeUrl": trade_url(OWNER), "game": "252490", "refresh": "true"},
        )
    )["inventory"]
    assert [row["amount"] for row in inventory if row["id"] == DOOR_STACK] == [2]


def test_a_single_item_of_the_second_game_is_one_unit(desk, alice, owner):
    ok_data(sell_door(desk, alice, DOOR))

    in_progress(sell_door(desk, alice, DOOR), DOOR)


def test_the_database_refuses_a_unit_the_lock_let_through(desk, alice, owner, monkeypatch):
    """Should a path ever skip the lock, the partial unique index answers 19 all the same."""
    ok_data(sell(desk, alice, ak_item(0)))
    monkeypatch.setattr(
        "trading.deposits.services.store.deposit_free_units",
        lambda *, platform_id, held: dict.fromkeys(held, 0),
    )

    in_progress(sell(desk, alice, ak_item(0)), ak_item(0))
    assert Trade.objects.count() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["self sells", "client deposits of two merchants"])
def test_twenty_concurrent_deposits_of_one_asset_store_one(alice, bob, world, kind):
    """The race that sold one asset six times: now exactly one deposit takes it."""
    tokens = [authenticate(APIClient(), actor, OWNER) for actor in (alice, bob)]
    barrier = threading.Barrier(20)
    answers: list[tuple[int, int]] = []

    def attempt(n: int) -> None:
        try:
            if kind == "self sells":
                path, headers = "/secure/sell", alice.headers
                body: dict[str, object] = {"tradeUrl": trade_url(OWNER)}
                price = Decimal(36)
            else:
                path, headers = "/client/trading/deposit", tokens[n % 2]
                body, price = {}, Decimal(36 if n % 2 == 0 else 32)
            body["items"] = [{"itemId": ak_item(0), "price": price}]
            barrier.wait()
            response = APIClient().post(path, body, format="json", headers=headers)
            code = response.json().get("error", {}).get("code", 0)
            answers.append((response.status_code, code))
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(answers) == [(200, 0)] + [(409, 19)] * 19
    live = TradeItem.objects.filter(public_id=ak_item(0), status__in=IN_FLIGHT)
    assert live.count() == 1
    assert wallet_clean()
