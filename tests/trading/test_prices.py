"""GET /secure/prices: the price book of contract 2.4 and decisions section 2."""

from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.market_version import market_version_bump
from merchants.callers import callers_changed
from sandbox.models import SandboxListing
from tests.factories import assert_error, make_actor
from tests.trading.factories import SandboxListingFactory
from tests.trading.helpers import ok
from trading.market.rendered import prices
from trading.market.rendered.prices import MAX_AGE

pytestmark = pytest.mark.django_db

PRICES = "/secure/prices"
D = Decimal


def book(api, actor, **params):
    return ok(api.get(PRICES, params, headers=actor.headers))


def by_name(entries):
    return {entry["marketHashName"]: entry for entry in entries}


def money_values(entry):
    """Every USD number of an entry (deposit and withdraw prices, phases included)."""
    withdraw = entry["withdraw"]
    values = [entry["deposit"]]
    values += list(withdraw.values()) if isinstance(withdraw, dict) else [withdraw]
    for phase in entry.get("phases", []):
        values += [phase["deposit"], *phase["withdraw"].values()]
    return [v for v in values if v is not None]


ALICE_730 = [
    {
        "itemId": "730-000100",
        "marketHashName": "AK-47 | Redline (Field-Tested)",
        "accepted": True,
        "deposit": D("9.00"),  # 10.01 x 0.90 = 9.009, rounded down
        "withdraw": {"standard": D("10.00"), "instant": D("11.57")},  # 9.996 and 11.5605, up
    },
    {
        "itemId": "730-000200",
        "marketHashName": "AWP | Asiimov (Field-Tested)",
        "accepted": True,
        "deposit": D("45.00"),
        "withdraw": {"standard": D("42.00"), "instant": None},
    },
    {
        "itemId": "730-000400",
        "marketHashName": "Glock-18 | Fade (Factory New)",
        "accepted": False,  # own stock 1 >= stock_limit 1
        "deposit": D("0.00"),
        "withdraw": {"standard": None, "instant": D("99.75")},
    },
    {
        "itemId": "730-000300",
        "marketHashName": "Karambit | Doppler (Factory New)",
        "accepted": True,
        "deposit": D("405.00"),  # the floor: Phase 1
        "withdraw": {"standard": D("577.50"), "instant": D("2047.50")},
        "phases": [
            {
                "phase": "Phase 1",
                "accepted": True,
                "deposit": D("405.00"),
                "withdraw": {"standard": None, "instant": None},
            },
            {
                "phase": "Phase 2",
                "accepted": True,
                "deposit": D("540.00"),
                "withdraw": {"standard": D("577.50"), "instant": None},
            },
            {
                "phase": "Ruby",
                "accepted": True,
                "deposit": D("1800.00"),
                "withdraw": {"standard": D("1995.00"), "instant": D("2047.50")},
            },
        ],
    },
    {
        "itemId": None,  # no listing at all
        "marketHashName": "M4A4 | Howl (Minimal Wear)",
        "accepted": True,
        "deposit": D("2700.00"),
        "withdraw": {"standard": None, "instant": None},
    },
    {
        "itemId": "730-000600",
        "marketHashName": "Nova | Predator (Field-Tested)",
        "accepted": True,  # 0.12 x 0.90 = 0.108 -> 0.10, exactly the floor
        "deposit": D("0.10"),
        "withdraw": {"standard": D("0.09"), "instant": None},  # 0.084 up
    },
    {
        "itemId": "730-000700",
        "marketHashName": "P250 | Sand Dune (Battle-Scarred)",
        "accepted": False,  # 0.11 x 0.90 = 0.099 -> 0.09, below 0.10
        "deposit": D("0.00"),
        "withdraw": {"standard": D("0.06"), "instant": None},  # 0.0525 up
    },
]

