"""Every refusal of POST /secure/buy and POST /client/trading/withdraw (contract 4.6, 4.17, 7),
each provoked on both routes with its HTTP status, and with nothing locked or written."""

import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.utils import timezone

from merchants.models import Client, Merchant
from merchants.webhooks.models import WebhookEvent
from sandbox.marketplace import SandboxMarketplace
from sandbox.models import SandboxListing
from tests.factories import Actor, assert_error, make_actor, trade_url
from tests.withdrawals.conftest import (
    Desk,
    client_headers,
    envelope,
    funded,
    make_listing,
    make_rust_listing,
    money,
    ok_data,
    set_platform_user,
    wallet_clean,
)
from trading.models import Trade, TradeItem
from wallet.models import Transfer

pytestmark = pytest.mark.django_db

SELF_PARTNER = 42  # the account a self buy delivers to
CLIENT_PARTNER = 1  # the client behind the token


@dataclass
class Route:
    """One of the two withdrawal routes, called by its merchant (key) or client (token)."""

    desk: Desk
    actor: Actor
    kind: str  # "secure" or "client"
    headers: dict[str, str]

    @property
    def partner(self) -> int:
        return SELF_PARTNER if self.kind == "secure" else CLIENT_PARTNER

    def body(self, items: object, **extra: object) -> dict[str, object]:
        body: dict[str, object] = {"items": items, **extra}
        if self.kind == "secure":
            body.setdefault("tradeUrl", trade_url(SELF_PARTNER))
        return body

    def raw(self, body: object):
        path = "/secure/buy" if self.kind == "secure" else "/client/trading/withdraw"
        return self.desk.post(path, body, headers=self.headers)

    def buy(self, items: object, **extra: object):
        return self.raw(self.body(items, **extra))


def route_for(desk: Desk, actor: Actor, kind: str, partner: int = CLIENT_PARTNER) -> Route:
    if kind == "secure":
        return Route(desk, actor, kind, actor.headers)
    return Route(desk, actor, kind, client_headers(desk.api, actor, partner))


@pytest.fixture(params=["secure", "client"])
def route(request, desk, alice_funded) -> Route:
    return route_for(desk, alice_funded, request.param)


@pytest.fixture
def listing(catalog_item) -> SandboxListing:
    return make_listing(catalog_item, "10.00")  # alice pays 10.50 with her 5 % fee


def item(listing: SandboxListing, price: str = "10.50", **extra: object) -> dict[str, object]:
    return {"itemId": listing.id, "price": Decimal(price), **extra}


def assert_untouched(actor: Actor, before: dict[str, Decimal]) -> None:
    """A refused request leaves no trade, no lock, no transfer and no webhook behind."""
    assert money(actor) == before
    assert not Trade.objects.filter(merchant=actor.merchant).exists()
    assert not TradeItem.objects.filter(trade__merchant=actor.merchant).exists()
    assert not WebhookEvent.objects.filter(merchant=actor.merchant).exists()
    assert Transfer.objects.filter(kind="LOCK").count() == 0
    assert wallet_clean()


# --- 1 EXTERNAL_ID_EXISTS ------------------------------------------------------------------


def test_external_id_is_unique_per_merchant(route, catalog_item, bob_funded, hooks):
    first, second = make_listing(catalog_item, "10.00"), make_listing(catalog_item, "20.00")
    created = ok_data(route.buy([item(first)], externalId="order-1"))
    assert created["externalId"] == "order-1"
    before = money(route.actor)

    error = assert_error(
        route.buy([item(second, "21.00")], externalId="order-1"), 409, 1, "EXTERNAL_ID_EXISTS"
    )
    assert "fields" not in error
    assert money(route.actor) == before
    assert Trade.objects.filter(merchant=route.actor.merchant).count() == 1
    # Another merchant has its own namespace of externalIds (bob's fee is 10 %: 22.00).
    bobs = route_for(route.desk, bob_funded, route.kind)
    assert ok_data(bobs.buy([item(second, "22.00")], externalId="order-1"))["externalId"] == (
        "order-1"
    )


