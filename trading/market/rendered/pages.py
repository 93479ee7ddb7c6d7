"""Market pages: listings with the merchant's fee applied, and one item's listings, cached under
the market version (``core.market_version``).

These reads return API bodies, rendered and cached as JSON, which is why they are not selectors:
the benchmarks (bench/README.md, "market search" and "market item") measured the cache read of
a rendered page as the cost of these hot reads, so a page is rendered once per market version,
fee and query rather than built from rows on every request."""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import orjson
from django.core.cache import cache

from core.db import replica_reads
from core.json import dumps
from core.market_version import market_version
from merchants.models import Merchant
from trading.market.selectors.listings import catalog_item_resolve
from trading.market.shapes import ListingOut, MarketPageOut, listing_json
from trading.marketplace import get_marketplace
from trading.marketplace.base import ItemListingsQuery, Listing, MarketQuery, MarketSort
from trading.models import CatalogItem, CatalogPhase
from trading.pricing import sourcing_ceiling, sourcing_floor

PAGE_TTL_SECONDS = 30


@dataclass(frozen=True)
class MarketSearch:
    """A page of the market; price bounds on the fee-inclusive price the merchant sees."""

    game: int
    search: str
    sort: MarketSort
    min_price: Decimal | None
    max_price: Decimal | None
    page: int
    per_page: int


@dataclass(frozen=True)
class ItemSearch:
    """A page of one catalog item's listings, named by ``item_id`` or ``market_hash_name``."""

    item_id: str | None
    market_hash_name: str | None
    delivery: str  # "any", "standard" or "instant"
    phase: str
    float_min: Decimal | None
    float_max: Decimal | None
    page: int
    per_page: int


def listings_render(listings: list[Listing], *, fee_rate: Decimal) -> list[ListingOut]:
    """Listings as the market shows them to a merchant paying ``fee_rate``."""
    catalog = CatalogItem.objects.in_bulk({listing.catalog_id for listing in listings})
    phased = {listing.catalog_id for listing in listings if listing.phase}
    # A phased listing's market quote is its phase's own reference price.
    phase_refs = (
        {
            (item_id, phase): reference
            for item_id, phase, reference in CatalogPhase.objects.filter(
                item_id__in=phased
            ).values_list("item_id", "phase", "reference_price")
        }
        if phased
        else {}
    )
    return [
        listing_json(
            listing,
            catalog[listing.catalog_id],
            fee_rate=fee_rate,
            reference=phase_refs.get((listing.catalog_id, listing.phase)),
        )
        for listing in listings
    ]


def market_search(*, merchant: Merchant, search: MarketSearch) -> orjson.Fragment:
    """Price bounds are on the fee-inclusive price the merchant sees; they are turned into the
    exact sourcing-price bounds, so the marketplace filters on its own indexed column. Rendered
    pages are cached for a few seconds per market version, fee and query (the measured hot
    path: see the module's note)."""
    fee = merchant.withdraw_fee_rate
    market = get_marketplace()

    def page_json() -> MarketPageOut:
        query = MarketQuery(
            game=search.game,
            search=search.search,
            sort=search.sort,
            min_price=sourcing_floor(search.min_price, fee)
            if search.min_price is not None
            else None,
            max_price=(
                sourcing_ceiling(search.max_price, fee) if search.max_price is not None else None
            ),
            offset=(search.page - 1) * search.per_page,
            limit=search.per_page,
        )
        listings, count = market.search(query)
        return {
            "items": listings_render(listings, fee_rate=merchant.withdraw_fee_rate),
            "count": count,
        }

    shape = (
        f"{fee}|{search.game}|{search.search.upper()}|{search.sort}|{search.min_price}"
        f"|{search.max_price}|{search.page}|{search.per_page}"
    )
    return _cached_page("market-page", shape, page_json)


def market_item_listings(*, merchant: Merchant, search: ItemSearch) -> orjson.Fragment:
    """Listings of one item, cheapest first. As in the contract, ``delivery`` filters the page
    after it is fetched, so a page may hold fewer than ``perPage`` listings. Cached like market
    pages, rendered: per market version, fee and query."""

    def listings_json() -> list[ListingOut]:
        item = catalog_item_resolve(
            item_id=search.item_id, market_hash_name=search.market_hash_name
        )
        if item is None:
            return []
        listings = get_marketplace().item_listings(
            ItemListingsQuery(
                catalog_id=item.id,
                phase=search.phase,
                float_min=search.float_min,
                float_max=search.float_max,
                offset=(search.page - 1) * search.per_page,
                limit=search.per_page,
            )
        )
        if search.delivery != "any":
            listings = [listing for listing in listings if listing.delivery == search.delivery]
        return listings_render(listings, fee_rate=merchant.withdraw_fee_rate)

    shape = (
        f"{merchant.withdraw_fee_rate}|{search.item_id}|{search.market_hash_name}"
        f"|{search.delivery}|{search.phase}|{search.float_min}|{search.float_max}"
        f"|{search.page}|{search.per_page}"
    )
    return _cached_page("market-item", shape, listings_json)


def _cached_page(kind: str, shape: str, render: Callable[[], Any]) -> orjson.Fragment:
    """A rendered market read, cached for ``PAGE_TTL_SECONDS`` under the market's price
    version, so a listing change is seen at once."""
    version = market_version()
    key = f"{kind}:" + hashlib.sha256(f"{version}|{shape}".encode()).hexdigest()
    cached = cache.get(key)
    if cached is not None:
        return orjson.Fragment(cached)
    with replica_reads():  # the catalog and the listings: a replica's, when there is one
        rendered = dumps(render())
    cache.set(key, rendered, timeout=PAGE_TTL_SECONDS)
    return orjson.Fragment(rendered)
