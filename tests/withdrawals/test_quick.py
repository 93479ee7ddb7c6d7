"""Quick withdrawals (contract 4.18; decisions 2 and 4): POST /client/trading/withdraw/quick
and POST /secure/buy/quick. The worst case is locked, the fill buys the cheapest listings at or
below the sourcing ceiling, and savings and unfilled units go back to the wallet, to the cent."""

import uuid
from dataclasses import dataclass
from decimal import Decimal

import pytest

from merchants.callers import callers_changed
from merchants.models import Merchant
from merchants.webhooks.delivery import webhook_event_deliver
from merchants.webhooks.models import WebhookEvent
from sandbox.marketplace import SandboxMarketplace
from sandbox.models import SandboxListing, SandboxPurchase
from tests.factories import Actor, assert_error, make_actor, trade_url
from tests.withdrawals.conftest import (
    Desk,
    client_headers,
    funded,
    make_listing,
    money,
    ok_data,
    sandbox_event,
    service_money,
    set_platform_user,
    wallet_clean,
)
from trading.models import CatalogItem, Trade, TradeItem

pytestmark = pytest.mark.django_db


@dataclass
class QuickRoute:
    desk: Desk
    actor: Actor
    kind: str
    headers: dict[str, str]

    def body(self, **fields: object) -> dict[str, object]:
        if self.kind == "secure":
            fields.setdefault("tradeUrl", trade_url(42))
        return fields

    def raw(self, body: object):
        path = "/secure/buy/quick" if self.kind == "secure" else "/client/trading/withdraw/quick"
        return self.desk.post(path, body, headers=self.headers)

    def buy(self, **fields: object):
        return self.raw(self.body(**fields))

    def show(self, trade_id: str) -> dict:
        """The trade as its owner reads it back."""
        if self.kind == "secure":
            return ok_data(self.desk.get(f"/secure/trades/{trade_id}", headers=self.headers))
        return ok_data(self.desk.get(f"/client/trades/{trade_id}", headers=self.headers))


def quick_route(desk: Desk, actor: Actor, kind: str) -> QuickRoute:
    headers = actor.headers if kind == "secure" else client_headers(desk.api, actor)
    return QuickRoute(desk, actor, kind, headers)


@pytest.fixture(params=["secure", "client"])
def route(request, desk, alice_funded) -> QuickRoute:
    return quick_route(desk, alice_funded, request.param)


@pytest.fixture
def ladder(catalog_item) -> list[SandboxListing]:
    """Sourcing prices around alice's ceiling for maxPrice 12.00 (12.00 / 1.05 -> 11.42)."""
    return [make_listing(catalog_item, p) for p in ("11.00", "10.00", "11.43", "10.50", "11.42")]


def nothing_written(actor: Actor, before: dict[str, Decimal]) -> None:
    assert money(actor) == before
    assert not Trade.objects.filter(merchant=actor.merchant).exists()
    assert not WebhookEvent.objects.filter(merchant=actor.merchant).exists()
    assert not SandboxPurchase.objects.exists()


# --- the response at creation --------------------------------------------------------------


def test_creation_locks_the_worst_case_with_one_placeholder_row_per_unit(
    route, catalog_item, ladder, hooks
):
    hooks.answer = lambda _: (503, b"")  # undecided: the trade stays as created
    trade = ok_data(route.buy(itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=3))
    assert trade["status"] == "initiated"
    assert trade["type"] == "withdraw"
    assert trade["source"] == ("self" if route.kind == "secure" else "client")
    assert trade["totalPrice"] == Decimal("36.00")
    assert (
        trade["items"]
        == [
            {
                "id": catalog_item.id,
                "name": catalog_item.name,
                "marketHashName": catalog_item.market_hash_name,
                "type": catalog_item.item_type,
                "iconUrl": catalog_item.icon_url,
                "appid": 730,
                "tradable": True,
                "amount": 1,
                "status": "initiated",
                "offer": {"price": Decimal("12.00"), "delivery": "standard"},
            }
        ]
        * 3
    )
    assert money(route.actor)["locked"] == Decimal("36.00")
    assert money(route.actor)["available"] == Decimal("964.00")
    assert not SandboxPurchase.objects.exists()  # nothing is bought before approval
    (initiated,) = hooks.of_type("trade.initiated")
    assert initiated.json["trade"]["totalPrice"] == 36.0


