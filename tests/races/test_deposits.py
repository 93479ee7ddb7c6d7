"""Deposits racing for one platform asset: 30 sells or client deposits of one item at once,
from one merchant or two, store exactly one deposit (the rest get 19 DEPOSIT_IN_PROGRESS);
each unit of a stack goes once; the owner's acceptance, sent 30 times at once, credits once."""

from decimal import Decimal

import pytest

from tests.deposits.conftest import OWNER, ak_item, configure_users
from tests.deposits.test_assets import DOOR_STACK, stack_of
from tests.factories import Actor, trade_url
from tests.faults.callback import CallbackServer
from tests.faults.processes import Process
from tests.races.conftest import (
    Call,
    N,
    api_burst,
    client_token,
    money,
    outcomes,
    post,
    settled,
    shop,
    wallet_clean,
)
from trading.models import IN_FLIGHT, Status, Trade, TradeItem

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

AK_PRICE = Decimal("36.00")  # the ak's 40.00 less a new merchant's 10 % deposit margin


def sell(web: str, actor: Actor, item_id: str, price: Decimal, game: str = "730") -> Call:
    body = {
        "tradeUrl": trade_url(OWNER),
        "game": game,
        "items": [{"itemId": item_id, "price": float(price)}],
    }
    return post(web, "/secure/sell", actor.headers, body)


def client_deposit(web: str, token: dict[str, str], item_id: str) -> Call:
    body = {"items": [{"itemId": item_id, "price": float(AK_PRICE)}]}
    return post(web, "/client/trading/deposit", token, body)


def live_items(item_id: str) -> int:
    return TradeItem.objects.filter(public_id=item_id, status__in=IN_FLIGHT).count()


def offers_sent(count: int) -> bool:
    return Trade.objects.filter(status=Status.ACTIVE).count() == count


@pytest.fixture
def alice(world: None, api, callback: CallbackServer) -> Actor:
    return seller(api, shop(callback.url, name="Alice"))


@pytest.fixture
def bob(world: None, api, callback: CallbackServer) -> Actor:
    return seller(api, shop(callback.url, name="Bob"))


def seller(api, actor: Actor) -> Actor:
    """A shop whose sandbox world holds the owner's inventory (each merchant has its own)."""
    configure_users(api, actor)
    return actor


def test_thirty_sells_of_one_asset_make_one_trade_credited_once(
    web: str, worker: Process, alice: Actor
):
    answers = api_burst([sell(web, alice, ak_item(0), AK_PRICE) for _ in range(N)])

    assert outcomes(answers) == {(200, None): 1, (409, 19): N - 1}
    (trade,) = Trade.objects.all()
    assert live_items(ak_item(0)) == 1
    settled(lambda: Trade.objects.get().status == Status.ACTIVE, "the offer sent", worker)

    # The owner's acceptance, reported 30 times at once, credits the sale once.
    accept = post(web, f"/sandbox/trades/{trade.id}/events", alice.headers, {"event": "accepted"})
    accepted = api_burst([accept] * N)
    assert outcomes(accepted) == {(200, None): 1, (409, 3002): N - 1}
    assert money(alice)["available"] == Decimal("1000.00") + AK_PRICE
    wallet_clean()


def test_each_unit_of_a_stack_is_sold_once(web: str, worker: Process, alice: Actor):
    stack_of(5)

    answers = api_burst([sell(web, alice, DOOR_STACK, Decimal("1.80"), "252490")] * N)

    assert outcomes(answers) == {(200, None): 5, (409, 19): N - 5}
    units = TradeItem.objects.filter(public_id=DOOR_STACK).values_list("asset_unit", flat=True)
    assert sorted(units) == [0, 1, 2, 3, 4]
    settled(lambda: offers_sent(5), "the offers sent", worker)
    wallet_clean()


def test_client_deposits_and_sells_of_two_merchants_take_one_asset_once(
    web: str, worker: Process, alice: Actor, bob: Actor
):
    tokens = [client_token(web, actor, OWNER) for actor in (alice, bob)]
    calls = [
        client_deposit(web, tokens[n % 2], ak_item(0))
        if n % 3
        else sell(web, (alice, bob)[n % 2], ak_item(0), AK_PRICE)
        for n in range(N)
    ]

    answers = api_burst(calls)

    assert outcomes(answers) == {(200, None): 1, (409, 19): N - 1}
    assert live_items(ak_item(0)) == 1
    assert Trade.objects.count() == 1
    # Different assets of the same owner do not wait for each other: four more (the winner above
    # may be this client's deposit, and a client has at most five active).
    spread = api_burst([client_deposit(web, tokens[0], ak_item(n)) for n in range(1, 5)])
    assert outcomes(spread) == {(200, None): 4}
    settled(lambda: offers_sent(5), "the offers sent", worker)
    wallet_clean()