BOB_730 = {
    "AK-47 | Redline (Field-Tested)": (True, D("8.00"), D("10.48"), D("12.12")),
    "AWP | Asiimov (Field-Tested)": (True, D("40.00"), D("44.00"), None),
    "Glock-18 | Fade (Factory New)": (False, D("0.00"), None, D("104.50")),
    "Karambit | Doppler (Factory New)": (True, D("360.00"), D("605.00"), D("2145.00")),
    "M4A4 | Howl (Minimal Wear)": (True, D("2400.00"), None, None),
    "Nova | Predator (Field-Tested)": (False, D("0.00"), D("0.09"), None),  # 0.096 -> 0.09
    "P250 | Sand Dune (Battle-Scarred)": (False, D("0.00"), D("0.06"), None),
}


class TestFirstGame:
    def test_alice_book_is_exact(self, api, alice, world):
        assert book(api, alice) == ALICE_730

    def test_every_price_is_in_whole_cents(self, api, alice, bob, world):
        for actor in (alice, bob):
            for entry in book(api, actor):
                for value in money_values(entry):
                    assert value.as_tuple().exponent == -2, (entry, value)

    def test_game_defaults_to_730(self, api, alice, world):
        assert book(api, alice) == book(api, alice, game="730")

    def test_bob_sees_his_own_fee_and_margin(self, api, alice, bob, world):
        book(api, alice)  # alice's book cached first: never served to bob
        entries = by_name(book(api, bob))
        assert list(entries) == [e["marketHashName"] for e in ALICE_730]
        seen = {
            name: (
                e["accepted"],
                e["deposit"],
                e["withdraw"]["standard"],
                e["withdraw"]["instant"],
            )
            for name, e in entries.items()
        }
        assert seen == BOB_730
        ruby = entries["Karambit | Doppler (Factory New)"]["phases"][2]
        assert ruby == {
            "phase": "Ruby",
            "accepted": True,
            "deposit": D("1600.00"),
            "withdraw": {"standard": D("2090.00"), "instant": D("2145.00")},
        }
        # ... and alice still sees hers.
        assert book(api, alice) == ALICE_730

    def test_only_phased_items_carry_phases(self, api, alice, world):
        entries = book(api, alice)
        assert [e["marketHashName"] for e in entries if "phases" in e] == [
            "Karambit | Doppler (Factory New)"
        ]

    def test_phased_item_is_one_entry_with_the_floor_on_top(self, api, bob, world):
        world.karambit.phase_prices.filter(phase="Phase 1").update(reference_price=D("0.05"))
        entry = by_name(book(api, bob))["Karambit | Doppler (Factory New)"]
        # Phase 1 is no longer accepted: the floor is the cheapest accepted phase.
        assert entry["phases"][0] == {
            "phase": "Phase 1",
            "accepted": False,
            "deposit": D("0.00"),
            "withdraw": {"standard": None, "instant": None},
        }
        assert entry["accepted"] is True
        assert entry["deposit"] == D("480.00")  # Phase 2: 600 x 0.80

    def test_stock_below_the_limit_is_accepted(self, api, alice, world):
        world.glock.stock_limit = 2
        world.glock.save()
        entry = by_name(book(api, alice))["Glock-18 | Fade (Factory New)"]
        assert (entry["accepted"], entry["deposit"]) == (True, D("90.00"))

    def test_standard_listings_do_not_count_as_stock(self, api, alice, world):
        world.awp.stock_limit = 1
        world.awp.save()
        SandboxListingFactory(item=world.awp, price=D("41.00"))  # 2 standard listings, no stock
        entry = by_name(book(api, alice))["AWP | Asiimov (Field-Tested)"]
        assert (entry["accepted"], entry["deposit"]) == (True, D("45.00"))

    def test_stock_counts_instant_listings_of_the_item_only(self, api, alice, world):
        world.awp.stock_limit = 1
        world.awp.save()
        SandboxListingFactory(item=world.awp, instant=True, bot=world.bot, price=D("39.00"))
        entries = by_name(book(api, alice))
        assert entries["AWP | Asiimov (Field-Tested)"]["accepted"] is False
        assert entries["AWP | Asiimov (Field-Tested)"]["deposit"] == D("0.00")
        assert entries["AWP | Asiimov (Field-Tested)"]["withdraw"]["instant"] == D("40.95")
        assert entries["AK-47 | Redline (Field-Tested)"]["accepted"] is True

    def test_empty_catalog_is_an_empty_book(self, api, alice):
        assert book(api, alice) == []