def test_market_hash_name_finds_the_item(route, catalog_item, ladder, hooks):
    hooks.answer = lambda _: (503, b"")
    trade = ok_data(
        route.buy(
            marketHashName=catalog_item.market_hash_name,
            maxPrice=Decimal("12.00"),
            amount=1,
            delivery="standard",
        )
    )
    assert [row["id"] for row in trade["items"]] == [catalog_item.id]


def test_item_id_wins_over_market_hash_name(route, catalog_item, ladder, hooks):
    other = CatalogItem.objects.create(
        id="730-000002",
        game=730,
        market_hash_name="M4A4 | Howl (Field-Tested)",
        name="M4A4 | Howl",
        item_type="Rifle",
        rarity="Contraband",
        rarity_color="e4ae39",
        icon_url="https://cdn.sandbox.invalid/h.png",
        reference_price=Decimal("900.00"),
    )
    hooks.answer = lambda _: (503, b"")
    trade = ok_data(
        route.buy(
            itemId=catalog_item.id,
            marketHashName=other.market_hash_name,
            maxPrice=Decimal("12.00"),
            amount=1,
        )
    )
    assert trade["items"][0]["id"] == catalog_item.id
    # An unknown itemId is not rescued by a valid name.
    before = money(route.actor)
    assert_error(
        route.buy(
            itemId="730-999999",
            marketHashName=catalog_item.market_hash_name,
            maxPrice=Decimal("12.00"),
            amount=1,
        ),
        404,
        14,
        "LISTING_NOT_FOUND",
    )
    assert money(route.actor) == before


@pytest.mark.parametrize("ref", [{"itemId": "730-999999"}, {"marketHashName": "No Such Item"}])
def test_an_unknown_item_is_not_found(route, ladder, ref):
    before = money(route.actor)
    assert_error(
        route.buy(**ref, maxPrice=Decimal("12.00"), amount=1), 404, 14, "LISTING_NOT_FOUND"
    )
    nothing_written(route.actor, before)


# --- refusals ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"maxPrice": Decimal("100000.01")}, "maxPrice"),
        ({"maxPrice": "12.00"}, "maxPrice"),
        ({"amount": 0}, "amount"),
        ({"amount": 201}, "amount"),
        ({"amount": "3"}, "amount"),
        ({"amount": 1.5}, "amount"),
        ({"phase": "Phase 1", "delivery": "instant"}, "phase"),
        ({"phase": "Phase 9"}, "phase"),
        ({"delivery": "fast"}, "delivery"),
        ({"itemId": "abcd"}, "itemId"),
        ({"itemId": None, "marketHashName": None}, "itemId"),
        ({"game": "570"}, "game"),
        ({"externalId": "x" * 129}, "externalId"),
        ({"externalIds": ["a", "a"]}, "externalIds"),
        ({"externalIds": [""]}, "externalIds.0"),
        ({"externalIds": "a"}, "externalIds"),
        ({"color": "red"}, "color"),
    ],
)
def test_malformed_quick_bodies_are_validation_failures(route, catalog_item, ladder, fields, path):
    body = route.body(itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=1)
    body.update(fields)
    body = {key: value for key, value in body.items() if value is not None}
    before = money(route.actor)
    error = assert_error(route.raw(body), 400, 1001, "VALIDATION_FAILED")
    assert path in error["fields"], error["fields"]
    nothing_written(route.actor, before)


def test_a_self_quick_buy_needs_a_trade_url(desk, alice_funded, catalog_item, ladder):
    route = quick_route(desk, alice_funded, "secure")
    error = assert_error(
        route.raw({"itemId": catalog_item.id, "maxPrice": Decimal("12.00"), "amount": 1}),
        400,
        1001,
        "VALIDATION_FAILED",
    )
    assert "tradeUrl" in error["fields"]
    assert_error(
        route.buy(
            itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=1, tradeUrl="https://x.y/z"
        ),
        400,
        13,
        "INVALID_TRADEURL",
    )


def test_amount_200_is_the_most(route, catalog_item, hooks):
    make_listing(catalog_item, "1.00")
    hooks.answer = lambda _: (503, b"")
    trade = ok_data(route.buy(itemId=catalog_item.id, maxPrice=Decimal("1.05"), amount=200))
    assert len(trade["items"]) == 200
    assert trade["totalPrice"] == Decimal("210.00")
    assert money(route.actor)["locked"] == Decimal("210.00")