def test_external_id_is_shared_by_self_and_client_withdrawals(desk, alice_funded, catalog_item):
    first, second = make_listing(catalog_item, "10.00"), make_listing(catalog_item, "20.00")
    secure = route_for(desk, alice_funded, "secure")
    client = route_for(desk, alice_funded, "client")
    ok_data(secure.buy([item(first)], externalId="shared-1"))
    assert_error(
        client.buy([item(second, "21.00")], externalId="shared-1"), 409, 1, "EXTERNAL_ID_EXISTS"
    )


def test_external_id_is_used_up_when_the_first_trade_failed(route, catalog_item, hooks):
    first, second = make_listing(catalog_item, "10.00"), make_listing(catalog_item, "20.00")
    hooks.answer = lambda _: (402, b'{"reason": "user balance low"}')
    created = ok_data(route.buy([item(first)], externalId="order-9"))
    trade = Trade.objects.get(pk=created["id"])
    assert trade.status == "failed"
    assert trade.error == "MERCHANT_REJECTED"
    assert money(route.actor)["available"] == Decimal("1000.00")

    hooks.answer = lambda _: (200, b"{}")
    assert_error(
        route.buy([item(second, "21.00")], externalId="order-9"), 409, 1, "EXTERNAL_ID_EXISTS"
    )
    assert money(route.actor) == {
        "available": Decimal("1000.00"),
        "locked": Decimal("0.00"),
        "escrow": Decimal("0.00"),
        "collateral": Decimal("0.00"),
    }


def test_a_refused_request_does_not_use_up_its_external_id(route, listing):
    assert_error(
        route.buy([item(listing, "10.49")], externalId="order-2"), 400, 11, "PRICE_CHANGED"
    )
    assert ok_data(route.buy([item(listing)], externalId="order-2"))["externalId"] == "order-2"


# --- 2 MISSING_ITEMS, 8 TOO_MANY_ITEMS -------------------------------------------------------


def test_empty_items_is_missing_items(route, listing):
    before = money(route.actor)
    assert_error(route.buy([]), 400, 2, "MISSING_ITEMS")
    assert_untouched(route.actor, before)


def test_51_items_are_too_many_and_50_are_accepted(route, catalog_item):
    too_many = [{"itemId": str(uuid.uuid4()), "price": Decimal("1.05")} for _ in range(51)]
    before = money(route.actor)
    assert_error(route.buy(too_many), 400, 8, "TOO_MANY_ITEMS")
    assert_untouched(route.actor, before)

    fifty = [make_listing(catalog_item, "1.00") for _ in range(50)]
    trade = ok_data(route.buy([item(listing, "1.05") for listing in fifty]))
    assert len(trade["items"]) == 50
    assert trade["totalPrice"] == Decimal("52.50")


# --- 9 ITEMS_UNAVAILABLE ---------------------------------------------------------------------


def test_a_listing_bought_through_the_flow_is_unavailable(route, listing, alice_funded):
    ok_data(route.buy([item(listing)]))  # approved at once; the purchase takes the listing
    assert not SandboxListing.objects.filter(pk=listing.pk).exists()
    before = money(route.actor)
    error = assert_error(route.buy([item(listing)]), 400, 9, "ITEMS_UNAVAILABLE")
    assert listing.id in error["message"]
    assert money(route.actor) == before
    assert Trade.objects.filter(merchant=alice_funded.merchant).count() == 1


def test_a_listing_bought_on_the_marketplace_is_unavailable(route, listing):
    bought = SandboxMarketplace().purchase(
        listing_id=listing.id, max_price=Decimal("10.00"), key="elsewhere-1"
    )
    assert bought.ok
    before = money(route.actor)
    assert_error(route.buy([item(listing)]), 400, 9, "ITEMS_UNAVAILABLE")
    assert_untouched(route.actor, before)


def test_one_unavailable_listing_refuses_the_whole_request(route, catalog_item):
    good, sold = make_listing(catalog_item, "10.00"), make_listing(catalog_item, "20.00")
    SandboxMarketplace().purchase(listing_id=sold.id, max_price=Decimal("20.00"), key="k-2")
    before = money(route.actor)
    assert_error(route.buy([item(good), item(sold, "21.00")]), 400, 9, "ITEMS_UNAVAILABLE")
    assert_untouched(route.actor, before)
    assert SandboxListing.objects.filter(pk=good.pk).exists()


