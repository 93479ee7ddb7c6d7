"""GET /secure/market and GET /client/market (contract 4.4): every test runs through both."""

import uuid
from decimal import Decimal

import pytest

from tests.factories import assert_error
from tests.trading.factories import RUST, CatalogItemFactory, SandboxListingFactory
from tests.trading.helpers import names, ok, prices
from trading.marketplace import listing_table

pytestmark = pytest.mark.django_db

D = Decimal
AK = "AK-47 | Redline (Field-Tested)"
AWP = "AWP | Asiimov (Field-Tested)"
GLOCK = "Glock-18 | Fade (Factory New)"
KARAMBIT = "Karambit | Doppler (Factory New)"
NOVA = "Nova | Predator (Field-Tested)"
P250 = "P250 | Sand Dune (Battle-Scarred)"


def market(who, **params):
    return ok(who.get("/market", params))


def refused(who, *fields, **params):
    error = assert_error(who.get("/market", params), 400, 1001, "VALIDATION_FAILED")
    assert set(error["fields"]) == set(fields), error
    return error


class TestListingShapes:
    def test_instant_listing_of_the_first_game(self, as_alice, world):
        items = market(as_alice, search="redline", sort="priceAsc")["items"]
        assert items[1] == {
            "id": world.ak_instant.id,
            "name": "AK-47 | Redline",
            "marketHashName": AK,
            "type": "Rifle",
            "iconUrl": "https://cdn.sandbox.invalid/icons/730-000100.png",
            "appid": 730,
            "rarity": "Classified",
            "color": "d32ce6",
            "tradable": True,
            "amount": 1,
            "marketPrice": D("10.01"),  # first game: the reference quote
            "offer": {"price": D("11.57"), "reference": "730-000100", "delivery": "instant"},
            "exterior": "Field-Tested",
            "wear": "0.2512345678",
            "paintSeed": 321,
            "stickers": [
                {
                    "name": "Sticker | Natus Vincere | Katowice 2014",
                    "marketHashName": "Sticker | Natus Vincere | Katowice 2014",
                    "slot": 0,
                    "wear": D("0.12"),
                    "iconUrl": "https://cdn.sandbox.invalid/icons/extras/navi.png",
                }
            ],
            "charm": {
                "name": "Charm | Lil' Squirt",
                "marketHashName": "Charm | Lil' Squirt",
                "iconUrl": "https://cdn.sandbox.invalid/icons/extras/squirt.png",
            },
            "propId": "4455667788",
            "previewToken": "a1b2c3d4",
            "botInfo": {
                "name": "Bot Atlas",
                "avatar": world.bot.avatar,
                "platformId": "76561199100099999",
            },
        }
        assert str(uuid.UUID(items[1]["id"])) == items[1]["id"]

    def test_standard_listing_has_no_bot_and_no_preview(self, as_alice, world):
        first = market(as_alice, search="redline", sort="priceAsc")["items"][0]
        assert first["offer"] == {
            "price": D("10.00"),
            "reference": "730-000100",
            "delivery": "standard",
        }
        assert first["wear"] == "0.2"
        assert first["paintSeed"] == 7
        assert first["stickers"] == []
        for absent in ("botInfo", "previewToken", "propId", "charm", "doppler"):
            assert absent not in first

    def test_phased_listing_carries_doppler(self, as_alice, world):
        items = market(as_alice, search="doppler", sort="priceAsc")["items"]
        assert [(i["doppler"], i["offer"]["delivery"]) for i in items] == [
            ({"name": "Phase 2", "paintIndex": 419}, "standard"),
            ({"name": "Ruby", "paintIndex": 415}, "standard"),
            ({"name": "Ruby", "paintIndex": 415}, "instant"),
        ]
        assert [i["wear"] for i in items] == ["0.01", "0.02", "0.03"]
        # A phased listing's market quote is its phase's reference price.
        assert [i["marketPrice"] for i in items] == [D("600.00"), D("2000.00"), D("2000.00")]
        assert items[2]["botInfo"]["platformId"] == "76561199100099999"
        assert items[2]["previewToken"] == "a1b2c3d4"
        non_phased = market(as_alice, search="asiimov")["items"][0]
        assert "doppler" not in non_phased

    def test_second_game_listings(self, as_alice, world):
        page = market(as_alice, game="252490", sort="priceAsc")
        assert page["count"] == 3
        assert names(page["items"]) == ["Blackout Garage Door", "Tempered AK47", "Tempered AK47"]
        door, instant, standard = page["items"]
        assert instant == {
            "id": instant["id"],
            "name": "Tempered AK47",
            "marketHashName": "Tempered AK47",
            "type": "Weapon",
            "iconUrl": "https://cdn.sandbox.invalid/icons/252490-000100.png",
            "appid": 252490,
            "rarity": "Rare",
            "color": "4169e1",
            "tradable": True,
            "amount": 1,
            "marketPrice": D("18.38"),  # second game: the offer price
            "offer": {"price": D("18.38"), "reference": "252490-000100", "delivery": "instant"},
            "botInfo": {
                "name": "Bot Atlas",
                "avatar": world.bot.avatar,
                "platformId": "76561199100099999",
            },
        }
        # Compound ids: the catalog id and a sequence.
        assert instant["id"].startswith("252490-000100-")
        assert standard["id"].startswith("252490-000100-")
        assert standard["offer"]["delivery"] == "standard"
        assert standard["marketPrice"] == standard["offer"]["price"] == D("18.90")
        assert "botInfo" not in standard
        assert door["marketPrice"] == door["offer"]["price"] == D("1.16")

    def test_games_do_not_mix(self, as_alice, world):
        first = market(as_alice)
        assert first["count"] == 10
        assert {i["appid"] for i in first["items"]} == {730}
        assert market(as_alice, game="730") == first
        second = market(as_alice, game="252490")
        assert {i["appid"] for i in second["items"]} == {252490}
        assert market(as_alice, game="252490", search="AK")["count"] == 2

    @pytest.mark.parametrize("game", ["440", "0", "abc", "730.5"])
    def test_other_games_are_refused(self, as_alice, world, game):
        refused(as_alice, "game", game=game)

    def test_bob_pays_his_own_fee(self, as_alice, as_bob, world):
        alice_prices = prices(market(as_alice, sort="priceAsc")["items"])
        bob_prices = prices(market(as_bob, sort="priceAsc")["items"])
        alice_expected = "0.06 0.09 10.00 11.57 12.60 42.00 99.75 577.50 1995.00 2047.50"
        bob_expected = "0.06 0.09 10.48 12.12 13.20 44.00 104.50 605.00 2090.00 2145.00"
        assert alice_prices == [D(p) for p in alice_expected.split()]
        assert bob_prices == [D(p) for p in bob_expected.split()]