def test_the_second_game_has_no_quick_withdrawals(route, rust_item, catalog_item, ladder):
    before = money(route.actor)
    for body in (
        {"itemId": rust_item.id, "game": "252490"},
        {"itemId": catalog_item.id, "game": "252490"},
        {"itemId": rust_item.id},
        {"marketHashName": rust_item.market_hash_name},
    ):
        response = route.buy(**body, maxPrice=Decimal("12.00"), amount=1)
        assert_error(response, 400, 32, "QUICK_BUY_UNSUPPORTED_GAME")
    nothing_written(route.actor, before)


@pytest.mark.parametrize(
    ("max_price", "delivery"),
    [
        ("10.49", "standard"),  # ceiling 9.99: the cheapest listing (10.00) is above it
        ("12.00", "instant"),  # no own-stock listing at all
    ],
)
def test_nothing_at_or_below_the_ceiling_is_insufficient(
    route, catalog_item, ladder, max_price, delivery
):
    before = money(route.actor)
    assert_error(
        route.buy(itemId=catalog_item.id, maxPrice=Decimal(max_price), amount=1, delivery=delivery),
        400,
        17,
        "INSUFFICIENT_ITEM_AMOUNT",
    )
    nothing_written(route.actor, before)


def test_the_cheapest_listing_exactly_at_the_ceiling_is_enough(route, catalog_item, hooks):
    make_listing(catalog_item, "10.00")  # 10.50 fee-inclusive for alice
    hooks.answer = lambda _: (503, b"")
    assert ok_data(route.buy(itemId=catalog_item.id, maxPrice=Decimal("10.50"), amount=1))


# A maxPrice at or below 0 is VALIDATION_FAILED (tests/test_contract_refusals.py).
@pytest.mark.parametrize("max_price", ["0.01", "0.015"])
def test_a_max_price_that_leaves_no_sourcing_ceiling_is_an_invalid_amount(
    route, catalog_item, max_price
):
    make_listing(catalog_item, "0.01")
    before = money(route.actor)
    assert_error(
        route.buy(itemId=catalog_item.id, maxPrice=Decimal(max_price), amount=1),
        400,
        1601,
        "INVALID_AMOUNT",
    )
    nothing_written(route.actor, before)


def test_a_worst_case_above_the_balance_is_refused(desk, hooks, catalog_item, ladder):
    poor = funded(make_actor(name="Poor"), "35.99", hooks.url)
    route = quick_route(desk, poor, "client")
    before = money(poor)
    assert_error(
        route.buy(itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=3),
        400,
        12,
        "MERCHANT_BALANCE_LOW",
    )
    nothing_written(poor, before)


def test_without_a_callback_url_nothing_happens(route, catalog_item, ladder):
    Merchant.objects.filter(pk=route.actor.merchant.pk).update(callback_url="")
    callers_changed()  # as the admin's change does
    before = money(route.actor)
    assert_error(
        route.buy(itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=1),
        400,
        1705,
        "MERCHANT_NO_CALLBACK_URL",
    )
    nothing_written(route.actor, before)


def test_external_ids_name_the_units_in_order(route, catalog_item, ladder, hooks):
    hooks.answer = lambda _: (503, b"")  # undecided: the rows stay as created

    trade = ok_data(
        route.buy(
            itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=3, externalIds=["u1", "u2"]
        )
    )

    assert [row.get("externalId") for row in trade["items"]] == ["u1", "u2", None]
    assert [row.get("externalId") for row in route.show(trade["id"])["items"]] == [
        "u1",
        "u2",
        None,
    ]


def test_more_external_ids_than_units_is_too_many_items(route, catalog_item, ladder):
    before = money(route.actor)

    error = assert_error(
        route.buy(
            itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=1, externalIds=["a", "b"]
        ),
        400,
        8,
        "TOO_MANY_ITEMS",
    )

    assert "one per unit" in error["message"]
    nothing_written(route.actor, before)