# --- 11 PRICE_CHANGED ------------------------------------------------------------------------


@pytest.mark.parametrize("sent", ["10.49", "10.51", "10.00"])
def test_a_price_other_than_the_current_one_is_refused_with_the_current_price(route, listing, sent):
    before = money(route.actor)
    response = route.buy([item(listing, sent)])
    error = assert_error(response, 400, 11, "PRICE_CHANGED")
    details = envelope(response)["error"]["details"]
    assert details == {"itemId": listing.id, "price": Decimal("10.50")}
    assert error["details"]["itemId"] == listing.id
    assert_untouched(route.actor, before)


def test_the_current_price_is_the_callers_own_fee_inclusive_price(desk, bob_funded, listing):
    """bob's fee is 10 %: 10.50 (alice's price) is a changed price for him, 11.00 is his."""
    bob = route_for(desk, bob_funded, "secure")
    response = bob.buy([item(listing, "10.50")])
    assert_error(response, 400, 11, "PRICE_CHANGED")
    assert envelope(response)["error"]["details"]["price"] == Decimal("11.00")
    assert ok_data(bob.buy([item(listing, "11.00")]))["totalPrice"] == Decimal("11.00")


def test_a_price_sent_with_a_trailing_zero_is_the_same_price(route, listing):
    assert ok_data(route.buy([item(listing, "10.500")]))["totalPrice"] == Decimal("10.50")


# --- slippageBps (decisions section 11) -------------------------------------------------------


def test_within_the_slippage_the_current_price_is_bought_and_locked(route, listing):
    """alice's current price is 10.50: sent 10.40 with 100 bp (up to 10.504) buys at 10.50."""
    before = money(route.actor)["available"]

    trade = ok_data(route.buy([item(listing, "10.40")], slippageBps=100))

    assert trade["items"][0]["offer"]["price"] == Decimal("10.50")
    assert trade["totalPrice"] == Decimal("10.50")
    assert money(route.actor)["available"] == before - Decimal("10.50")


def test_beyond_the_slippage_the_price_changed(route, listing):
    before = money(route.actor)
    response = route.buy([item(listing, "10.40")], slippageBps=96)  # up to 10.49984

    assert_error(response, 400, 11, "PRICE_CHANGED")
    assert envelope(response)["error"]["details"]["price"] == Decimal("10.50")
    assert_untouched(route.actor, before)


def test_the_slippage_is_on_each_merchants_own_price(
    desk, alice_funded, bob_funded, listing, catalog_item
):
    """The same sent price: within alice's tolerance of her 10.50, beyond bob's of his 11.00
    (his fee is 10 %)."""
    other = make_listing(catalog_item, "10.00")
    alice, bob = (route_for(desk, actor, "secure") for actor in (alice_funded, bob_funded))

    assert_error(bob.buy([item(other, "10.45")], slippageBps=100), 400, 11, "PRICE_CHANGED")
    assert ok_data(alice.buy([item(listing, "10.45")], slippageBps=100))["totalPrice"] == Decimal(
        "10.50"
    )
    assert ok_data(bob.buy([item(other, "10.90")], slippageBps=100))["totalPrice"] == Decimal(
        "11.00"
    )


@pytest.mark.parametrize("value", [-1, 1001, 10.5, "50", True])
def test_slippage_is_0_to_1000_basis_points(route, listing, value):
    error = assert_error(
        route.buy([item(listing)], slippageBps=value), 400, 1001, "VALIDATION_FAILED"
    )
    assert set(error["fields"]) == {"slippageBps"}


# --- 18 EXCEEDS_MAX_AMOUNT: an item listed twice ---------------------------------------------


def test_an_item_listed_twice_is_refused_as_more_than_one_entry_may_ask(route, listing):
    """The document cannot say "distinct itemIds": a repeat is the service's refusal, not a
    malformed body."""
    before = money(route.actor)
    response = route.buy([item(listing), item(listing, externalId="again")])

    error = assert_error(response, 400, 18, "EXCEEDS_MAX_AMOUNT")

    assert error["details"] == {"itemId": listing.id}
    assert "listed twice" in error["message"]
    assert_untouched(route.actor, before)


