"""Market browsing: listings with the merchant's fee applied, one item's listings, suggestions;
cached under the market version (``core.market_version``)."""

import hashlib
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import orjson
from django.core.cache import cache
from django.db.models import Case, IntegerField, Value, When

from core.db import replica_reads
from core.json import dumps
from core.market_version import market_version
from merchants.models import Merchant
from trading.marketplace import get_marketplace
from trading.marketplace.base import ItemListingsQuery, Listing, MarketQuery, MarketSort
from trading.models import CatalogItem, CatalogPhase
from trading.pricing import sourcing_ceiling, sourcing_floor
from trading.representations import ListingOut, MarketPageOut, SuggestionOut, listing_json

SUGGESTIONS_LIMIT = 20
PAGE_TTL_SECONDS = 30


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


def market_search(
    *,
    merchant: Merchant,
    game: int,
    search: str,
    sort: MarketSort,
    min_price: Decimal | None,
    max_price: Decimal | None,
    page: int,
    per_page: int,
) -> orjson.Fragment:
    """Price bounds are on the fee-inclusive price the merchant sees; they are turned into the
    exact sourcing-price bounds, so the marketplace filters on its own indexed column. Rendered
    pages are cached for a few seconds per market version, fee and query."""
    fee = merchant.withdraw_fee_rate
    market = get_marketplace()

    def page_json() -> MarketPageOut:
        query = MarketQuery(
            game=game,
            search=search,
            sort=sort,
            min_price=sourcing_floor(min_price, fee) if min_price is not None else None,
            max_price=sourcing_ceiling(max_price, fee) if max_price is not None else None,
            offset=(page - 1) * per_page,
            limit=per_page,
        )
        listings, count = market.search(query)
        return {
            "items": listings_render(listings, fee_rate=merchant.withdraw_fee_rate),
            "count": count,
        }

    shape = f"{fee}|{game}|{search.upper()}|{sort}|{min_price}|{max_price}|{page}|{per_page}"
    return _cached_page("market-page", shape, page_json)


def catalog_item_resolve(
    *, item_id: str | None, market_hash_name: str | None
) -> CatalogItem | None:
    """``itemId`` wins; ``marketHashName`` is an exact name."""
    if item_id:
        return CatalogItem.objects.filter(pk=item_id).first()
    if market_hash_name:
        return CatalogItem.objects.filter(market_hash_name=market_hash_name).first()
    return None


def market_item_listings(
    *,
    merchant: Merchant,
    item_id: str | None,
    market_hash_name: str | None,
    delivery: str,
    phase: str,
    float_min: Decimal | None,
    float_max: Decimal | None,
    page: int,
    per_page: int,
) -> orjson.Fragment:
    """Listings of one item, cheapest first. As in the contract, ``delivery`` filters the page
    after it is fetched, so a page may hold fewer than ``perPage`` listings. Cached like market
    pages: per market version, fee and query."""

    def listings_json() -> list[ListingOut]:
        item = catalog_item_resolve(item_id=item_id, market_hash_name=market_hash_name)
        if item is None:
            return []
        listings = get_marketplace().item_listings(
            ItemListingsQuery(
                catalog_id=item.id,
                phase=phase,
                float_min=float_min,
                float_max=float_max,
                offset=(page - 1) * per_page,
                limit=per_page,
            )
        )
        if delivery != "any":
            listings = [listing for listing in listings if listing.delivery == delivery]
        return listings_render(listings, fee_rate=merchant.withdraw_fee_rate)

    shape = (
        f"{merchant.withdraw_fee_rate}|{item_id}|{market_hash_name}|{delivery}|{phase}"
        f"|{float_min}|{float_max}|{page}|{per_page}"
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


def market_suggestions(*, game: int, q: str) -> list[SuggestionOut]:
    rank = Case(
        When(market_hash_name__iexact=q, then=Value(0)),
        When(market_hash_name__istartswith=q, then=Value(1)),
        default=Value(2),
        output_field=IntegerField(),
    )
    items = (
        CatalogItem.objects.filter(game=game, market_hash_name__icontains=q)
        .annotate(rank=rank)
        .order_by("rank", "-popularity", "market_hash_name")[:SUGGESTIONS_LIMIT]
    )
    return [
        {
            "id": item.id,
            "marketHashName": item.market_hash_name,
            "iconUrl": item.icon_url,
            "rarity": item.rarity,
            "rarityColor": item.rarity_color,
            "itemType": item.item_type,
        }
        for item in items
    ]