def test_two_merchants_may_name_their_units_alike(
    desk, alice_funded, bob_funded, catalog_item, ladder, hooks
):
    """Unit ids are per trade, as items[].externalId are: bob's "b" is not alice's."""
    alice = quick_route(desk, alice_funded, "secure")
    bob = quick_route(desk, bob_funded, "secure")
    hooks.answer = lambda _: (503, b"")
    mine = ok_data(
        alice.buy(
            itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=2, externalIds=["a", "b"]
        )
    )
    theirs = ok_data(
        bob.buy(itemId=catalog_item.id, maxPrice=Decimal("13.00"), amount=1, externalIds=["b"])
    )

    assert [row["externalId"] for row in mine["items"]] == ["a", "b"]
    assert [row["externalId"] for row in theirs["items"]] == ["b"]
    assert TradeItem.objects.filter(trade_id=mine["id"], external_id="b").count() == 1
    assert TradeItem.objects.filter(trade_id=theirs["id"], external_id="b").count() == 1


def test_the_external_id_is_unique(route, catalog_item, ladder):
    ok_data(
        route.buy(itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=1, externalId="q-1")
    )
    before = money(route.actor)
    assert_error(
        route.buy(itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=1, externalId="q-1"),
        409,
        1,
        "EXTERNAL_ID_EXISTS",
    )
    assert money(route.actor) == before


@pytest.mark.parametrize("state", [4, 7, 10])
def test_the_recipient_is_checked(route, catalog_item, ladder, state):

    set_platform_user(
        route.desk, route.actor, 42 if route.kind == "secure" else 1, tradeUrlState=state
    )
    expected = {4: (400, 13, "INVALID_TRADEURL"), 7: (404, 1310, "USER_NOT_FOUND")}.get(
        state, (424, 31, "PLATFORM_UNAVAILABLE")
    )
    before = money(route.actor)
    assert_error(route.buy(itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=1), *expected)
    nothing_written(route.actor, before)


# --- the fill --------------------------------------------------------------------------------


def test_the_fill_buys_the_cheapest_listings_and_refunds_the_savings(
    route, catalog_item, ladder, hooks
):
    cheapest = sorted(ladder, key=lambda listing: listing.price)[:3]  # 10.00, 10.50, 11.00
    created = ok_data(route.buy(itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=3))
    assert created["totalPrice"] == Decimal("36.00")

    trade = route.show(created["id"])
    assert trade["status"] == "pending"
    rows = trade["items"]
    assert [row["id"] for row in rows] == [listing.id for listing in cheapest]
    # Each row at its actual fee-inclusive price: 10.00 -> 10.50, 10.50 -> 11.03, 11.00 -> 11.55.
    assert [row["offer"]["price"] for row in rows] == [
        Decimal("10.50"),
        Decimal("11.03"),
        Decimal("11.55"),
    ]
    assert {row["marketHashName"] for row in rows} == {catalog_item.market_hash_name}
    assert trade["totalPrice"] == Decimal("33.08")
    assert money(route.actor)["locked"] == Decimal("33.08")
    assert money(route.actor)["available"] == Decimal("966.92")
    # The listings above the ceiling (11.43) and beyond the amount (11.42) are still for sale.
    left = set(SandboxListing.objects.values_list("price", flat=True))
    assert left == {Decimal("11.42"), Decimal("11.43")}
    # One trade.updated per bound row: the trade stays pending while rows bind.
    types = [r.json["type"] for r in hooks.received]
    assert types == ["trade.initiated", "trade.pending"] + ["trade.updated"] * 3
    assert hooks.received[-1].json["trade"]["totalPrice"] == 33.08
    assert wallet_clean()

    # Delivered and settled: the supplier gets the sourcing price, the service the fee.
    supplier, revenue = service_money("supplier"), service_money("revenue")
    for event in ("purchased", "accepted", "hold_ended"):
        ok_data(sandbox_event(route.desk, route.actor, created["id"], event))
    assert service_money("supplier") - supplier == Decimal("31.50")
    assert service_money("revenue") - revenue == Decimal("1.58")
    assert money(route.actor)["locked"] == Decimal("0.00")
    assert money(route.actor)["available"] == Decimal("966.92")
    assert Trade.objects.get(pk=created["id"]).status == "completed"
    assert wallet_clean()