# --- 12 MERCHANT_BALANCE_LOW -----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["secure", "client"])
def test_a_balance_below_the_total_locks_nothing_and_writes_nothing(
    desk, hooks, catalog_item, kind
):
    poor = funded(make_actor(name="Poor"), "20.99", hooks.url)
    route = route_for(desk, poor, kind)
    first, second = make_listing(catalog_item, "10.00"), make_listing(catalog_item, "10.00")
    before = money(poor)
    assert_error(route.buy([item(first), item(second)]), 400, 12, "MERCHANT_BALANCE_LOW")
    assert_untouched(poor, before)
    assert before["available"] == Decimal("20.99")


def test_a_balance_exactly_covering_the_total_is_enough(desk, hooks, listing):
    exact = funded(make_actor(name="Exact"), "10.50", hooks.url)
    route = route_for(desk, exact, "secure")
    ok_data(route.buy([item(listing)]))
    assert money(exact)["available"] == Decimal("0.00")
    assert money(exact)["locked"] == Decimal("10.50")
    # Nothing left: the next one is refused.
    other = make_listing(listing.item, "0.10")
    assert_error(route.buy([item(other, "0.11")]), 400, 12, "MERCHANT_BALANCE_LOW")
    assert wallet_clean()


# --- 13 INVALID_TRADEURL, 1310 USER_NOT_FOUND, 31 PLATFORM_UNAVAILABLE -----------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/tradeoffer/new/?partner=42&token=Ab3_x-Z9",
        "https://steamcommunity.com/tradeoffer/new/?partner=42&token=short",
        "https://steamcommunity.com/tradeoffer/new/?partner=abc&token=Ab3_x-Z9",
        "http://steamcommunity.com/tradeoffer/new/?partner=42&token=Ab3_x-Z9",
        "https://steamcommunity.com/tradeoffer/new/?partner=42&token=Ab3_x-Z9Q",
    ],
)
def test_a_trade_url_off_the_pattern_is_invalid(desk, alice_funded, listing, url):
    route = route_for(desk, alice_funded, "secure")
    before = money(alice_funded)
    assert_error(route.buy([item(listing)], tradeUrl=url), 400, 13, "INVALID_TRADEURL")
    assert_untouched(alice_funded, before)


@pytest.mark.parametrize("state", [4, 6, 9])
def test_a_trade_url_the_platform_rejects_is_invalid(route, listing, state):
    set_platform_user(route.desk, route.actor, route.partner, tradeUrlState=state)
    before = money(route.actor)
    assert_error(route.buy([item(listing)]), 400, 13, "INVALID_TRADEURL")
    assert_untouched(route.actor, before)


@pytest.mark.parametrize("state", [1, 2, 3, 5])
def test_platform_states_that_can_receive_items_are_accepted(route, listing, state):
    set_platform_user(route.desk, route.actor, route.partner, tradeUrlState=state)
    assert ok_data(route.buy([item(listing)]))["status"] == "initiated"


def test_a_trade_url_without_a_platform_user_is_user_not_found(route, listing):
    set_platform_user(route.desk, route.actor, route.partner, tradeUrlState=7)
    before = money(route.actor)
    assert_error(route.buy([item(listing)]), 404, 1310, "USER_NOT_FOUND")
    assert_untouched(route.actor, before)


@pytest.mark.parametrize("fields", [{"tradeUrlState": 10}, {"fault": "unavailable"}])
def test_an_unavailable_platform_is_retryable(route, listing, fields):
    set_platform_user(route.desk, route.actor, route.partner, **fields)
    before = money(route.actor)
    assert_error(route.buy([item(listing)]), 424, 31, "PLATFORM_UNAVAILABLE")
    assert_untouched(route.actor, before)
    # Not cached: once the platform is back the same request goes through.
    set_platform_user(route.desk, route.actor, route.partner)
    assert ok_data(route.buy([item(listing)]))["status"] == "initiated"


# --- 14 LISTING_NOT_FOUND, 15 LISTING_PRICE_INVALID, 16 INVALID_LISTING_ID --------------------


def test_an_unknown_listing_is_not_found(route, listing):
    before = money(route.actor)
    unknown = {"itemId": str(uuid.uuid4()), "price": Decimal("10.50")}
    assert_error(route.buy([item(listing), unknown]), 404, 14, "LISTING_NOT_FOUND")
    assert_untouched(route.actor, before)


