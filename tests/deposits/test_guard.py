"""The per-client guard: at most 5 active deposits and 10 per rolling 5 minutes per merchant and
platform id, checked before anything is fetched and again under a lock, so racing requests
cannot pass it together. Self sells skip it."""

import threading
from decimal import Decimal

import pytest
from django.db import connection
from rest_framework.test import APIClient

from tests.deposits.conftest import (
    OTHER,
    OWNER,
    ak_item,
    authenticate,
    configure_owner,
    deposit,
    sell,
)
from tests.factories import assert_error, platform_id
from tests.withdrawals.conftest import ok_data, sandbox_event
from trading.models import Status, Trade

pytestmark = pytest.mark.django_db


def _fill(desk, headers, count: int, first: int = 0) -> list[str]:
    return [ok_data(deposit(desk, headers, ak_item(n)))["id"] for n in range(first, first + count)]


def test_a_sixth_active_deposit_is_refused(desk, owner):
    _fill(desk, owner, 5)

    assert_error(deposit(desk, owner, ak_item(5)), 429, 6, "TOO_MANY_ACTIVE_TRADES")
    assert Trade.objects.count() == 5


def test_an_accepted_deposit_frees_its_slot(desk, alice, owner):
    first, *_ = _fill(desk, owner, 5)
    ok_data(sandbox_event(desk, alice, first, "accepted"))

    assert ok_data(deposit(desk, owner, ak_item(5)))["status"] == "initiated"


def test_the_guard_runs_before_the_inventory_is_fetched(desk, owner):
    _fill(desk, owner, 5)
    configure_owner(fault="unavailable")

    assert_error(deposit(desk, owner, ak_item(5)), 429, 6, "TOO_MANY_ACTIVE_TRADES")


def _ten_ended(desk, alice, owner) -> None:
    for first in (0, 5):
        for trade_id in _fill(desk, owner, 5, first):
            ok_data(sandbox_event(desk, alice, trade_id, "declined"))
    # 5 + 5 = 10 deposits in the window, none active.
    assert Trade.objects.filter(status=Status.DECLINED).count() == 10


def test_eleventh_deposit_in_five_minutes_is_rate_limited(desk, alice, owner, time_passes):
    _ten_ended(desk, alice, owner)

    response = deposit(desk, owner, ak_item(20))
    assert_error(response, 429, 1005, "RATE_LIMITED")
    assert 0 < int(response["Retry-After"]) <= 300

    time_passes(int(response["Retry-After"]))
    assert ok_data(deposit(desk, owner, ak_item(20)))["status"] == "initiated"


def test_another_merchant_moving_the_sandbox_clock_never_reopens_the_window(
    desk, alice, bob, owner, real_clock_advance
):
    """Issue 39: the window is 5 minutes of real time. Bob moves the shared sandbox clock a day
    on; alice's user, with 10 deposits in the last real minutes, is still refused until the
    oldest of them is 5 real minutes old."""
    _ten_ended(desk, alice, owner)

    ok_data(desk.post("/sandbox/clock/advance", {"minutes": 1441}, headers=bob.headers))
    response = deposit(desk, owner, ak_item(20))
    assert_error(response, 429, 1005, "RATE_LIMITED")
    assert 240 <= int(response["Retry-After"]) <= 300  # the 10 took seconds, not minutes
    assert Trade.objects.count() == 10

    real_clock_advance(300)
    assert ok_data(deposit(desk, owner, ak_item(20)))["status"] == "initiated"


def test_the_guard_is_per_platform_id_and_per_merchant(desk, api, alice, bob, owner):
    _fill(desk, owner, 5)

    other = authenticate(api, alice, OTHER)
    assert ok_data(deposit(desk, other, "730_7000000000"))["status"] == "initiated"
    bobs_owner = authenticate(api, bob, OWNER)
    assert ok_data(deposit(desk, bobs_owner, ak_item(10), price="32.00"))["status"] == "initiated"


def test_self_sells_skip_the_guard(desk, alice, owner):
    _fill(desk, owner, 5)

    for n in range(5, 8):
        assert ok_data(sell(desk, alice, ak_item(n)))["source"] == "self"


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_deposits_leave_at_most_five_active(alice, world):
    headers = authenticate(APIClient(), alice, OWNER)
    barrier = threading.Barrier(20)
    statuses: list[tuple[int, str]] = []

    def attempt(n: int) -> None:
        client = APIClient()
        try:
            barrier.wait()
            response = client.post(
                "/client/trading/deposit",
                {"items": [{"itemId": ak_item(n), "price": 36}]},
                format="json",
                headers=headers,
            )
            key = "" if response.status_code == 200 else response.json()["error"]["key"]
            statuses.append((response.status_code, key))
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(statuses).count((200, "")) == 5
    assert sorted(statuses).count((429, "TOO_MANY_ACTIVE_TRADES")) == 15
    active = Trade.objects.filter(
        client_platform_id=platform_id(OWNER),
        status__in=(Status.INITIATED, Status.PENDING, Status.ACTIVE),
    )
    assert active.count() == 5


@pytest.mark.django_db(transaction=True)
def test_concurrent_deposits_with_one_external_id_store_one(alice, world):
    headers = authenticate(APIClient(), alice, OWNER)
    other = authenticate(APIClient(), alice, OTHER)
    barrier = threading.Barrier(2)
    results: list[int] = []

    def attempt(token: dict[str, str], item_id: str) -> None:
        try:
            barrier.wait()
            response = APIClient().post(
                "/client/trading/deposit",
                {"items": [{"itemId": item_id, "price": Decimal(36)}], "externalId": "race"},
                format="json",
                headers=token,
            )
            results.append(response.json().get("error", {}).get("code", 0))
        finally:
            connection.close()

    threads = [
        threading.Thread(target=attempt, args=(headers, ak_item(0))),
        threading.Thread(target=attempt, args=(other, "730_7000000000")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(results) == [0, 1]
    assert Trade.objects.filter(external_id="race").count() == 1