def test_a_partial_fill_fails_the_unfilled_rows_and_refunds_them(
    route, catalog_item, ladder, hooks
):
    created = ok_data(route.buy(itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=6))
    assert created["totalPrice"] == Decimal("72.00")
    trade = Trade.objects.get(pk=created["id"])
    rows = list(trade.items.order_by("position"))
    # Four listings are at or below 11.42: 10.00, 10.50, 11.00, 11.42; 11.43 is not bought.
    assert [row.status for row in rows] == ["pending"] * 4 + ["failed"] * 2
    assert [row.error for row in rows[4:]] == ["NO_LISTING_AT_PRICE"] * 2
    assert [row.price for row in rows[:4]] == [
        Decimal("10.50"),
        Decimal("11.03"),
        Decimal("11.55"),
        Decimal("12.00"),  # 11.42 x 1.05 = 11.991, rounded up to the cent
    ]
    assert trade.status == "pending"
    assert trade.total_price == Decimal("45.08")
    assert money(route.actor)["locked"] == Decimal("45.08")
    assert money(route.actor)["available"] == Decimal("954.92")
    assert [row.locked for row in rows[4:]] == [Decimal("0.00")] * 2
    assert SandboxListing.objects.get().price == Decimal("11.43")
    # Unfilled placeholder rows keep the catalog id and the ceiling.
    shown = route.show(str(trade.id))
    assert shown["items"][5]["id"] == catalog_item.id
    assert shown["items"][5]["status"] == "failed"
    assert shown["items"][5]["error"] == "NO_LISTING_AT_PRICE"
    assert shown["totalPrice"] == Decimal("45.08")
    assert wallet_clean()


def test_a_fill_whose_candidates_were_all_sold_meanwhile_reads_the_market_again(
    route, catalog_item, ladder, hooks, monkeypatch
):
    """Fills running at once (worker threads, machines) read the same cheapest listings: one
    that finds every listing it read sold to the others asks again, and buys what is left."""
    real = SandboxMarketplace.cheapest
    sold: list[str] = []

    def read_then_sold_elsewhere(self, **query):
        listings = real(self, **query)
        if query["limit"] > 1 and not sold:  # the fill's read (creation asks for one)
            listings = listings[:2]
            for listing in listings:
                assert real_purchase(self, listing.id, listing.price)
                sold.append(listing.id)
        return listings

    def real_purchase(market, listing_id, price):
        return market.purchase(listing_id=listing_id, max_price=price, key=f"other-{listing_id}").ok

    monkeypatch.setattr(SandboxMarketplace, "cheapest", read_then_sold_elsewhere)
    created = ok_data(route.buy(itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=1))

    (row,) = Trade.objects.get(pk=created["id"]).items.all()
    third_cheapest = sorted(ladder, key=lambda listing: listing.price)[2]
    assert len(sold) == 2
    assert row.status == "pending"
    assert row.listing_id == third_cheapest.id
    assert row.price == Decimal("11.55")
    assert wallet_clean()


def test_a_fill_with_nothing_left_fails_the_trade_and_refunds_everything(
    desk, alice_funded, catalog_item, hooks, clock_advance
):
    only = make_listing(catalog_item, "10.00")
    hooks.answer = lambda _: (503, b"")  # not approved yet
    route = quick_route(desk, alice_funded, "client")
    created = ok_data(route.buy(itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=2))
    assert money(alice_funded)["locked"] == Decimal("24.00")
    # The only listing sells elsewhere before the merchant approves.
    assert SandboxMarketplace().purchase(listing_id=only.id, max_price=only.price, key="other").ok
    hooks.answer = lambda _: (200, b"{}")
    clock_advance(10)
    event = WebhookEvent.objects.get(is_approval=True)
    desk.run(lambda: webhook_event_deliver(event_id=str(event.pk)))

    trade = Trade.objects.get(pk=created["id"])
    assert trade.status == "failed"
    assert trade.error == "NO_LISTING_AT_PRICE"
    assert trade.total_price == Decimal("0.00")
    assert {row.error for row in trade.items.all()} == {"NO_LISTING_AT_PRICE"}
    assert money(alice_funded)["locked"] == Decimal("0.00")
    assert money(alice_funded)["available"] == Decimal("1000.00")
    assert hooks.received[-1].json["type"] == "trade.failed"
    assert wallet_clean()


