"""Deposits belong to one merchant and one client: another merchant's key or another client's
token finds nothing and changes nothing. Deposits appear in the trade history."""

import pytest

from tests.deposits.conftest import OTHER, OWNER, ak_item, authenticate, deposit, sell
from tests.factories import assert_error
from tests.withdrawals.conftest import ok_data, sandbox_event
from trading.models import Trade, TradeEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def alices_deposits(desk, alice, owner) -> dict[str, str]:
    return {
        "client": ok_data(deposit(desk, owner, ak_item(0), externalId="client-dep"))["id"],
        "self": ok_data(sell(desk, alice, ak_item(1), externalId="self-dep"))["id"],
    }


def _unchanged(trade_id: str, before: int) -> None:
    assert TradeEvent.objects.filter(trade_id=trade_id).count() == before
    assert Trade.objects.get(pk=trade_id).status == "active"


@pytest.mark.parametrize("kind", ["client", "self"])
@pytest.mark.parametrize("ref", ["id", "externalId"])
def test_another_merchant_cannot_see_or_move_a_deposit(desk, bob, alices_deposits, kind, ref):
    trade_id = alices_deposits[kind]
    trade_ref = trade_id if ref == "id" else f"{kind}-dep"
    before = TradeEvent.objects.filter(trade_id=trade_id).count()

    assert_error(
        desk.get(f"/secure/trades/{trade_ref}", headers=bob.headers), 404, 21, "TRADE_NOT_FOUND"
    )
    assert_error(sandbox_event(desk, bob, trade_ref, "accepted"), 404, 21, "TRADE_NOT_FOUND")
    assert (
        ok_data(desk.get("/secure/trades", headers=bob.headers, params={"type": "deposit"}))[
            "items"
        ]
        == []
    )
    _unchanged(trade_id, before)


def test_another_client_cannot_see_a_deposit(desk, api, alice, alices_deposits):
    other = authenticate(api, alice, OTHER)
    bobs_view = desk.get(f"/client/trades/{alices_deposits['client']}", headers=other)

    assert_error(bobs_view, 404, 21, "TRADE_NOT_FOUND")
    assert (
        ok_data(desk.get("/client/trades", headers=other, params={"type": "deposit"}))["items"]
        == []
    )


def test_another_merchants_client_with_the_same_platform_id_sees_nothing(
    desk, api, bob, alices_deposits
):
    bobs_owner = authenticate(api, bob, OWNER)

    assert_error(
        desk.get(f"/client/trades/{alices_deposits['client']}", headers=bobs_owner),
        404,
        21,
        "TRADE_NOT_FOUND",
    )
    assert ok_data(desk.get("/client/trades", headers=bobs_owner))["items"] == []


def test_another_merchants_deposits_leave_this_one_the_free_items(desk, api, bob, alices_deposits):
    bobs_owner = authenticate(api, bob, OWNER)

    # The assets alice's deposits hold are busy for everyone (tests/deposits/test_assets.py);
    # the user's other items are bob's to take, under bob's own guard.
    assert ok_data(deposit(desk, bobs_owner, ak_item(2), price="32.00"))["status"] == "initiated"


def test_deposits_are_in_the_trade_history(desk, alice, owner, alices_deposits):
    client_items = ok_data(desk.get("/client/trades", headers=owner, params={"type": "deposit"}))[
        "items"
    ]
    assert [t["id"] for t in client_items] == [alices_deposits["client"]]
    assert (
        ok_data(desk.get("/client/trades", headers=owner, params={"type": "withdraw"}))["items"]
        == []
    )

    secure = ok_data(desk.get("/secure/trades", headers=alice.headers, params={"type": "deposit"}))
    assert [t["id"] for t in secure["items"]] == [alices_deposits["self"]]
    single = ok_data(desk.get("/secure/trades/self-dep", headers=alice.headers))
    assert single["type"] == "deposit"
    assert single["source"] == "self"