class TestSecondGame:
    def test_alice_book(self, api, alice, world):
        assert book(api, alice, game=252490) == [
            {
                "itemId": "252490-000300",
                "marketHashName": "Blackout Garage Door",
                "accepted": True,
                "deposit": D("0.90"),
                "withdraw": D("1.16"),  # instant only: 1.155 up
            },
            {
                "itemId": "252490-000100",
                "marketHashName": "Tempered AK47",
                "accepted": True,
                "deposit": D("18.00"),
                "withdraw": D("18.38"),  # the cheaper instant 17.50 x 1.05 = 18.375 up
            },
            {
                "itemId": None,
                "marketHashName": "Whiteout Hoodie",
                "accepted": True,
                "deposit": D("4.50"),
                "withdraw": None,
            },
        ]

    def test_bob_book(self, api, alice, bob, world):
        book(api, alice, game=252490)
        entries = book(api, bob, game=252490)
        assert [(e["deposit"], e["withdraw"]) for e in entries] == [
            (D("0.80"), D("1.21")),
            (D("16.00"), D("19.25")),
            (D("4.00"), None),
        ]

    def test_cheapest_of_any_delivery(self, api, alice, world):
        SandboxListingFactory(item=world.tempered, price=D("17.00"))  # standard now cheapest
        entry = by_name(book(api, alice, game=252490))["Tempered AK47"]
        assert entry["withdraw"] == D("17.85")

    def test_books_of_the_two_games_do_not_mix(self, api, alice, world):
        first = {e["marketHashName"] for e in book(api, alice)}
        second = {e["marketHashName"] for e in book(api, alice, game=252490)}
        assert first.isdisjoint(second)
        assert len(first) == 7
        assert len(second) == 3


class TestGameParameter:
    @pytest.mark.parametrize("game", ["abc", "1.5", "0", "-730", "99999999999"])
    def test_invalid_game(self, api, alice, world, game):
        error = assert_error(
            api.get(PRICES, {"game": game}, headers=alice.headers), 400, 1001, "VALIDATION_FAILED"
        )
        assert set(error["fields"]) == {"game"}

    @pytest.mark.parametrize("game", ["1", "440", "570"])
    def test_unknown_positive_game_is_empty(self, api, alice, world, game):
        assert book(api, alice, game=game) == []


