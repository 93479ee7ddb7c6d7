"""GET /secure/market/item and GET /client/market/item (contract 4.5, decisions section 6)."""

from decimal import Decimal

import pytest

from core.market_version import market_version_bump
from sandbox.models import SandboxListing
from tests.factories import assert_error
from tests.trading.helpers import ok, prices

pytestmark = pytest.mark.django_db

D = Decimal
AK = "AK-47 | Redline (Field-Tested)"


def listings(who, **params):
    return ok(who.get("/market/item", params))


def refused(who, *fields, **params):
    error = assert_error(who.get("/market/item", params), 400, 1001, "VALIDATION_FAILED")
    assert set(error["fields"]) == set(fields), error


class TestWhichItem:
    def test_by_item_id_cheapest_first(self, as_alice, world):
        items = listings(as_alice, itemId="730-000100")
        assert prices(items) == [D("10.00"), D("11.57"), D("12.60")]
        assert [i["offer"]["delivery"] for i in items] == ["standard", "instant", "standard"]
        assert {i["offer"]["reference"] for i in items} == {"730-000100"}

    def test_by_exact_market_hash_name(self, as_alice, world):
        assert listings(as_alice, marketHashName=AK) == listings(as_alice, itemId="730-000100")
        assert listings(as_alice, marketHashName=AK.lower()) == []
        assert listings(as_alice, marketHashName="AK-47 | Redline") == []

    def test_item_id_wins_over_the_name(self, as_alice, world):
        items = listings(as_alice, itemId="730-000200", marketHashName=AK)
        assert prices(items) == [D("42.00")]
        assert listings(as_alice, itemId="730-999999", marketHashName=AK) == []

    def test_unknown_item_is_empty(self, as_alice, world):
        assert listings(as_alice, itemId="730-999999") == []
        assert listings(as_alice, marketHashName="Nothing Like It") == []

    def test_item_without_listings_is_empty(self, as_alice, world):
        assert listings(as_alice, itemId="730-000500") == []

    def test_neither_is_refused(self, as_alice, world):
        """The contract's refusal, though the document cannot require one of two parameters
        (decisions section 7)."""
        refused(as_alice, "itemId")
        refused(as_alice, "itemId", delivery="instant")

    @pytest.mark.parametrize("item_id", ["7300", "x", "7" * 257])
    def test_item_id_is_5_to_256_characters(self, as_alice, world, item_id):
        refused(as_alice, "itemId", itemId=item_id)

    def test_item_id_of_256_characters_is_accepted(self, as_alice, world):
        assert listings(as_alice, itemId="7" * 256) == []

    def test_listing_is_the_market_listing(self, as_alice, world):
        items = listings(as_alice, itemId="730-000100")
        on_market = ok(as_alice.get("/market", {"search": "redline", "sort": "priceAsc"}))
        assert items == on_market["items"]
        instant = items[1]
        assert instant["botInfo"]["name"] == "Bot Atlas"
        assert instant["previewToken"] == "a1b2c3d4"
        assert instant["stickers"][0]["slot"] == 0
        assert instant["charm"]["name"] == "Charm | Lil' Squirt"
        assert instant["wear"] == "0.2512345678"

    def test_second_game_item(self, as_alice, world):
        items = listings(as_alice, itemId="252490-000100")
        assert prices(items) == [D("18.38"), D("18.90")]
        assert [i["offer"]["delivery"] for i in items] == ["instant", "standard"]
        assert all(i["id"].startswith("252490-000100-") for i in items)
        assert all(i["marketPrice"] == i["offer"]["price"] for i in items)
        assert all("wear" not in i and "stickers" not in i for i in items)

    def test_bob_sees_his_fee(self, as_alice, as_bob, world):
        assert prices(listings(as_alice, itemId="730-000100")) == [
            D("10.00"),
            D("11.57"),
            D("12.60"),
        ]
        assert prices(listings(as_bob, itemId="730-000100")) == [
            D("10.48"),
            D("12.12"),
            D("13.20"),
        ]


class TestDelivery:
    def test_filter_applies_after_the_page_is_fetched(self, as_alice, world):
        # The first page of two holds the 9.52 standard and the 11.01 instant listing.
        assert [
            i["offer"]["delivery"] for i in listings(as_alice, itemId="730-000100", perPage=2)
        ] == [
            "standard",
            "instant",
        ]
        instant = listings(as_alice, itemId="730-000100", perPage=2, delivery="instant")
        assert prices(instant) == [D("11.57")]
        standard = listings(as_alice, itemId="730-000100", perPage=2, delivery="standard")
        assert prices(standard) == [D("10.00")]  # the 12.00 listing is on page 2
        second = listings(as_alice, itemId="730-000100", perPage=2, page=2, delivery="standard")
        assert prices(second) == [D("12.60")]
        assert listings(as_alice, itemId="730-000100", perPage=2, page=2, delivery="instant") == []

    def test_any_is_the_default(self, as_alice, world):
        assert listings(as_alice, itemId="730-000100", delivery="any") == listings(
            as_alice, itemId="730-000100"
        )

    @pytest.mark.parametrize("delivery", ["fast", "Instant", "both"])
    def test_unknown_delivery_is_refused(self, as_alice, world, delivery):
        refused(as_alice, "delivery", itemId="730-000100", delivery=delivery)


