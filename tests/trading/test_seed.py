"""``manage.py seed_sandbox`` builds a consistent world for both games."""

import io
import uuid
from decimal import Decimal

import pytest
from django.core.management import call_command

from core.market_version import market_version
from sandbox.models import SandboxBot, SandboxListing
from sandbox.names import PHASED_FINISHES
from tests.trading.factories import CatalogItemFactory
from tests.trading.helpers import ok
from trading.models import CatalogItem, CatalogPhase

pytestmark = pytest.mark.django_db


def test_seed_200_items_and_2000_listings(api, alice, django_capture_on_commit_callbacks):
    version = market_version()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("seed_sandbox", items=200, listings=2000, stdout=io.StringIO())
    assert market_version() != version

    assert CatalogItem.objects.count() == 200
    assert CatalogItem.objects.filter(game=730).count() == 140
    assert CatalogItem.objects.filter(game=252490).count() == 60
    assert SandboxListing.objects.count() == 2000
    assert SandboxListing.objects.filter(game=730).count() == 1400
    assert SandboxListing.objects.filter(game=252490).count() == 600
    assert SandboxBot.objects.count() == 8

    phased = list(CatalogItem.objects.filter(is_phased=True))
    assert phased
    assert all(item.game == 730 for item in phased)
    for item in phased:
        finish = "Gamma Doppler" if "Gamma Doppler" in item.market_hash_name else "Doppler"
        assert set(item.phase_prices.values_list("phase", "paint_index")) == set(
            PHASED_FINISHES[finish]
        )
    assert not CatalogPhase.objects.exclude(item__is_phased=True).exists()

    instant = SandboxListing.objects.filter(delivery="instant")
    assert instant.exists()
    assert not instant.filter(bot__isnull=True).exists()
    assert not instant.filter(game=730, preview_token="").exists()
    assert not SandboxListing.objects.filter(delivery="standard", bot__isnull=False).exists()
    for listing in SandboxListing.objects.filter(game=730)[:200]:
        assert str(uuid.UUID(listing.id)) == listing.id
    for listing_id, item_id in SandboxListing.objects.filter(game=252490).values_list(
        "id", "item_id"
    ):
        assert listing_id.startswith(f"{item_id}-")
        assert listing_id.rsplit("-", 1)[1].isdigit()
    assert not SandboxListing.objects.filter(game=730, phase="", item__is_phased=True).exists()
    assert not SandboxListing.objects.filter(price__lte=0).exists()
    # Listings copy their item's name and game.
    assert all(
        listing.market_hash_name == listing.item.market_hash_name
        and listing.game == listing.item.game
        for listing in SandboxListing.objects.select_related("item")[:300]
    )

    # The API serves the seeded world.
    book = ok(api.get("/secure/prices", headers=alice.headers))
    assert len(book) == 140
    assert [e["marketHashName"] for e in book] == sorted(e["marketHashName"] for e in book)
    phased_entries = [e for e in book if "phases" in e]
    assert len(phased_entries) == len(phased)
    assert all(len(e["phases"]) >= 5 for e in phased_entries)
    second = ok(api.get("/secure/prices", {"game": 252490}, headers=alice.headers))
    assert len(second) == 60
    assert all(not isinstance(e["withdraw"], dict) for e in second)
    page = ok(api.get("/secure/market", {"game": "252490"}, headers=alice.headers))
    assert page["count"] == 600
    assert Decimal(str(page["items"][0]["offer"]["price"])) > 0


def test_reseeding_replaces_listings_and_keeps_the_catalog(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("seed_sandbox", items=20, listings=100, stdout=io.StringIO())
    first_version = market_version()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("seed_sandbox", items=40, listings=50, stdout=io.StringIO())
    assert CatalogItem.objects.count() == 40
    assert SandboxListing.objects.count() == 50
    assert SandboxBot.objects.count() == 8
    assert market_version() != first_version


def test_if_empty_seeds_a_catalog_without_a_sandbox_world():
    """After the upgrade that moved the sandbox into its own app the domain's catalog is still
    there but the world (bots, listings) is gone: ``--if-empty`` seeds it again, once."""
    CatalogItemFactory(id="730-000000")
    assert not SandboxBot.objects.exists()

    out = io.StringIO()
    call_command("seed_sandbox", items=20, listings=100, if_empty=True, stdout=out)
    assert out.getvalue().startswith("seeded ")
    assert SandboxListing.objects.count() == 100
    assert SandboxBot.objects.count() == 8

    again = io.StringIO()
    call_command("seed_sandbox", items=20, listings=30, if_empty=True, stdout=again)
    assert again.getvalue() == "sandbox world already seeded\n"
    assert SandboxListing.objects.count() == 100