class TestSearch:
    @pytest.mark.parametrize(
        "search", ["redline", "REDLINE", "rEdLiNe", "47 | red", "(field-tested)"]
    )
    def test_case_insensitive_substring(self, as_alice, world, search):
        page = market(as_alice, search=search)
        expected = {AK} if "field" not in search else {AK, AWP, NOVA}
        assert set(names(page["items"])) == expected
        assert page["count"] == (3 if "field" not in search else 5)

    def test_no_match(self, as_alice, world):
        assert market(as_alice, search="dragon lore") == {"items": [], "count": 0}

    @pytest.mark.parametrize("search", ["%", "_", "AK%", "A_-47", "\\"])
    def test_wildcards_are_plain_characters(self, as_alice, world, search):
        assert market(as_alice, search=search) == {"items": [], "count": 0}

    def test_search_is_at_most_100_characters(self, as_alice, world):
        assert market(as_alice, search="x" * 100) == {"items": [], "count": 0}
        refused(as_alice, "search", search="x" * 101)

    @pytest.mark.parametrize("plan", ["per-item", "index-walk"])
    def test_relevance_puts_exact_then_prefix_then_popularity(
        self, as_alice, db, monkeypatch, plan
    ):
        if plan == "index-walk":  # the plan for searches matching very many items
            monkeypatch.setattr(listing_table, "LATERAL_MAX_ITEMS", 1)
        for name, popularity in (
            ("M4A1-S | Redline Tribute", 50),
            ("AK-47 | Redline (Field-Tested)", 100),
            ("Redline Keychain", 5),
            ("Redline", 1),
            ("Sticker | Dragon", 1000),
        ):
            item = CatalogItemFactory(market_hash_name=name, popularity=popularity)
            SandboxListingFactory(item=item, price=D("5.00"))
        items = market(as_alice, search="REDLINE")["items"]
        assert names(items) == [
            "Redline",
            "Redline Keychain",
            "AK-47 | Redline (Field-Tested)",
            "M4A1-S | Redline Tribute",
        ]
        # The default sort is relevance.
        assert names(market(as_alice, search="REDLINE", sort="relevance")["items"]) == names(items)