def test_a_listing_of_the_other_game_is_not_found(route, rust_item):
    # A uuid-shaped id that exists, but on the second game's market.
    other = SandboxListing.objects.create(
        id=str(uuid.uuid4()),
        item=rust_item,
        game=rust_item.game,
        market_hash_name=rust_item.market_hash_name,
        price=Decimal("10.00"),
        delivery="standard",
    )
    before = money(route.actor)
    assert_error(route.buy([item(other)]), 404, 14, "LISTING_NOT_FOUND")
    assert_error(route.buy([item(other)], game="730"), 404, 14, "LISTING_NOT_FOUND")
    assert_untouched(route.actor, before)


def test_a_second_game_listing_is_found_on_the_second_game(route, rust_item):
    listing = make_rust_listing(rust_item, "10.00")
    created = ok_data(route.buy([item(listing)], game="252490"))
    assert created["game"] == "252490"
    assert created["items"][0]["appid"] == 252490


def test_an_unknown_second_game_listing_is_not_found(route, rust_item):
    assert_error(
        route.buy([{"itemId": "252490-000001-99999999", "price": 1}], game="252490"),
        404,
        14,
        "LISTING_NOT_FOUND",
    )


@pytest.mark.parametrize("price", ["10.505", "10.001", "0.999"])
def test_a_price_with_more_than_two_decimals_is_invalid(route, listing, price):
    before = money(route.actor)
    assert_error(route.buy([item(listing, price)]), 400, 15, "LISTING_PRICE_INVALID")
    assert_untouched(route.actor, before)


@pytest.mark.parametrize(
    ("game", "listing_id"),
    [
        ("730", "not-a-uuid-at-all"),
        ("730", "252490-000001-00000001"),
        ("730", "a" * 36),
        ("252490", "252490-1-2"),
        ("252490", "730-000001-00000001"),
        ("252490", str(uuid.UUID(int=7))),
    ],
)
def test_an_id_that_is_not_a_listing_id_of_the_game_is_invalid(route, game, listing_id):
    before = money(route.actor)
    body = route.body([{"itemId": listing_id, "price": Decimal("1.00")}], game=game)
    assert_error(route.raw(body), 400, 16, "INVALID_LISTING_ID")
    assert_untouched(route.actor, before)


# --- 1601 INVALID_AMOUNT ---------------------------------------------------------------------


@pytest.mark.parametrize("price", ["0", "0.00", "-1", "-10.50"])
def test_a_price_of_zero_or_below_is_an_invalid_amount(route, listing, price):
    before = money(route.actor)
    assert_error(route.buy([item(listing, price)]), 400, 1601, "INVALID_AMOUNT")
    assert_untouched(route.actor, before)


# --- 1705 MERCHANT_NO_CALLBACK_URL -----------------------------------------------------------


@pytest.mark.parametrize("kind", ["secure", "client"])
@pytest.mark.parametrize("why", ["no_url", "disabled_by_410"])
def test_without_an_active_callback_url_nothing_happens(desk, alice_funded, listing, kind, why):
    if why == "no_url":
        Merchant.objects.filter(pk=alice_funded.merchant.pk).update(callback_url="")
    else:
        Merchant.objects.filter(pk=alice_funded.merchant.pk).update(
            callback_disabled_at=timezone.now()
        )
    route = route_for(desk, alice_funded, kind)
    before = money(alice_funded)
    assert_error(route.buy([item(listing)]), 400, 1705, "MERCHANT_NO_CALLBACK_URL")
    assert_untouched(alice_funded, before)
    assert SandboxListing.objects.filter(pk=listing.pk).exists()


def test_a_410_from_the_callback_url_disables_it_for_the_next_withdrawal(
    route, catalog_item, hooks
):
    first, second = make_listing(catalog_item, "10.00"), make_listing(catalog_item, "20.00")
    ok_data(route.buy([item(first)]))  # approved; its trade.pending webhook gets a 410
    hooks.answer = lambda _: (410, b"")  # the next webhook (trade.active) gets a 410
    trade = Trade.objects.get()
    ok_data(
        route.desk.post(
            f"/sandbox/trades/{trade.id}/events",
            {"event": "purchased"},
            headers=route.actor.headers,
        )
    )
    merchant = Merchant.objects.get(pk=route.actor.merchant.pk)
    assert merchant.callback_disabled_at is not None
    assert_error(route.buy([item(second, "21.00")]), 400, 1705, "MERCHANT_NO_CALLBACK_URL")