def test_each_merchant_backs_its_own_fee_out_of_max_price(
    desk, alice_funded, bob_funded, catalog_item, ladder
):
    """bob's fee is 10 %: maxPrice 12.00 is a sourcing ceiling of 10.90 for him."""
    bob = quick_route(desk, bob_funded, "secure")
    created = ok_data(bob.buy(itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=3))
    trade = Trade.objects.get(pk=created["id"])
    assert trade.quick_sourcing_ceiling == Decimal("10.90")
    rows = list(trade.items.order_by("position"))
    assert [row.sourcing_price for row in rows[:2]] == [Decimal("10.00"), Decimal("10.50")]
    assert [row.price for row in rows[:2]] == [Decimal("11.00"), Decimal("11.55")]
    assert rows[2].status == "failed"
    assert trade.total_price == Decimal("22.55")
    assert money(bob_funded)["locked"] == Decimal("22.55")
    assert money(bob_funded)["available"] == Decimal("977.45")
    # alice's ceiling is 11.42: she still gets the 11.00 and 11.42 listings bob left.
    alice = quick_route(desk, alice_funded, "secure")
    created = ok_data(alice.buy(itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=2))
    prices = [row.price for row in Trade.objects.get(pk=created["id"]).items.order_by("position")]
    assert prices == [Decimal("11.55"), Decimal("12.00")]
    assert money(alice_funded)["locked"] == Decimal("23.55")
    assert wallet_clean()


def test_an_instant_quick_buy_takes_own_stock_only(route, catalog_item, ladder):
    stock = make_listing(catalog_item, "11.20", delivery="instant")
    created = ok_data(
        route.buy(itemId=catalog_item.id, maxPrice=Decimal("12.00"), amount=2, delivery="instant")
    )
    assert {row["offer"]["delivery"] for row in created["items"]} == {"instant"}
    rows = list(Trade.objects.get(pk=created["id"]).items.order_by("position"))
    assert rows[0].listing_id == stock.id
    assert rows[0].price == Decimal("11.76")
    assert rows[1].status == "failed"  # the cheaper standard listings are not own stock
    assert money(route.actor)["locked"] == Decimal("11.76")


def test_a_phase_prices_against_that_phase_only(route, hooks):
    doppler = CatalogItem.objects.create(
        id="730-000009",
        game=730,
        market_hash_name="★ Karambit | Doppler (Factory New)",
        name="★ Karambit | Doppler",
        item_type="Knife",
        rarity="Covert",
        rarity_color="eb4b4b",
        icon_url="https://cdn.sandbox.invalid/k.png",
        reference_price=Decimal("900.00"),
        is_phased=True,
    )

    def phased(price: str, phase: str) -> SandboxListing:
        return SandboxListing.objects.create(
            id=str(uuid.uuid4()),
            item=doppler,
            game=730,
            market_hash_name=doppler.market_hash_name,
            price=Decimal(price),
            delivery="standard",
            phase=phase,
            paint_index=418 if phase == "Phase 1" else 419,
        )

    phased("800.00", "Phase 1")
    wanted = phased("900.00", "Phase 2")
    created = ok_data(
        route.buy(itemId=doppler.id, maxPrice=Decimal("1000.00"), amount=1, phase="Phase 2")
    )
    assert created["items"][0]["phase"] == "Phase 2"
    row = TradeItem.objects.get(trade_id=created["id"])
    assert row.listing_id == wanted.id
    assert row.price == Decimal("945.00")
    assert money(route.actor)["locked"] == Decimal("945.00")


def test_a_max_price_with_fractions_of_a_cent_locks_whole_cents(route, catalog_item, ladder):
    """maxPrice 12.005: the ceiling is still 11.42 and every lock is in whole cents."""
    created = ok_data(route.buy(itemId=catalog_item.id, maxPrice=Decimal("12.005"), amount=3))
    assert created["totalPrice"] == Decimal("36.00")
    assert {row["offer"]["price"] for row in created["items"]} == {Decimal("12.00")}
    trade = Trade.objects.get(pk=created["id"])
    assert trade.quick_sourcing_ceiling == Decimal("11.42")
    assert trade.total_price == Decimal("33.08")
    assert money(route.actor)["locked"] == Decimal("33.08")
    assert money(route.actor)["available"] == Decimal("966.92")
    assert wallet_clean()
