"""The sandbox marketplace's purchase (``SandboxMarketplace.purchase``): what it answers, what it
leaves of the listing, when the market changes, and its idempotency by key, also between twins
racing on real connections."""

import threading
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection, transaction

from core.market_version import market_version_bump
from sandbox import marketplace as sandbox_marketplace
from sandbox.marketplace import SandboxMarketplace
from sandbox.models import SandboxListing, SandboxPurchase
from tests.withdrawals.conftest import catalog_item, make_listing
from trading.marketplace.base import PurchaseResult
from trading.models import CatalogItem

__all__ = ["catalog_item"]

Changes = list[dict[str, list[Any]]]


@pytest.fixture
def changes(monkeypatch: pytest.MonkeyPatch) -> Changes:
    """What the purchases told the market feed, call by call (listing ids and amounts)."""
    told: Changes = []

    def record(**changed: Any) -> None:
        told.append(
            {kind: [(x.id, x.amount) for x in listings] for kind, listings in changed.items()}
        )

    monkeypatch.setattr(sandbox_marketplace, "market_listings_changed", record)
    return told


def buy(listing: SandboxListing, key: str, price: str = "", amount: int = 1) -> PurchaseResult:
    return SandboxMarketplace().purchase(
        listing_id=listing.id,
        max_price=Decimal(price) if price else listing.price,
        key=key,
        amount=amount,
    )


def stack(item: CatalogItem, price: str, amount: int) -> SandboxListing:
    listing = make_listing(item, price)
    SandboxListing.objects.filter(pk=listing.pk).update(amount=amount)
    listing.refresh_from_db()
    return listing


def test_a_bought_listing_goes_and_the_purchase_keeps_it_as_it_was(catalog_item, changes):
    listing = make_listing(catalog_item, "12.50")

    result = buy(listing, "k-1", "13.00")

    assert (result.ok, result.ref, result.price) == (True, "k-1", Decimal("12.50"))
    assert result.listing is not None
    assert (result.listing.id, result.listing.price, result.listing.amount) == (
        listing.id,
        Decimal("12.50"),
        1,
    )
    assert not SandboxListing.objects.filter(pk=listing.pk).exists()
    purchase = SandboxPurchase.objects.get()
    assert (purchase.key, purchase.listing_id, purchase.item_id) == (
        "k-1",
        listing.id,
        catalog_item.id,
    )
    assert (purchase.price, purchase.amount, purchase.status) == (Decimal("12.50"), 1, "accepted")
    assert purchase.listing["price"] == "12.50"
    assert changes == [{"gone": [(listing.id, 1)]}]


def test_part_of_a_stack_bought_leaves_the_rest_repriced(catalog_item, changes):
    listing = stack(catalog_item, "3.00", amount=5)

    result = buy(listing, "k-1", amount=2)

    assert result.ok
    assert result.listing is not None
    assert result.listing.amount == 5  # the listing as it was bought
    assert SandboxListing.objects.get(pk=listing.pk).amount == 3
    purchase = SandboxPurchase.objects.get()
    assert (purchase.amount, purchase.listing["amount"]) == (2, 5)
    assert changes == [{"repriced": [(listing.id, 3)]}]


@pytest.mark.parametrize(
    ("bought", "delivery", "bumped"),
    [("cheaper", "standard", True), ("dearer", "standard", False), ("dearer", "instant", True)],
)
def test_the_market_version_changes_when_the_floor_or_own_stock_is_bought(
    catalog_item, django_capture_on_commit_callbacks, bought, delivery, bumped
):
    cheaper = make_listing(catalog_item, "5.00", delivery)
    dearer = make_listing(catalog_item, "7.00", delivery)
    make_listing(catalog_item, "1.00", "instant" if delivery == "standard" else "standard")

    with django_capture_on_commit_callbacks() as callbacks:
        assert buy(cheaper if bought == "cheaper" else dearer, "k-1").ok

    assert (market_version_bump in callbacks) is bumped