class TestCache:
    def test_second_call_is_served_from_the_cache(
        self, api, alice, world, django_assert_max_num_queries
    ):
        first = book(api, alice)
        with CaptureQueriesContext(connection) as queries:
            second = book(api, alice)
        assert second == first
        touched = " ".join(q["sql"] for q in queries.captured_queries)
        assert "trading_catalogitem" not in touched
        assert "sandbox_sandboxlisting" not in touched
        assert "trading_catalogphase" not in touched
        with django_assert_max_num_queries(2):  # only the API key lookup (and its touch)
            book(api, alice)

    def test_cached_until_the_market_version_changes_and_max_age_passes(
        self, api, alice, world, clock_advance
    ):
        assert by_name(book(api, alice))["AK-47 | Redline (Field-Tested)"]["withdraw"] == {
            "standard": D("10.00"),
            "instant": D("11.57"),
        }
        SandboxListing.objects.filter(item=world.ak, price=D("9.52")).update(price=D("8.00"))
        stale = by_name(book(api, alice))["AK-47 | Redline (Field-Tested)"]
        assert stale["withdraw"]["standard"] == D("10.00")  # same version: the cached book
        clock_advance(int(MAX_AGE.total_seconds()) + 1)
        old = by_name(book(api, alice))["AK-47 | Redline (Field-Tested)"]
        assert old["withdraw"]["standard"] == D("10.00")  # old, but the version did not move
        market_version_bump()
        fresh = by_name(book(api, alice))["AK-47 | Redline (Field-Tested)"]
        assert fresh["withdraw"]["standard"] == D("8.40")

    def test_a_new_version_is_served_the_old_book_until_max_age(
        self, api, alice, bob, world, clock_advance
    ):
        assert by_name(book(api, alice))["M4A4 | Howl (Minimal Wear)"]["itemId"] is None
        SandboxListingFactory(item=world.howl, price=D("2999.99"))
        SandboxListingFactory(item=world.howl, instant=True, bot=world.bot, price=D("3100.00"))
        market_version_bump()
        clock_advance(int(MAX_AGE.total_seconds()) - 1)
        assert by_name(book(api, alice))["M4A4 | Howl (Minimal Wear)"]["itemId"] is None
        clock_advance(2)
        for actor, standard, instant in (
            (alice, D("3149.99"), D("3255.00")),  # 3149.9895 up
            (bob, D("3299.99"), D("3410.00")),  # 3299.989 up
        ):
            entry = by_name(book(api, actor))["M4A4 | Howl (Minimal Wear)"]
            assert entry["itemId"] == "730-000500"
            assert entry["withdraw"] == {"standard": standard, "instant": instant}

    def test_a_changed_fee_is_seen_at_once(self, api, alice, world):
        book(api, alice)
        alice.merchant.withdraw_fee_rate = D("0.2000")
        alice.merchant.deposit_margin_rate = D("0.5000")
        alice.merchant.save()
        callers_changed()  # as the admin's change does
        entry = by_name(book(api, alice))["AWP | Asiimov (Field-Tested)"]
        assert entry["deposit"] == D("25.00")
        assert entry["withdraw"]["standard"] == D("48.00")

    def test_same_pricing_merchants_get_the_same_book(self, api, alice, world):
        carol = make_actor(name="Carol")
        assert book(api, carol) == book(api, alice) == ALICE_730


class TestBuild:
    def test_slices_join_into_the_same_book(self, api, alice, world, monkeypatch):
        whole = book(api, alice)
        monkeypatch.setattr(prices, "SLICE_ITEMS", 2)
        prices._local_bodies.clear()
        cache.clear()
        assert book(api, alice) == whole == ALICE_730

    def test_while_another_request_rebuilds_the_stale_book_is_served(
        self, api, alice, world, clock_advance
    ):
        before = by_name(book(api, alice))["AK-47 | Redline (Field-Tested)"]
        SandboxListing.objects.filter(item=world.ak, price=D("9.52")).update(price=D("8.00"))
        market_version_bump()
        clock_advance(int(MAX_AGE.total_seconds()) + 1)
        fee, margin = alice.merchant.withdraw_fee_rate, alice.merchant.deposit_margin_rate
        assert cache.add(f"prices:730:{fee}:{margin}:building", 1)  # another request builds
        assert by_name(book(api, alice))["AK-47 | Redline (Field-Tested)"] == before
        cache.delete(f"prices:730:{fee}:{margin}:building")
        after = by_name(book(api, alice))["AK-47 | Redline (Field-Tested)"]
        assert after["withdraw"]["standard"] == D("8.40")

    def test_a_body_gone_from_redis_is_rebuilt(self, api, alice, world):
        first = book(api, alice)
        fee, margin = alice.merchant.withdraw_fee_rate, alice.merchant.deposit_margin_rate
        ref = cache.get(f"prices:730:{fee}:{margin}")
        prices._local_bodies.clear()
        cache.delete(ref.body_key)
        assert book(api, alice) == first
        assert cache.get(f"prices:730:{fee}:{margin}").body_key != ref.body_key

    def test_the_body_is_sent_with_its_exact_length(self, api, alice, world):
        response = api.get("/secure/prices", headers={"api-key": alice.api_key})
        assert int(response["Content-Length"]) == len(response.content) > 1000
        assert response["Content-Type"] == "application/json"
