"""Withdrawals racing: one listing claimed by ten merchants at once is bought once; buys racing
for a merchant's last dollar lock no more than it has; 30 quick buys of one merchant (which
deadlocked: 503s) all go through; a client's concurrent withdrawals are one at a time; cashouts
right after buys (which deadlocked with the buys' approvals) all go through. Approvals come from
a real callback server, purchases and broadcasts run on a real worker."""

from decimal import Decimal

import pytest
from django.db.models import Q

from crypto.models import CryptoWithdrawal
from sandbox.models import SandboxListing, SandboxPurchase
from tests.crypto.conftest import cashout_body
from tests.factories import Actor, platform_id, trade_url
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
from tests.withdrawals.conftest import make_listing
from trading.models import CatalogItem, Status, Trade, TradeItem

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PRICE = Decimal("10.00")  # every listing's sourcing price
GROSS = Decimal("10.50")  # with a new merchant's 5 % withdraw fee
TRADE_URL = trade_url(42)


def buy(web: str, actor: Actor, listing: SandboxListing) -> Call:
    body = {"tradeUrl": TRADE_URL, "items": [{"itemId": listing.id, "price": float(GROSS)}]}
    return post(web, "/secure/buy", actor.headers, body)


def quick(web: str, headers: dict[str, str], item: CatalogItem, *, secure: bool) -> Call:
    body: dict[str, object] = {"itemId": item.id, "maxPrice": 12, "amount": 1}
    if secure:
        return post(web, "/secure/buy/quick", headers, body | {"tradeUrl": TRADE_URL})
    return post(web, "/client/trading/withdraw/quick", headers, body)


def listings(item: CatalogItem, count: int) -> list[SandboxListing]:
    return [make_listing(item, str(PRICE)) for _ in range(count)]


def bought_or_failed() -> bool:
    """Every withdrawal was answered and its purchase made or refused."""
    unanswered = Q(status=Status.INITIATED)
    unbought = Q(status=Status.PENDING, purchase_ref="")
    return not TradeItem.objects.filter(unanswered | unbought).exists()


def bought(actor: Actor) -> int:
    return (
        TradeItem.objects.filter(trade__merchant=actor.merchant, status=Status.PENDING)
        .exclude(purchase_ref="")
        .count()
    )


def test_one_listing_claimed_by_ten_merchants_is_bought_once(
    web: str, worker: Process, callback: CallbackServer, catalog_item: CatalogItem
):
    shops = [shop(callback.url, name=f"Shop {n}") for n in range(10)]
    (listing,) = listings(catalog_item, 1)

    answers = api_burst([buy(web, shops[n % 10], listing) for n in range(N)])

    # Creating a buy does not claim the listing (a sold one is refused, 9); the purchase does.
    assert set(outcomes(answers)) <= {(200, None), (400, 9)}
    created = outcomes(answers)[(200, None)]
    assert Trade.objects.count() == created
    settled(bought_or_failed, "every purchase made or refused", worker)
    assert SandboxPurchase.objects.filter(listing_id=listing.id).count() == 1
    assert sum(bought(actor) for actor in shops) == 1
    failed = TradeItem.objects.filter(status=Status.FAILED, error="LISTING_UNAVAILABLE")
    assert failed.count() == created - 1
    for actor in shops:
        balances = money(actor)
        assert balances["locked"] == GROSS * bought(actor)
        assert balances["available"] == Decimal("1000.00") - balances["locked"]
    wallet_clean()


def test_buys_racing_for_the_last_dollar_lock_only_what_there_is(
    web: str, worker: Process, callback: CallbackServer, catalog_item: CatalogItem
):
    actor = shop(callback.url, balance=str(GROSS * 10))

    answers = api_burst([buy(web, actor, listing) for listing in listings(catalog_item, N)])

    assert outcomes(answers) == {(200, None): 10, (400, 12): N - 10}
    assert money(actor)["available"] == Decimal("0.00")
    settled(bought_or_failed, "every purchase made", worker)
    assert bought(actor) == 10
    assert money(actor)["locked"] == GROSS * 10
    wallet_clean()


@pytest.mark.parametrize("route", ["secure", "client"])
def test_thirty_quick_buys_of_one_merchant(
    web: str, worker: Process, callback: CallbackServer, catalog_item: CatalogItem, route: str
):
    """The issue's deadlock (503s and "deadlock detected"): every quick buy now goes through.
    A client's own concurrent withdrawals are one at a time (20 WITHDRAW_IN_PROGRESS)."""
    actor = shop(callback.url)
    listings(catalog_item, N + 10)
    if route == "secure":
        calls = [quick(web, actor.headers, catalog_item, secure=True)] * N
    else:
        tokens = [client_token(web, actor, partner) for partner in range(1, 11)]
        calls = [quick(web, tokens[n % 10], catalog_item, secure=False) for n in range(N)]

    answers = api_burst(calls)

    made = outcomes(answers)[(200, None)]
    if route == "secure":
        assert made == N
    assert set(outcomes(answers)) <= {(200, None), (409, 20)}
    assert made >= 10  # each client's first
    assert Trade.objects.count() == made
    settled(bought_or_failed, "every unit bought", worker)
    assert bought(actor) == made
    # Each unit locked at its 12.00 ceiling; the 1.50 saved on it came back.
    assert money(actor)["locked"] == GROSS * made
    assert money(actor)["available"] == Decimal("1000.00") - GROSS * made
    wallet_clean()


def test_a_clients_concurrent_withdrawals_are_one_at_a_time(
    web: str, worker: Process, callback: CallbackServer, catalog_item: CatalogItem
):
    actor = shop(callback.url)
    tokens = [client_token(web, actor, partner) for partner in range(1, 4)]
    calls = [
        post(
            web,
            "/client/trading/withdraw",
            tokens[n % 3],
            {"items": [{"itemId": listing.id, "price": float(GROSS)}]},
        )
        for n, listing in enumerate(listings(catalog_item, N))
    ]

    answers = api_burst(calls)

    assert set(outcomes(answers)) <= {(200, None), (409, 20)}
    made = outcomes(answers)[(200, None)]
    assert made >= 3
    assert Trade.objects.count() == made
    settled(bought_or_failed, "every purchase made", worker)
    assert money(actor)["locked"] == GROSS * made
    wallet_clean()


def test_cashouts_right_after_buys(
    web: str, worker: Process, callback: CallbackServer, catalog_item: CatalogItem
):
    """Buys and cashouts of one merchant at once, while the worker approves and buys: the
    approvals hold the trades, the cashouts and buys commit (they used to deadlock)."""
    actor = shop(callback.url)
    half = N // 2
    calls = []
    for n, listing in enumerate(listings(catalog_item, half)):
        calls.append(buy(web, actor, listing))
        body = cashout_body(platformId=platform_id(1), chain="BSC", requestId=f"cashout-{n:04d}")
        calls.append(post(web, "/secure/crypto/withdraw", actor.headers, body))

    answers = api_burst(calls)

    assert outcomes(answers) == {(200, None): 2 * half}
    settled(bought_or_failed, "every purchase made", worker)
    sent = CryptoWithdrawal.Status.SENT
    settled(lambda: CryptoWithdrawal.objects.filter(status=sent).count() == half, "sent", worker)
    locked = GROSS * half + Decimal("25.00") * half
    assert money(actor)["locked"] == locked
    assert money(actor)["available"] == Decimal("1000.00") - locked
    wallet_clean()