def test_a_listing_dearer_than_the_maximum_is_refused_with_its_price(catalog_item, changes):
    listing = make_listing(catalog_item, "12.50")

    result = buy(listing, "k-1", "12.49")

    assert (result.ok, result.reason, result.price) == (False, "PRICE_CHANGED", Decimal("12.50"))
    assert SandboxListing.objects.filter(pk=listing.pk).exists()
    assert not SandboxPurchase.objects.exists()
    assert changes == []


def test_a_listing_gone_or_short_is_unavailable(catalog_item, changes):
    short = stack(catalog_item, "3.00", amount=2)

    assert buy(short, "k-1", amount=3).reason == "LISTING_UNAVAILABLE"
    SandboxListing.objects.filter(pk=short.pk).delete()
    assert buy(short, "k-1").reason == "LISTING_UNAVAILABLE"
    assert not SandboxPurchase.objects.exists()
    assert changes == []


@pytest.mark.parametrize("now", ["gone", "dearer", "on sale"])
def test_a_key_bought_with_answers_that_purchase_whatever_the_listing_is_now(
    catalog_item, changes, now
):
    first = make_listing(catalog_item, "4.00")
    other = make_listing(catalog_item, "6.00")
    earlier = buy(first, "k-1")
    if now == "gone":
        SandboxListing.objects.filter(pk=other.pk).delete()
    maximum = "5.00" if now == "dearer" else "6.00"

    again = buy(other, "k-1", maximum)

    assert again == earlier
    assert SandboxPurchase.objects.get().listing_id == first.id
    assert SandboxListing.objects.filter(pk=other.pk).exists() is (now != "gone")
    assert changes == [{"gone": [(first.id, 1)]}]


# -- Twins racing: each on its own connection, committed.


def _held_purchase(listing: SandboxListing, key: str) -> Iterator[PurchaseResult]:
    """A purchase made in a transaction left open until resumed (the first twin, slow to
    commit)."""
    with transaction.atomic():
        yield buy(listing, key)
    connection.close()


def _waiting_for_a_lock(backend_pids: Callable[[], set[int]]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND datname = current_database()"
            )
            if {pid for (pid,) in cursor.fetchall()} & backend_pids():
                return
        time.sleep(0.02)
    raise AssertionError("the second twin never waited for the first")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("twin_buys", ["the same stack", "another listing"])
def test_a_twin_racing_with_the_same_key_answers_the_first_twins_purchase(catalog_item, twin_buys):
    if connection.vendor != "postgresql":
        pytest.skip("row locks and a waiting insert need PostgreSQL")
    first = stack(catalog_item, "3.00", amount=2)
    second = first if twin_buys == "the same stack" else make_listing(catalog_item, "3.50")
    started = threading.Event()
    resume = threading.Event()
    answers: dict[str, PurchaseResult] = {}

    def first_twin() -> None:
        held = _held_purchase(first, "k-1")
        answers["first"] = next(held)
        started.set()
        resume.wait(10)
        next(held, None)

    twin_pid: set[int] = set()

    def second_twin() -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                twin_pid.add(cursor.fetchone()[0])
            answers["second"] = buy(second, "k-1", "3.50")
        finally:
            connection.close()

    threads = [threading.Thread(target=first_twin), threading.Thread(target=second_twin)]
    threads[0].start()
    assert started.wait(10)
    threads[1].start()
    # The second twin waits: on the stack's row lock, or on the first twin's uncommitted key.
    _waiting_for_a_lock(lambda: twin_pid)
    resume.set()
    for thread in threads:
        thread.join(10)

    assert answers["first"].ok
    assert answers["second"] == answers["first"]
    assert SandboxPurchase.objects.get().listing_id == first.id
    assert SandboxListing.objects.get(pk=first.pk).amount == 1
    if second != first:
        assert SandboxListing.objects.get(pk=second.pk).amount == 1