# --- 1001 VALIDATION_FAILED ------------------------------------------------------------------


def _valid(listing: SandboxListing) -> dict[str, object]:
    return {"itemId": listing.id, "price": Decimal("10.50")}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda b, item_: b.pop("items"), "items"),
        (lambda b, item_: b.update(items={"itemId": "x"}), "items"),
        (lambda b, item_: b.update(items=[{"price": Decimal("10.50")}]), "items.0.itemId"),
        (lambda b, item_: b.update(items=[{"itemId": item_["itemId"]}]), "items.0.price"),
        (lambda b, item_: b.update(items=[{**item_, "itemId": "abcd"}]), "items.0.itemId"),
        (lambda b, item_: b.update(items=[{**item_, "itemId": "a" * 257}]), "items.0.itemId"),
        (
            lambda b, item_: b.update(items=[{**item_, "price": Decimal("100000.01")}]),
            "items.0.price",
        ),
        (lambda b, item_: b.update(items=[{**item_, "price": "10.50"}]), "items.0.price"),
        (lambda b, item_: b.update(items=[{**item_, "price": True}]), "items.0.price"),
        (lambda b, item_: b.update(items=[{**item_, "itemId": 12345678}]), "items.0.itemId"),
        (lambda b, item_: b.update(items=[{**item_, "externalId": ""}]), "items.0.externalId"),
        (
            lambda b, item_: b.update(items=[{**item_, "externalId": "e" * 129}]),
            "items.0.externalId",
        ),
        (lambda b, item_: b.update(items=[{**item_, "color": "red"}]), "items.0.color"),
        (lambda b, item_: b.update(unknown=1), "unknown"),
        (lambda b, item_: b.update(game="570"), "game"),
        (lambda b, item_: b.update(game=730.5), "game"),
        (lambda b, item_: b.update(externalId="x" * 129), "externalId"),
        (lambda b, item_: b.update(externalId=5), "externalId"),
    ],
)
def test_malformed_bodies_are_validation_failures(route, listing, change, field):
    body = route.body([_valid(listing)])
    change(body, _valid(listing))
    before = money(route.actor)
    error = assert_error(route.raw(body), 400, 1001, "VALIDATION_FAILED")
    assert field in error["fields"], error["fields"]
    assert_untouched(route.actor, before)


def test_a_body_that_is_not_an_object_is_a_validation_failure(route):
    error = assert_error(route.raw([1, 2]), 400, 1001, "VALIDATION_FAILED")
    assert error["fields"]


def test_a_secure_buy_needs_a_trade_url(desk, alice_funded, listing):
    route = route_for(desk, alice_funded, "secure")
    body = route.body([_valid(listing)])
    body.pop("tradeUrl")
    error = assert_error(route.raw(body), 400, 1001, "VALIDATION_FAILED")
    assert "tradeUrl" in error["fields"]
    for blank in ("", 42):
        error = assert_error(
            route.buy([_valid(listing)], tradeUrl=blank), 400, 1001, "VALIDATION_FAILED"
        )
        assert "tradeUrl" in error["fields"]


def test_a_client_cannot_name_a_trade_url(desk, alice_funded, listing):
    """The client's trade URL is the token's; sending one is an unknown property."""
    route = route_for(desk, alice_funded, "client")
    body = route.body([_valid(listing)], tradeUrl=trade_url(99))
    error = assert_error(route.raw(body), 400, 1001, "VALIDATION_FAILED")
    assert "tradeUrl" in error["fields"]


@pytest.mark.parametrize("minutes", [29, 721, 0, -30])
def test_auto_cancel_outside_30_to_720_is_refused(desk, alice_funded, listing, minutes):
    route = route_for(desk, alice_funded, "client")
    error = assert_error(
        route.buy([_valid(listing)], autoCancel=minutes), 400, 1001, "VALIDATION_FAILED"
    )
    assert "autoCancel" in error["fields"]
    assert_untouched(alice_funded, money(alice_funded))