class TestPhase:
    def test_phase_filter(self, as_alice, world):
        ruby = listings(as_alice, itemId="730-000300", phase="Ruby")
        assert prices(ruby) == [D("1995.00"), D("2047.50")]
        assert {i["doppler"]["name"] for i in ruby} == {"Ruby"}
        assert prices(listings(as_alice, itemId="730-000300", phase="Phase 2")) == [D("577.50")]
        assert listings(as_alice, itemId="730-000300", phase="Emerald") == []
        assert listings(as_alice, itemId="730-000100", phase="Ruby") == []

    def test_phase_combines_with_delivery(self, as_alice, world):
        items = listings(as_alice, itemId="730-000300", phase="Ruby", delivery="instant")
        assert prices(items) == [D("2047.50")]
        assert listings(as_alice, itemId="730-000300", phase="Phase 2", delivery="instant") == []

    @pytest.mark.parametrize("phase", ["Phase 5", "ruby", "Doppler", "Phase1"])
    def test_invalid_phase_is_refused(self, as_alice, world, phase):
        refused(as_alice, "phase", itemId="730-000300", phase=phase)


class TestFloat:
    def test_bounds_are_inclusive(self, as_alice, world):
        ak = "730-000100"  # wears 0.2 (9.52), 0.2512345678 (11.01), 0.35 (12.00)
        assert prices(listings(as_alice, itemId=ak, floatMin="0.25")) == [D("11.57"), D("12.60")]
        assert prices(listings(as_alice, itemId=ak, floatMax="0.30")) == [D("10.00"), D("11.57")]
        assert prices(listings(as_alice, itemId=ak, floatMin="0.25", floatMax="0.30")) == [
            D("11.57")
        ]
        assert prices(listings(as_alice, itemId=ak, floatMin="0.2", floatMax="0.2")) == [D("10.00")]
        assert len(listings(as_alice, itemId=ak, floatMin="0", floatMax="1")) == 3
        assert listings(as_alice, itemId=ak, floatMin="0.36") == []

    @pytest.mark.parametrize(
        ("params", "field"),
        [
            ({"floatMin": "-0.01"}, "floatMin"),
            ({"floatMin": "1.01"}, "floatMin"),
            ({"floatMax": "1.5"}, "floatMax"),
            ({"floatMax": "-1"}, "floatMax"),
            ({"floatMax": "abc"}, "floatMax"),
        ],
    )
    def test_out_of_range_is_refused(self, as_alice, world, params, field):
        refused(as_alice, field, itemId="730-000100", **params)

    def test_min_above_max_is_an_empty_range(self, as_alice, world):
        assert listings(as_alice, itemId="730-000100", floatMin="0.5", floatMax="0.4") == []


class TestPaging:
    def test_pages(self, as_alice, world):
        ak = "730-000100"
        assert prices(listings(as_alice, itemId=ak, perPage=1, page=3)) == [D("12.60")]
        assert listings(as_alice, itemId=ak, perPage=1, page=4) == []
        assert len(listings(as_alice, itemId=ak, perPage=100)) == 3

    @pytest.mark.parametrize(
        ("param", "value"), [("perPage", "101"), ("perPage", "0"), ("page", "0"), ("page", "x")]
    )
    def test_out_of_range_is_refused(self, as_alice, world, param, value):
        refused(as_alice, param, itemId="730-000100", **{param: value})


class TestCache:
    def test_served_from_the_cache_until_the_market_version_changes(self, as_alice, world):
        before = listings(as_alice, itemId="730-000100")
        SandboxListing.objects.filter(item_id="730-000100").update(price=D("1.00"))
        assert listings(as_alice, itemId="730-000100") == before
        market_version_bump()
        assert prices(listings(as_alice, itemId="730-000100")) == [D("1.05")] * 3

    def test_each_merchant_gets_its_own_fee(self, as_alice, as_bob, world):
        assert prices(listings(as_alice, itemId="730-000100"))[0] == D("10.00")
        assert prices(listings(as_bob, itemId="730-000100"))[0] != D("10.00")