class TestSort:
    def test_relevance_without_search_is_popularity_then_price(self, as_alice, world):
        items = market(as_alice)["items"]
        assert [(i["marketHashName"], i["offer"]["price"]) for i in items] == [
            (AWP, D("42.00")),
            (AK, D("10.00")),
            (AK, D("11.57")),
            (AK, D("12.60")),
            (KARAMBIT, D("577.50")),
            (KARAMBIT, D("1995.00")),
            (KARAMBIT, D("2047.50")),
            (GLOCK, D("99.75")),
            (NOVA, D("0.09")),
            (P250, D("0.06")),
        ]

    def test_price_ascending_and_descending(self, as_alice, world):
        ascending = prices(market(as_alice, sort="priceAsc")["items"])
        descending = prices(market(as_alice, sort="priceDesc")["items"])
        assert ascending == sorted(ascending)
        assert descending == ascending[::-1]
        assert len(set(ascending)) == 10

    def test_name_ascending_and_descending(self, as_alice, world):
        ascending = market(as_alice, sort="nameAsc")["items"]
        assert names(ascending) == [AK] * 3 + [AWP, GLOCK] + [KARAMBIT] * 3 + [NOVA, P250]
        assert prices(ascending)[:3] == [D("10.00"), D("11.57"), D("12.60")]  # cheapest first
        descending = market(as_alice, sort="nameDesc")["items"]
        assert names(descending) == [P250, NOVA] + [KARAMBIT] * 3 + [GLOCK, AWP] + [AK] * 3
        assert sorted(prices(descending)[-3:]) == [D("10.00"), D("11.57"), D("12.60")]

    @pytest.mark.parametrize("sort", ["price", "PRICEASC", "popularity", "name_asc"])
    def test_unknown_sort_is_refused(self, as_alice, world, sort):
        refused(as_alice, "sort", sort=sort)


class TestPriceBounds:
    """Bounds are on the fee-inclusive price: alice pays 5 %, bob 10 %."""

    @pytest.fixture
    def boundary(self, db):
        item = CatalogItemFactory(market_hash_name="Boundary Case")
        for price in ("9.51", "9.52", "9.53"):
            SandboxListingFactory(item=item, price=D(price))
        # alice: 9.99, 10.00, 10.01    bob: 10.47, 10.48, 10.49

    def test_min_price_is_inclusive_to_the_cent(self, as_alice, as_bob, boundary):
        page = market(as_alice, minPrice="10.00", sort="priceAsc")
        assert prices(page["items"]) == [D("10.00"), D("10.01")]
        assert page["count"] == 2
        assert prices(market(as_alice, minPrice="10.01")["items"]) == [D("10.01")]
        assert prices(market(as_alice, minPrice="9.99", sort="priceAsc")["items"]) == [
            D("9.99"),
            D("10.00"),
            D("10.01"),
        ]
        assert prices(market(as_bob, minPrice="10.48", sort="priceAsc")["items"]) == [
            D("10.48"),
            D("10.49"),
        ]

    def test_max_price_is_inclusive_to_the_cent(self, as_alice, as_bob, boundary):
        assert prices(market(as_alice, maxPrice="10.00", sort="priceAsc")["items"]) == [
            D("9.99"),
            D("10.00"),
        ]
        assert prices(market(as_alice, maxPrice="9.99")["items"]) == [D("9.99")]
        assert prices(market(as_bob, maxPrice="10.48", sort="priceAsc")["items"]) == [
            D("10.47"),
            D("10.48"),
        ]
        assert market(as_bob, maxPrice="10.46") == {"items": [], "count": 0}

    def test_equal_bounds_give_the_exact_price(self, as_alice, as_bob, boundary):
        assert prices(market(as_alice, minPrice="10.00", maxPrice="10.00")["items"]) == [D("10.00")]
        assert prices(market(as_bob, minPrice="10.49", maxPrice="10.49")["items"]) == [D("10.49")]
        assert market(as_alice, minPrice="10.02", maxPrice="10.02")["count"] == 0

    def test_bounds_combine_with_search_and_game(self, as_alice, world):
        page = market(as_alice, search="redline", minPrice="11.57", maxPrice="12.59")
        assert prices(page["items"]) == [D("11.57")]
        page = market(as_alice, game="252490", maxPrice="18.38")
        assert prices(page["items"]) == [D("1.16"), D("18.38")] or prices(page["items"]) == [
            D("18.38"),
            D("1.16"),
        ]
        assert page["count"] == 2

    def test_min_above_max_is_an_empty_range(self, as_alice, as_bob, boundary):
        """The document cannot compare two parameters, so this is no refusal: nothing is in
        the range."""
        assert market(as_alice, minPrice="10.01", maxPrice="10.00") == {"items": [], "count": 0}
        assert market(as_bob, minPrice="10.49", maxPrice="10.47") == {"items": [], "count": 0}

    def test_bounds_may_have_more_decimals_than_cents(self, as_alice, boundary):
        assert prices(market(as_alice, minPrice="10.001", sort="priceAsc")["items"]) == [D("10.01")]

    @pytest.mark.parametrize("value", ["-1", "abc", "NaN", "1e", " 1", "0x10"])
    def test_bad_bounds_are_refused(self, as_alice, world, value):
        refused(as_alice, "minPrice", minPrice=value)
        refused(as_alice, "maxPrice", maxPrice=value)


