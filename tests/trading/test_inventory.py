"""GET /client/inventory (contract 4.13) and GET /secure/inventory (decisions section 6)."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from core.market_version import market_version_bump
from sandbox.models import SandboxBot, SandboxBotState, SandboxPlatformUser
from tests.factories import assert_error, platform_id, trade_url
from tests.trading.factories import CatalogItemFactory
from tests.trading.helpers import Caller, client_token, names, ok
from trading.models import CatalogItem, GameSettings

pytestmark = pytest.mark.django_db

D = Decimal
USERS = "/sandbox/platform/users"
AK = "AK-47 | Redline (Field-Tested)"
KARAMBIT = "Karambit | Doppler (Factory New)"
UNKNOWN = "Souvenir Nothing (Field-Tested)"

# The inventory of the platform user behind partner 1, in the platform's order.
ASSETS = [
    {"assetId": "1001", "marketHashName": AK, "wear": D("0.2512345678")},
    {"assetId": "1002", "marketHashName": AK, "tradable": False},
    {"assetId": "1003", "marketHashName": KARAMBIT, "phase": "Ruby", "wear": D("0.01")},
    {"assetId": "1004", "marketHashName": KARAMBIT, "phase": "Phase 1"},
    {"assetId": "1005", "marketHashName": "Glock-18 | Fade (Factory New)"},  # stock full
    {"assetId": "1006", "marketHashName": "P250 | Sand Dune (Battle-Scarred)"},  # below 0.10
    {"assetId": "1007", "marketHashName": "Nova | Predator (Field-Tested)"},  # exactly 0.10
    {"assetId": "1008", "marketHashName": UNKNOWN},
    {"assetId": "1009", "marketHashName": "AWP | Asiimov (Field-Tested)"},
    {"assetId": "2001", "marketHashName": "Blackout Garage Door", "game": 252490, "amount": 250},
    {"assetId": "2002", "marketHashName": "Tempered AK47", "game": 252490},
    {"assetId": "2003", "marketHashName": "Whiteout Hoodie", "game": 252490, "tradable": False},
    {"assetId": "2004", "marketHashName": "Mystery Crate", "game": 252490, "amount": 3},
]
# (assetId, accepted, alice's price, bob's price) of the first game, in platform order.
OFFERS_730 = [
    ("1001", True, D("9.00"), D("8.00")),
    ("1002", False, D("0"), D("0")),
    ("1003", True, D("1800.00"), D("1600.00")),
    ("1004", True, D("405.00"), D("360.00")),
    ("1005", False, D("0"), D("0")),
    ("1006", False, D("0"), D("0")),
    ("1007", True, D("0.10"), D("0")),
    ("1008", False, D("0"), D("0")),
    ("1009", True, D("45.00"), D("40.00")),
]


def _json(value):
    if isinstance(value, Decimal):
        return float(value)
    return value


def configure(api, actor, partner=1, **fields):
    fields = {
        k: ([{kk: _json(vv) for kk, vv in a.items()} for a in v] if k == "inventory" else v)
        for k, v in fields.items()
    }
    response = api.post(
        USERS, {"platformId": platform_id(partner), **fields}, format="json", headers=actor.headers
    )
    ok(response)


@pytest.fixture
def stocked(api, alice, bob, world):
    """Partner 1 holds ASSETS (in alice's and in bob's world)."""
    configure(api, alice, inventory=ASSETS)
    configure(api, bob, inventory=ASSETS)
    return world


def params_for(who: Caller, params):
    if who.kind == "secure":
        params.setdefault("tradeUrl", trade_url(1))
    return params


def inventory(who: Caller, **params):
    return ok(who.get("/inventory", params_for(who, params)))


def refused(who: Caller, *fields, **params):
    error = assert_error(
        who.get("/inventory", params_for(who, params)), 400, 1001, "VALIDATION_FAILED"
    )
    assert set(error["fields"]) == set(fields), error


def offers(rows):
    return [(r["assetId"], r["offer"]["accepted"], r["offer"]["price"]) for r in rows]


class TestOffers:
    def test_first_game_offers_per_merchant(self, as_alice, as_bob, stocked):
        assert offers(inventory(as_alice)["inventory"]) == [
            (a, ok_, p) for a, ok_, p, _ in OFFERS_730
        ]
        assert offers(inventory(as_bob)["inventory"]) == [
            (a, ok_ and b > 0, b) for a, ok_, _, b in OFFERS_730
        ]

    def test_item_shape(self, as_alice, stocked):
        rows = {r["assetId"]: r for r in inventory(as_alice)["inventory"]}
        assert rows["1001"] == {
            "id": "730_1001",
            "assetId": "1001",
            "name": "AK-47 | Redline",
            "marketHashName": AK,
            "type": "Rifle",
            "iconUrl": "https://cdn.sandbox.invalid/icons/730-000100.png",
            "appid": 730,
            "rarity": "Classified",
            "color": "d32ce6",
            "tradable": True,
            "amount": 1,
            "marketPrice": D("10.01"),
            "offer": {"price": D("9.00"), "accepted": True},
            "exterior": "Field-Tested",
            "wear": "0.2512345678",
            "stickers": [],
        }
        assert rows["1002"]["tradable"] is False
        assert rows["1002"]["offer"] == {"price": D("0"), "accepted": False}
        assert rows["1003"]["doppler"] == {"name": "Ruby", "paintIndex": 415}
        # Phased: the market quote is the phase's own reference, the one the offer comes from.
        assert (rows["1003"]["marketPrice"], rows["1003"]["offer"]["price"]) == (
            D("2000.00"),
            D("1800.00"),
        )
        assert rows["1004"]["marketPrice"] == D("450.00")
        assert rows["1004"]["doppler"] == {"name": "Phase 1", "paintIndex": 418}
        assert "doppler" not in rows["1001"]

    def test_unknown_item_is_not_accepted_with_price_0(self, as_alice, stocked):
        unknown = next(r for r in inventory(as_alice)["inventory"] if r["assetId"] == "1008")
        assert unknown == {
            "id": "730_1008",
            "assetId": "1008",
            "name": UNKNOWN,
            "marketHashName": UNKNOWN,
            "appid": 730,
            "tradable": True,
            "amount": 1,
            "marketPrice": D("0"),
            "offer": {"price": D("0"), "accepted": False},
            "stickers": [],
        }

    def test_second_game_stacks_and_max_amount(self, as_alice, as_bob, stocked):
        rows = inventory(as_alice, game="252490")["inventory"]
        assert [(r["id"], r["amount"], r["offer"], r["marketPrice"]) for r in rows] == [
            ("252490_2001", 250, {"price": D("0.90"), "accepted": True, "maxAmount": 1}, D("0.90")),
            ("252490_2002", 1, {"price": D("18.00"), "accepted": True, "maxAmount": 1}, D("18.00")),
            ("252490_2003", 1, {"price": D("0"), "accepted": False, "maxAmount": 0}, D("0")),
            ("252490_2004", 3, {"price": D("0"), "accepted": False, "maxAmount": 0}, D("0")),
        ]
        assert all(r["appid"] == 252490 and "stickers" not in r for r in rows)
        bob_rows = inventory(as_bob, game="252490")["inventory"]
        assert [r["offer"]["price"] for r in bob_rows] == [D("0.80"), D("16.00"), D("0"), D("0")]

    def test_first_game_has_no_max_amount(self, as_alice, stocked):
        assert all("maxAmount" not in r["offer"] for r in inventory(as_alice)["inventory"])

    def test_phase_without_its_own_reference_prices_from_the_item(
        self, api, alice, as_alice, world
    ):
        configure(
            api,
            alice,
            inventory=[
                {"assetId": "1", "marketHashName": KARAMBIT, "phase": "Emerald"},
                {"assetId": "2", "marketHashName": KARAMBIT, "phase": "Phase 2"},
            ],
        )
        world.karambit.phase_prices.filter(phase="Phase 2").update(reference_price=D("0"))
        emerald, zero = inventory(as_alice)["inventory"]
        assert (emerald["marketPrice"], emerald["offer"]) == (
            D("500.00"),
            {"price": D("450.00"), "accepted": True},
        )
        assert "doppler" not in emerald  # the catalog knows no Emerald of this item
        assert (zero["marketPrice"], zero["offer"]) == (
            D("0"),
            {"price": D("0"), "accepted": False},
        )
        assert zero["doppler"] == {"name": "Phase 2", "paintIndex": 419}

    def test_prices_follow_the_catalog(self, as_alice, stocked):
        inventory(as_alice)
        # A catalog change is a market change: whoever makes it bumps the price version (the
        # admin does), and cached offers follow.
        CatalogItem.objects.filter(pk="730-000200").update(reference_price=D("60.00"))
        market_version_bump()
        awp = next(r for r in inventory(as_alice)["inventory"] if r["assetId"] == "1009")
        assert awp["offer"]["price"] == D("54.00")

    def test_games_are_separate(self, as_alice, stocked):
        assert inventory(as_alice)["count"] == 9
        assert inventory(as_alice, game="252490")["count"] == 4

    @pytest.mark.parametrize("game", ["440", "0", "abc"])
    def test_bad_game_is_refused(self, as_alice, stocked, game):
        refused(as_alice, "game", game=game)

    def test_unconfigured_user_has_a_generated_inventory(self, api, alice, world):
        who = Caller(api, alice, "client", {"Authorization": client_token(api, alice, 4242)})
        first = inventory(who)
        assert first["count"] >= 8
        assert inventory(who, refresh="true")["inventory"] == first["inventory"]


class TestFilters:
    def test_accepted_only_is_applied_before_pagination(self, as_alice, stocked):
        page = inventory(as_alice, acceptedOnly="true", limit="2")
        assert page["count"] == 5
        assert [r["assetId"] for r in page["inventory"]] == ["1001", "1003"]
        page = inventory(as_alice, acceptedOnly="true", limit="2", page="3")
        assert [r["assetId"] for r in page["inventory"]] == ["1009"]
        assert all(
            r["offer"]["accepted"] for r in inventory(as_alice, acceptedOnly="true")["inventory"]
        )

    def test_accepted_only_depends_on_the_merchant(self, as_bob, stocked):
        assert inventory(as_bob, acceptedOnly="true")["count"] == 4  # the Nova is 0.09 for bob

    def test_accepted_only_combines_with_search_and_price(self, as_alice, stocked):
        page = inventory(as_alice, acceptedOnly="true", search="redline")
        assert (page["count"], [r["assetId"] for r in page["inventory"]]) == (1, ["1001"])
        page = inventory(as_alice, acceptedOnly="true", maxPrice="0")
        assert page == {**page, "count": 0, "inventory": []}
        assert inventory(as_alice, maxPrice="0")["count"] == 4  # not accepted: price 0

    @pytest.mark.parametrize("search", ["redline", "REDLINE", "47 | red"])
    def test_search_is_a_case_insensitive_substring(self, as_alice, stocked, search):
        page = inventory(as_alice, search=search)
        assert page["count"] == 2
        assert set(names(page["inventory"])) == {AK}

    def test_search_is_at_most_100_characters(self, as_alice, stocked):
        assert inventory(as_alice, search="x" * 100)["count"] == 0
        refused(as_alice, "search", search="x" * 101)

    def test_price_bounds_are_on_the_offer_price_inclusive(self, as_alice, as_bob, stocked):
        page = inventory(as_alice, minPrice="9.00", maxPrice="405.00", sort="priceAsc")
        assert [r["offer"]["price"] for r in page["inventory"]] == [
            D("9.00"),
            D("45.00"),
            D("405.00"),
        ]
        assert page["count"] == 3
        assert inventory(as_alice, minPrice="9.01", maxPrice="44.99")["count"] == 0
        # bob's offers differ: 8.00 and 40.00 and 360.00 are his in that range.
        assert [
            r["offer"]["price"]
            for r in inventory(as_bob, minPrice="8.00", maxPrice="360.00", sort="priceAsc")[
                "inventory"
            ]
        ] == [D("8.00"), D("40.00"), D("360.00")]

    def test_min_above_max_is_an_empty_range_as_on_the_market(self, as_alice, stocked):
        page = inventory(as_alice, minPrice="2", maxPrice="1")

        assert page["inventory"] == []
        assert page["count"] == 0

    def test_a_bound_may_have_any_decimals(self, as_alice, stocked):
        everything = inventory(as_alice)["inventory"]
        above = inventory(as_alice, minPrice="8.001")["inventory"]

        assert [r for r in everything if r["offer"]["price"] > D("8.001")] == above
        assert 0 < len(above) < len(everything)

    @pytest.mark.parametrize("value", ["-1", "abc", "1.", " 1", "1_0"])
    def test_bad_price_is_refused(self, as_alice, stocked, value):
        refused(as_alice, "minPrice", minPrice=value)


class TestSort:
    def test_price_ascending_and_descending(self, as_alice, stocked):
        ascending = inventory(as_alice, sort="priceAsc")["inventory"]
        assert [r["offer"]["price"] for r in ascending] == sorted(
            r["offer"]["price"] for r in ascending
        )
        assert ascending[-1]["assetId"] == "1003"
        descending = inventory(as_alice, sort="priceDesc")["inventory"]
        assert [r["assetId"] for r in descending[:4]] == ["1003", "1004", "1009", "1001"]
        assert [r["offer"]["price"] for r in descending] == sorted(
            (r["offer"]["price"] for r in ascending), reverse=True
        )

    def test_name_ascending_and_descending(self, as_alice, stocked):
        ascending = names(inventory(as_alice, sort="nameAsc")["inventory"])
        assert ascending == sorted(ascending, key=str.lower)
        assert ascending[0] == AK
        assert ascending[-1] == UNKNOWN
        descending = names(inventory(as_alice, sort="nameDesc")["inventory"])
        assert descending == sorted(ascending, key=str.lower, reverse=True)

    def test_relevance_puts_accepted_and_valuable_first(self, as_alice, stocked):
        rows = inventory(as_alice, sort="relevance")["inventory"]
        assert [r["assetId"] for r in rows[:5]] == ["1003", "1004", "1009", "1001", "1007"]
        assert not any(r["offer"]["accepted"] for r in rows[5:])

    @pytest.mark.parametrize("sort", ["bogus", "PRICEASC", "", "x" * 40, "price_asc"])
    def test_unknown_sort_is_ignored(self, as_alice, stocked, sort):
        page = inventory(as_alice, sort=sort)
        assert [r["assetId"] for r in page["inventory"]] == [a for a, *_ in OFFERS_730]

    def test_sort_applies_before_pagination(self, as_alice, stocked):
        page = inventory(as_alice, sort="priceDesc", limit="1", page="2")
        assert [r["assetId"] for r in page["inventory"]] == ["1004"]
        assert page["count"] == 9


class TestPagination:
    def test_default_limit_is_50(self, api, alice, world):
        configure(
            api, alice, inventory=[{"marketHashName": AK, "assetId": str(n)} for n in range(60)]
        )
        who = Caller(api, alice, "secure", alice.headers)
        page = inventory(who)
        assert (page["count"], len(page["inventory"])) == (60, 50)
        assert len(inventory(who, page="2")["inventory"]) == 10
        assert len(inventory(who, limit="-1")["inventory"]) == 60

    def test_limit_minus_one_returns_everything(self, as_alice, stocked):
        page = inventory(as_alice, limit="-1", page="5")
        assert (page["count"], len(page["inventory"])) == (9, 9)

    def test_pages(self, as_alice, stocked):
        assert [r["assetId"] for r in inventory(as_alice, limit="4", page="2")["inventory"]] == [
            "1005",
            "1006",
            "1007",
            "1008",
        ]
        assert inventory(as_alice, limit="4", page="4")["inventory"] == []

    @pytest.mark.parametrize(
        ("param", "value"),
        [("limit", "0"), ("limit", "-2"), ("limit", "1001"), ("limit", "x"), ("page", "0")],
    )
    def test_bad_paging_is_refused(self, as_alice, stocked, param, value):
        refused(as_alice, param, **{param: value})

    @pytest.mark.parametrize("param", ["refresh", "acceptedOnly"])
    @pytest.mark.parametrize("value", ["1", "yes", "True", "TRUE", "0", "no"])
    def test_booleans_are_only_true_or_false(self, as_alice, stocked, param, value):
        refused(as_alice, param, **{param: value})

    @pytest.mark.parametrize("value", ["true", "false"])
    def test_true_and_false_are_accepted(self, as_alice, stocked, value):
        assert inventory(as_alice, refresh=value, acceptedOnly=value)["count"] in (5, 9)


class TestCache:
    def test_fifteen_minutes_of_service_clock(self, as_alice, stocked, advance_clock):
        first = inventory(as_alice)
        SandboxPlatformUser.objects.filter(platform_id=platform_id(1)).update(
            inventory=[{"marketHashName": AK, "assetId": "9001"}]
        )
        assert inventory(as_alice) == first
        advance_clock(14 * 60)
        assert inventory(as_alice)["inventory"] == first["inventory"]
        advance_clock(60)
        fresh = inventory(as_alice)
        assert [r["assetId"] for r in fresh["inventory"]] == ["9001"]
        assert fresh["updatedAt"] > first["updatedAt"]

    def test_refresh_bypasses_the_cache(self, as_alice, stocked):
        first = inventory(as_alice)
        SandboxPlatformUser.objects.filter(platform_id=platform_id(1)).update(
            inventory=[{"marketHashName": AK, "assetId": "9001"}]
        )
        assert inventory(as_alice, refresh="false") == first
        fresh = inventory(as_alice, refresh="true")
        assert [r["assetId"] for r in fresh["inventory"]] == ["9001"]
        assert inventory(as_alice)["inventory"] == fresh["inventory"]  # and is cached again

    def test_cached_user_state_is_not_rechecked(self, as_alice, stocked):
        inventory(as_alice)
        SandboxPlatformUser.objects.filter(platform_id=platform_id(1)).update(fault="unavailable")
        assert inventory(as_alice)["count"] == 9
        response = as_alice.get("/inventory", params_for(as_alice, {"refresh": "true"}))
        assert_error(response, 424, 31, "PLATFORM_UNAVAILABLE")

    def test_updated_at_is_the_fetch_time_on_the_service_clock(
        self, as_alice, stocked, advance_clock
    ):
        advance_clock(3600)
        before = datetime.now(UTC) + timedelta(seconds=3600)
        updated = inventory(as_alice, refresh="true")["updatedAt"]
        after = datetime.now(UTC) + timedelta(seconds=3600)
        assert updated.endswith("Z")
        assert len(updated) == len("2026-01-01T00:00:00.000Z")
        moment = datetime.fromisoformat(updated.replace("Z", "+00:00"))
        assert before - timedelta(milliseconds=1) <= moment <= after

    def test_the_sandbox_helper_forgets_the_cached_inventory(self, api, alice, as_alice, stocked):
        inventory(as_alice)
        configure(api, alice, inventory=[{"marketHashName": AK, "assetId": "9002"}])
        assert [r["assetId"] for r in inventory(as_alice)["inventory"]] == ["9002"]


class TestCollateral:
    @pytest.mark.parametrize(
        ("client_data", "expected"),
        [
            ({}, D("10.00")),  # min(50, 10 + 0)
            (
                {"kycLevel": 3, "fiatDeposits": True, "cryptoDeposits": True, "totalWager": 1000},
                D("120.00"),
            ),
            ({"kycLevel": 3, "fiatDeposits": True, "totalWager": 1000}, D("75.00")),
            ({"kycLevel": 0, "totalWager": 10000}, D("50.00")),  # capped
            ({"kycLevel": 1, "totalWager": 10000}, D("200.00")),
            ({"kycLevel": 2, "totalWager": 100000}, D("1000.00")),
            ({"kycLevel": 3, "totalWager": 1000000}, D("5000.00")),
        ],
    )
    def test_limit_from_client_data(self, api, alice, stocked, client_data, expected):
        token = client_token(api, alice, 1, **client_data)
        who = Caller(api, alice, "client", {"Authorization": f"Bearer {token}"})
        assert inventory(who)["collateral"] == expected

    @pytest.mark.parametrize(
        ("days", "expected"), [(400, D("132.00")), (100, D("126.00")), (30, D("120.00"))]
    )
    def test_account_age(self, api, alice, stocked, days, expected):
        registered = (datetime.now(UTC) - timedelta(days=days)).isoformat().replace("+00:00", "Z")
        token = client_token(
            api,
            alice,
            1,
            kycLevel=3,
            fiatDeposits=True,
            cryptoDeposits=True,
            totalWager=1000,
            registrationDate=registered,
        )
        who = Caller(api, alice, "client", {"Authorization": f"Bearer {token}"})
        assert inventory(who)["collateral"] == expected

    def test_account_age_is_real_time(self, api, alice, stocked, clock_advance):
        """The platform account's age, which raises instant-deposit collateral, is measured in
        real time: another merchant moving the sandbox clock 30 days raises nothing."""
        registered = (datetime.now(UTC) - timedelta(days=80)).isoformat().replace("+00:00", "Z")
        data = {"kycLevel": 3, "fiatDeposits": True, "cryptoDeposits": True, "totalWager": 1000}
        clock_advance(30 * 24 * 3600)
        token = client_token(api, alice, 1, registrationDate=registered, **data)
        who = Caller(api, alice, "client", {"Authorization": f"Bearer {token}"})
        assert inventory(who)["collateral"] == D("120.00")  # under 90 days: no multiplier

    def test_per_merchant_policy(self, api, alice, bob, stocked):
        bob.merchant.risk_policy = {"base": 20, "both_deposits_kyc3_multiplier": "3"}
        bob.merchant.save()
        data = {"kycLevel": 3, "fiatDeposits": True, "cryptoDeposits": True, "totalWager": 1000}
        for actor, expected in ((alice, D("120.00")), (bob, D("210.00"))):
            token = client_token(api, actor, 1, **data)
            who = Caller(api, actor, "client", {"Authorization": f"Bearer {token}"})
            assert inventory(who)["collateral"] == expected

    def test_latest_authentication_counts(self, api, alice, stocked):
        old = client_token(
            api, alice, 1, kycLevel=3, fiatDeposits=True, cryptoDeposits=True, totalWager=1000
        )
        client_token(api, alice, 1)  # re-authenticated without data: the defaults
        who = Caller(api, alice, "client", {"Authorization": f"Bearer {old}"})
        assert inventory(who)["collateral"] == D("10.00")

    def test_secure_inventory_has_no_collateral(self, api, alice, stocked):
        client_token(
            api, alice, 1, kycLevel=3, fiatDeposits=True, cryptoDeposits=True, totalWager=1000
        )
        page = inventory(Caller(api, alice, "secure", alice.headers))
        assert page["collateral"] == D("0")
        assert page["count"] == 9


class TestSecureInventory:
    def test_same_inventory_as_the_client_sees(self, api, alice, stocked):
        secure = inventory(Caller(api, alice, "secure", alice.headers))
        token = client_token(api, alice, 1)
        client = inventory(Caller(api, alice, "client", {"Authorization": token}))
        assert secure["inventory"] == client["inventory"]
        assert secure["count"] == client["count"]

    def test_trade_url_names_the_owner(self, api, alice, stocked):
        who = Caller(api, alice, "secure", alice.headers)
        configure(api, alice, partner=2, inventory=[{"marketHashName": AK, "assetId": "5"}])
        page = inventory(who, tradeUrl=trade_url(2))
        assert [r["assetId"] for r in page["inventory"]] == ["5"]

    def test_client_reads_only_its_own_inventory(self, api, alice, stocked):
        configure(api, alice, partner=2, inventory=[{"marketHashName": AK, "assetId": "5"}])
        who = Caller(
            api, alice, "client", {"Authorization": f"Bearer {client_token(api, alice, 1)}"}
        )
        page = inventory(who, tradeUrl=trade_url(2))  # not a parameter of /client/inventory
        assert page["count"] == 9

    @pytest.mark.parametrize(
        "url",
        [
            None,
            "",
            "https://evil.com/tradeoffer/new/?partner=1&token=Ab3_x-Z9",
            "https://steamcommunity.com/tradeoffer/new/?partner=1&token=short",
            "https://steamcommunity.com/tradeoffer/new/?partner=12345678901&token=Ab3_x-Z9",
        ],
    )
    def test_trade_url_is_required_and_valid(self, api, alice, stocked, url):
        params = {} if url is None else {"tradeUrl": url}
        response = api.get("/secure/inventory", params, headers=alice.headers)
        error = assert_error(response, 400, 1001, "VALIDATION_FAILED")
        assert set(error["fields"]) == {"tradeUrl"}


class TestErrors:
    @pytest.mark.parametrize(
        ("config", "status", "code", "key"),
        [
            ({"fault": "error"}, 424, 3, "INVENTORY_FETCH_FAILED"),
            ({"tradeUrlState": 8}, 424, 3, "INVENTORY_FETCH_FAILED"),
            ({"tradeUrlState": 4}, 400, 7, "USER_NOT_TRADEABLE"),
            ({"economyBan": "banned"}, 400, 7, "USER_NOT_TRADEABLE"),
            ({"tradeUrlState": 9}, 400, 7, "USER_NOT_TRADEABLE"),
            ({"tradeUrlState": 5}, 400, 30, "INVENTORY_PRIVATE"),
            ({"inventoryPrivate": True}, 400, 30, "INVENTORY_PRIVATE"),
            ({"fault": "unavailable"}, 424, 31, "PLATFORM_UNAVAILABLE"),
            ({"tradeUrlState": 10}, 424, 31, "PLATFORM_UNAVAILABLE"),
            ({"fault": "rate_limited"}, 424, 33, "PLATFORM_RATE_LIMITED"),
            ({"tradeUrlState": 7}, 404, 1310, "USER_NOT_FOUND"),
        ],
    )
    def test_platform_answers(self, api, alice, as_alice, world, config, status, code, key):
        configure(api, alice, inventory=ASSETS, **config)
        for game in ("730", "252490"):
            response = as_alice.get("/inventory", params_for(as_alice, {"game": game}))
            assert_error(response, status, code, key)
        # Nothing was cached: once the platform answers again, so does the inventory.
        configure(api, alice, inventory=ASSETS)
        assert inventory(as_alice)["count"] == 9

    @pytest.mark.parametrize(
        "config", [{"tradeUrlState": 2}, {"tradeUrlState": 3}, {"gameBans": 4}]
    )
    def test_tradeable_states_load(self, api, alice, as_alice, world, config):
        configure(api, alice, inventory=ASSETS, **config)
        assert inventory(as_alice)["count"] == 9

    def test_degraded_fleet(self, api, alice, as_alice, stocked):
        SandboxBot.objects.create(
            name="Bot Two", avatar="https://x.invalid/2.png", platform_id="76561199100088888"
        )
        response = api.post(
            "/sandbox/bots", {"status": "degraded"}, format="json", headers=alice.headers
        )
        assert {b["status"] for b in ok(response)["bots"]} == {"degraded"}
        response = as_alice.get("/inventory", params_for(as_alice, {}))
        assert_error(response, 503, 1011, "FLEET_DEGRADED")
        assert response["Retry-After"] == "30"

    def test_offline_fleet(self, api, alice, as_alice, stocked):
        ok(api.post("/sandbox/bots", {"status": "offline"}, format="json", headers=alice.headers))
        response = as_alice.get("/inventory", params_for(as_alice, {}))
        assert_error(response, 503, 1010, "NO_BOTS_AVAILABLE")
        ok(api.post("/sandbox/bots", {"status": "online"}, format="json", headers=alice.headers))
        assert inventory(as_alice)["count"] == 9

    def test_one_online_bot_is_enough(self, alice, as_alice, stocked):
        down = SandboxBot.objects.create(
            name="Bot Down", avatar="https://x.invalid/3.png", platform_id="76561199100077777"
        )
        SandboxBotState.objects.create(merchant=alice.merchant, bot=down, status="offline")
        assert inventory(as_alice)["count"] == 9

    def test_no_bots_at_all(self, as_alice, stocked):
        SandboxBot.objects.all().delete()
        assert_error(
            as_alice.get("/inventory", params_for(as_alice, {})), 503, 1010, "NO_BOTS_AVAILABLE"
        )

    @pytest.mark.parametrize(("paused", "other"), [(730, 252490), (252490, 730)])
    def test_paused_game(self, as_alice, stocked, paused, other):
        GameSettings.objects.update_or_create(game=paused, defaults={"deposits_paused": True})
        response = as_alice.get("/inventory", params_for(as_alice, {"game": str(paused)}))
        assert_error(response, 503, 1014, "DEPOSITS_PAUSED")
        assert inventory(as_alice, game=str(other))["count"] > 0

    def test_first_game_without_reference_prices(self, as_alice, stocked):
        CatalogItem.objects.filter(game=730).update(reference_price=D("0"))
        response = as_alice.get("/inventory", params_for(as_alice, {}))
        assert_error(response, 503, 1014, "DEPOSITS_PAUSED")
        assert inventory(as_alice, game="252490")["count"] == 4
        CatalogItemFactory(reference_price=D("0.01"))
        assert inventory(as_alice)["count"] == 9

    def test_first_game_with_no_catalog_at_all(self, api, alice, as_alice, bot):
        configure(api, alice, inventory=[{"marketHashName": AK}])
        assert_error(
            as_alice.get("/inventory", params_for(as_alice, {})), 503, 1014, "DEPOSITS_PAUSED"
        )


def test_a_client_query_is_parsed_once_and_a_refused_one_every_time(
    api, alice, bob, stocked, monkeypatch
):
    from core.api import views
    from tests.trading.helpers import caller
    from trading.accounts.inputs import InventoryQueryIn

    parsed: list[str] = []
    parse = views.parse

    def counting(serializer_class, data, **kwargs):  # type: ignore[no-untyped-def]
        if serializer_class is InventoryQueryIn:
            parsed.append(data.urlencode())
        return parse(serializer_class, data, **kwargs)

    monkeypatch.setattr(views, "parse", counting)
    monkeypatch.setattr(views, "_KEPT_QUERIES", {})
    as_alice, as_bob = caller(api, alice, "client"), caller(api, bob, "client")
    first = inventory(as_alice, limit=2, sort="priceDesc")
    assert inventory(as_bob, limit=2, sort="priceDesc")["inventory"]  # the same query, bob's page
    assert inventory(as_alice, limit=2, sort="priceDesc") == first
    assert len(first["inventory"]) == 2
    assert len(inventory(as_alice, limit=1, sort="priceDesc")["inventory"]) == 1
    for _ in range(2):
        refused(as_alice, "limit", limit=0)
        refused(as_alice, "limit", limit=[1, 2])
    # A repeated parameter is refused before the serializer runs.
    assert parsed == ["limit=2&sort=priceDesc", "limit=1&sort=priceDesc", "limit=0", "limit=0"]