@pytest.mark.parametrize("value", ["45", 45.5, True])
def test_auto_cancel_must_be_an_integer(desk, alice_funded, listing, value):
    route = route_for(desk, alice_funded, "client")
    error = assert_error(
        route.buy([_valid(listing)], autoCancel=value), 400, 1001, "VALIDATION_FAILED"
    )
    assert "autoCancel" in error["fields"]
    assert_untouched(alice_funded, money(alice_funded))


@pytest.mark.parametrize("value", [45.0, Decimal("450e-1")])
def test_auto_cancel_with_a_zero_fraction_is_that_integer(desk, alice_funded, listing, value):
    # The OpenAPI 3.1 document's integer (JSON Schema 2020-12): 45.0 is 45.
    route = route_for(desk, alice_funded, "client")

    trade = ok_data(route.buy([_valid(listing)], autoCancel=value))

    created = datetime.fromisoformat(trade["createdAt"])
    assert datetime.fromisoformat(trade["autoCancelAt"]) - created == timedelta(minutes=45)


@pytest.mark.parametrize("minutes", [30, 720])
def test_auto_cancel_on_the_second_game_is_refused(route, alice_funded, rust_item, minutes):
    listing = make_rust_listing(rust_item, "10.00")
    error = assert_error(
        route.buy([_valid(listing)], game="252490", autoCancel=minutes),
        400,
        1001,
        "VALIDATION_FAILED",
    )
    assert "autoCancel" in error["fields"]
    assert_untouched(alice_funded, money(alice_funded))


def test_a_self_buy_takes_auto_cancel_as_a_client_withdrawal_does(desk, alice_funded, listing):
    route = route_for(desk, alice_funded, "secure")

    trade = ok_data(route.buy([_valid(listing)], autoCancel=60))

    created = datetime.fromisoformat(trade["createdAt"])
    assert datetime.fromisoformat(trade["autoCancelAt"]) - created == timedelta(minutes=60)


def test_a_client_request_needs_a_token(desk, alice_funded, listing):
    response = desk.post(
        "/client/trading/withdraw", {"items": [_valid(listing)]}, headers=alice_funded.headers
    )
    assert response.status_code == 401
    assert not Trade.objects.exists()


# --- 20 WITHDRAW_IN_PROGRESS -----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("quick", [False, True])
def test_a_withdrawal_while_another_holds_the_client_is_in_progress(
    desk, alice_funded, catalog_item, quick
):
    listing = make_listing(catalog_item, "10.00")
    if quick:
        path = "/client/trading/withdraw/quick"
        body: dict[str, object] = {
            "itemId": catalog_item.id,
            "maxPrice": Decimal("10.50"),
            "amount": 1,
        }
    else:
        path, body = "/client/trading/withdraw", {"items": [_valid(listing)]}
    headers = client_headers(desk.api, alice_funded, CLIENT_PARTNER)
    client = Client.objects.get(merchant=alice_funded.merchant)
    locked, release = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def hold_the_client() -> None:
        """Another transaction (another withdrawal of this user, say) holds the client row."""
        try:
            with transaction.atomic():
                Client.objects.select_for_update().get(pk=client.pk)
                locked.set()
                release.wait(timeout=30)
        except BaseException as exc:  # reported to the test below
            failures.append(exc)
            locked.set()
        finally:
            connection.close()

    holder = threading.Thread(target=hold_the_client)
    holder.start()
    try:
        assert locked.wait(timeout=30)
        before = money(alice_funded)
        assert_error(desk.post(path, body, headers=headers), 409, 20, "WITHDRAW_IN_PROGRESS")
        assert money(alice_funded) == before
        assert not Trade.objects.exists()
        assert not WebhookEvent.objects.exists()
    finally:
        release.set()
        holder.join(timeout=30)
    assert not failures
    # The other transaction ended: the same request now goes through.
    created = ok_data(desk.post(path, body, headers=headers))
    assert created["status"] in ("initiated", "pending")
    assert Trade.objects.get().client_id == client.pk
    assert money(alice_funded)["locked"] == Decimal("10.50")
    assert wallet_clean()