class TestPagination:
    @pytest.fixture
    def many(self, db):
        item = CatalogItemFactory(market_hash_name="Many Listings")
        for n in range(60):
            SandboxListingFactory(item=item, price=D("1.00") + n)

    def test_defaults_are_page_1_of_50(self, as_alice, many):
        page = market(as_alice, sort="priceAsc")
        assert page["count"] == 60
        assert len(page["items"]) == 50
        assert page["items"][0]["offer"]["price"] == D("1.05")
        assert page == market(as_alice, sort="priceAsc", page="1", perPage="50")

    def test_second_page_holds_the_rest(self, as_alice, many):
        page = market(as_alice, sort="priceAsc", page="2")
        assert page["count"] == 60
        assert prices(page["items"]) == [(D("51.00") + n) * D("1.05") for n in range(10)]

    def test_per_page_1_and_1000(self, as_alice, many):
        one = market(as_alice, sort="priceAsc", perPage="1", page="3")
        assert one["count"] == 60
        assert prices(one["items"]) == [D("3.15")]
        assert len(market(as_alice, perPage="1000")["items"]) == 60

    def test_page_past_the_end_is_empty_with_the_count(self, as_alice, many):
        assert market(as_alice, page="4", perPage="20") == {"items": [], "count": 60}

    @pytest.mark.parametrize(
        ("param", "value"),
        [("perPage", "0"), ("perPage", "1001"), ("perPage", "x"), ("page", "0"), ("page", "-1")],
    )
    def test_out_of_range_is_refused(self, as_alice, many, param, value):
        refused(as_alice, param, **{param: value})


def test_second_game_search_by_rust_name(as_alice, world):
    CatalogItemFactory(game=RUST, market_hash_name="Tempered Hoodie")
    page = market(as_alice, game="252490", search="TEMPERED")
    assert set(names(page["items"])) == {"Tempered AK47"}  # an item without listings shows none


@pytest.mark.parametrize("sort", ["relevance", "priceAsc", "priceDesc", "nameAsc", "nameDesc"])
def test_both_search_plans_agree(as_alice, world, monkeypatch, sort):
    """A search matching few items merges per-item lists; one matching many walks the global
    sort index. Both give the same pages."""
    search = " | "  # in every first-game name of the world
    pages = [
        market(as_alice, search=search, sort=sort, perPage="3", page=str(n)) for n in (1, 2, 3, 4)
    ]
    whole = market(as_alice, search=search, sort=sort)
    monkeypatch.setattr(listing_table, "LATERAL_MAX_ITEMS", 0)
    walked = market(as_alice, search=search, sort=sort)
    assert whole == walked
    assert whole["count"] == 10
    assert [i["id"] for p in pages for i in p["items"]] == [i["id"] for i in whole["items"]]
    assert all(p["count"] == 10 for p in pages)
