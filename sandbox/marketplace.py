"""The sandbox marketplace: listings in the service's own database, searched like the real one.

A search splits the matching catalog items (trigram index) into segments that sort apart: for
``relevance`` the exact name, then names starting with the search, then the rest; for the other
sorts one segment. Each segment is read the cheapest way: few items, each item's own sorted
listings merged (a LATERAL top-N per item); many items, the global sort index walked and
filtered by item. Segment sizes (for paging and ``count``) are cached for a few seconds.
"""

import hashlib
import re
import uuid
from decimal import Decimal
from typing import Any

from django.core.cache import cache
from django.db import IntegrityError, connection, connections, transaction
from django.db.models import Count, Min, Q, QuerySet

from core import clock
from core.db import read_alias
from core.market_version import market_version, market_version_bump
from sandbox.models import SandboxListing, SandboxPurchase
from trading.games import CS_GAME
from trading.marketplace.base import (
    ItemListingsQuery,
    Listing,
    MarketQuery,
    MarketSort,
    PriceFloors,
    PurchaseResult,
)
from trading.models import CatalogItem
from trading.platform.base import BotInfo
from trading.services.market import market_listings_changed

# First-game listings are UUIDs; second-game ones are compound: <catalog id>-<sequence>.
RUST_LISTING_ID = re.compile(r"^\d+-\d{6}-\d{8}$")
COUNT_TTL_SECONDS = 60
# Above this many matching items, walking the global sort index beats merging per-item lists.
LATERAL_MAX_ITEMS = 500

# Relevance: most-listed items first, each item's listings cheapest first.
ORDERINGS: dict[MarketSort, tuple[str, ...]] = {
    MarketSort.RELEVANCE: ("-popularity", "item_id", "price", "id"),
    MarketSort.PRICE_ASC: ("price", "id"),
    MarketSort.PRICE_DESC: ("-price", "-id"),
    MarketSort.NAME_ASC: ("market_hash_name", "price", "id"),
    MarketSort.NAME_DESC: ("-market_hash_name", "-price", "-id"),
}
# Price sorts over few items: (each item's own listings, the merged page), top-N per item.
LATERAL_ORDERS: dict[MarketSort, tuple[str, str]] = {
    MarketSort.PRICE_ASC: ("s.price, s.id", "l.price, l.id"),
    MarketSort.PRICE_DESC: ("s.price DESC, s.id DESC", "l.price DESC, l.id DESC"),
}
# Sorts by an item-level key first: (item order, each item's listings). Items are walked in
# order and their listings streamed (incremental sort), so a page reads only what it shows.
ITEM_ORDERS: dict[MarketSort, tuple[str, str]] = {
    MarketSort.RELEVANCE: ("c.popularity DESC, c.id", "s.price, s.id"),
    MarketSort.NAME_ASC: ("c.market_hash_name, c.id", "s.price, s.id"),
    MarketSort.NAME_DESC: ("c.market_hash_name DESC, c.id DESC", "s.price DESC, s.id DESC"),
}


def listing_of(row: SandboxListing) -> Listing:
    """The domain's view of a sandbox listing row (with its bot loaded)."""
    bot = row.bot
    return Listing(
        id=row.id,
        catalog_id=row.item_id,
        game=row.game,
        price=row.price,
        delivery=row.delivery,
        phase=row.phase,
        paint_index=row.paint_index,
        wear=row.wear,
        paint_seed=row.paint_seed,
        stickers=row.stickers,
        charm=row.charm,
        prop_id=row.prop_id,
        preview_token=row.preview_token,
        bot=BotInfo(name=bot.name, avatar=bot.avatar, platform_id=bot.platform_id) if bot else None,
        amount=row.amount,
    )


def _price_bounds(rows: QuerySet[SandboxListing], query: MarketQuery) -> QuerySet[SandboxListing]:
    if query.min_price is not None:
        rows = rows.filter(price__gte=query.min_price)
    if query.max_price is not None:
        rows = rows.filter(price__lte=query.max_price)
    return rows


def _bounds(query: MarketQuery, params: dict[str, Any]) -> str:
    bounds = ""
    if query.min_price is not None:
        bounds += " AND s.price >= %(min)s"
        params["min"] = query.min_price
    if query.max_price is not None:
        bounds += " AND s.price <= %(max)s"
        params["max"] = query.max_price
    return bounds


def _page_ids(sql: str, params: dict[str, Any]) -> list[str]:
    with connections[read_alias()].cursor() as cursor:  # a replica's in a market read
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def _lateral_page(item_ids: list[str], query: MarketQuery, offset: int, limit: int) -> list[str]:
    """Price order over few items: each item's cheapest (dearest) listings, merged."""
    inner, outer = LATERAL_ORDERS[query.sort]
    params: dict[str, Any] = {
        "ids": item_ids,
        "window": offset + limit,
        "limit": limit,
        "offset": offset,
    }
    bounds = _bounds(query, params)
    # Only fixed fragments (the orders above, the bounds) are spliced in; values are parameters.
    return _page_ids(
        "SELECT l.id FROM trading_catalogitem c CROSS JOIN LATERAL ("  # noqa: S608
        f" SELECT s.id, s.price FROM sandbox_sandboxlisting s WHERE s.item_id = c.id{bounds}"
        f" ORDER BY {inner} LIMIT %(window)s) l"
        f" WHERE c.id = ANY(%(ids)s) ORDER BY {outer} LIMIT %(limit)s OFFSET %(offset)s",
        params,
    )


def _item_ordered_page(
    catalog: QuerySet[CatalogItem], query: MarketQuery, offset: int, limit: int
) -> list[str]:
    """Relevance and name orders: items in order, each item's listings by price."""
    items, order = ITEM_ORDERS[query.sort]
    item_sql, item_params = catalog.values(
        "id", "market_hash_name", "popularity"
    ).query.sql_with_params()
    params: dict[str, Any] = {"limit": limit, "offset": offset}
    params.update({f"p{n}": value for n, value in enumerate(item_params)})
    item_sql = item_sql % tuple(f"%(p{n})s" for n in range(len(item_params)))
    bounds = _bounds(query, params)
    listing_order = order.replace("s.", "l.")
    return _page_ids(
        f"SELECT l.id FROM ({item_sql}) c CROSS JOIN LATERAL ("  # noqa: S608
        f" SELECT s.id, s.price FROM sandbox_sandboxlisting s WHERE s.item_id = c.id{bounds}"
        f" ORDER BY {order}) l ORDER BY {items}, {listing_order}"
        " LIMIT %(limit)s OFFSET %(offset)s",
        params,
    )


def _segments(query: MarketQuery) -> list[tuple[str, Q]]:
    """(name, catalog filter) of each part of the match set, in the order they sort."""
    contains = Q(game=query.game, market_hash_name__icontains=query.search)
    if query.sort is not MarketSort.RELEVANCE:
        return [("all", contains)]
    exact = Q(game=query.game, market_hash_name__iexact=query.search)
    prefix = Q(game=query.game, market_hash_name__istartswith=query.search) & ~exact
    return [("exact", exact), ("prefix", prefix), ("rest", contains & ~Q(prefix | exact))]


class SandboxMarketplace:
    def search(self, query: MarketQuery) -> tuple[list[Listing], int]:
        if not query.search:
            rows = _price_bounds(SandboxListing.objects.filter(game=query.game), query)
            page_ids = list(
                rows.order_by(*ORDERINGS[query.sort]).values_list("id", flat=True)[
                    query.offset : query.offset + query.limit
                ]
            )
            total = self._count(rows, query, "all")
        else:
            page_ids, total = self._search_segments(query)
        found = SandboxListing.objects.select_related("bot").in_bulk(page_ids)
        return [listing_of(found[i]) for i in page_ids if i in found], total

    def _search_segments(self, query: MarketQuery) -> tuple[list[str], int]:
        skip, want, total = query.offset, query.limit, 0
        page: list[str] = []
        for name, matching in _segments(query):
            catalog = CatalogItem.objects.filter(matching)
            item_ids = list(catalog.values_list("id", flat=True)[: LATERAL_MAX_ITEMS + 1])
            few = len(item_ids) <= LATERAL_MAX_ITEMS and connection.vendor == "postgresql"
            rows = _price_bounds(
                SandboxListing.objects.filter(
                    item_id__in=item_ids if few else catalog.values("id")
                ),
                query,
            )
            size = self._count(rows, query, name) if item_ids else 0
            total += size
            if want == 0 or skip >= size:
                skip -= min(skip, size)
                continue
            if query.sort in ITEM_ORDERS and connection.vendor == "postgresql":
                ids = _item_ordered_page(catalog, query, skip, want)
            elif few:
                ids = _lateral_page(item_ids, query, skip, want)
            else:
                ids = list(
                    rows.filter(game=query.game)
                    .order_by(*ORDERINGS[query.sort])
                    .values_list("id", flat=True)[skip : skip + want]
                )
            page += ids
            want -= len(ids)
            skip = 0
        return page, total

    def _count(self, rows: QuerySet[SandboxListing], query: MarketQuery, segment: str) -> int:
        """Cached for a few seconds: counting a million rows on every page turn is not worth it."""
        shape = f"{query.game}|{query.search.upper()}|{query.min_price}|{query.max_price}|{segment}"
        key = (
            f"sandbox-market-count:{market_version()}:" + hashlib.sha256(shape.encode()).hexdigest()
        )
        return int(cache.get_or_set(key, rows.count, timeout=COUNT_TTL_SECONDS) or 0)

    def item_listings(self, query: ItemListingsQuery) -> list[Listing]:
        rows = SandboxListing.objects.filter(item_id=query.catalog_id)
        if query.phase:
            rows = rows.filter(phase=query.phase)
        if query.float_min is not None:
            rows = rows.filter(wear__gte=query.float_min)
        if query.float_max is not None:
            rows = rows.filter(wear__lte=query.float_max)
        page = rows.select_related("bot").order_by("price", "id")[
            query.offset : query.offset + query.limit
        ]
        return [listing_of(row) for row in page]

    def price_floors(self, catalog_ids: list[str]) -> PriceFloors:
        rows = (
            SandboxListing.objects.filter(item_id__in=catalog_ids)
            .values_list("item_id", "phase", "delivery")
            .annotate(floor=Min("price"))
        )
        return {(item_id, phase, delivery): floor for item_id, phase, delivery, floor in rows}

    def own_stock(self, catalog_ids: list[str]) -> dict[str, int]:
        rows = (
            SandboxListing.objects.filter(item_id__in=catalog_ids, delivery="instant")
            .values_list("item_id")
            .annotate(n=Count("id"))
        )
        return dict(rows)

    def listing_id_valid(self, *, game: int, listing_id: str) -> bool:
        if game == CS_GAME:
            try:
                return str(uuid.UUID(listing_id)) == listing_id.lower()
            except ValueError:
                return False
        return bool(RUST_LISTING_ID.match(listing_id)) and listing_id.startswith(f"{game}-")

    def listings_lookup(self, listing_ids: list[str]) -> dict[str, Listing | None]:
        found: dict[str, Listing | None] = {
            row.id: listing_of(row)
            for row in SandboxListing.objects.select_related("bot").filter(id__in=listing_ids)
        }
        sold = SandboxPurchase.objects.filter(
            listing_id__in=[i for i in listing_ids if i not in found]
        ).values_list("listing_id", flat=True)
        found.update(dict.fromkeys(sold))
        return found

    def purchase(
        self, *, listing_id: str, max_price: Decimal, key: str, amount: int = 1
    ) -> PurchaseResult:
        with transaction.atomic():
            earlier = SandboxPurchase.objects.filter(key=key).first()
            if earlier is not None:
                return _purchase_result(earlier)
            row = (
                SandboxListing.objects.select_for_update(of=("self",), no_key=True)
                .select_related("bot")
                .filter(pk=listing_id)
                .first()
            )
            # A twin request with the same key may have bought while we waited for the lock.
            earlier = SandboxPurchase.objects.filter(key=key).first()
            if earlier is not None:
                return _purchase_result(earlier)
            if row is None or row.amount < amount:
                return PurchaseResult(ok=False, reason="LISTING_UNAVAILABLE")
            if row.price > max_price:
                return PurchaseResult(ok=False, reason="PRICE_CHANGED", price=row.price)
            was_floor = not SandboxListing.objects.filter(
                item_id=row.item_id, delivery=row.delivery, price__lt=row.price
            ).exists()
            try:
                with transaction.atomic():
                    purchase = SandboxPurchase.objects.create(
                        key=key,
                        listing_id=row.id,
                        item_id=row.item_id,
                        listing=listing_snapshot(row),
                        price=row.price,
                        amount=amount,
                        created_at=clock.now(),
                    )
            except IntegrityError:
                # The twin bought another listing under our key first: that is our purchase.
                return _purchase_result(SandboxPurchase.objects.get(key=key))
            if row.amount > amount:
                row.amount -= amount
                row.save(update_fields=["amount"])
                market_listings_changed(repriced=[listing_of(row)])
            else:
                market_listings_changed(gone=[listing_of(row)])
                row.delete()
            if was_floor or row.delivery == "instant":
                transaction.on_commit(market_version_bump)
        return _purchase_result(purchase)

    def purchase_get(self, *, key: str) -> PurchaseResult | None:
        earlier = SandboxPurchase.objects.filter(key=key).first()
        return _purchase_result(earlier) if earlier is not None else None

    def cheapest(
        self, *, catalog_id: str, phase: str, delivery: str, ceiling: Decimal, limit: int
    ) -> list[Listing]:
        rows = SandboxListing.objects.filter(
            item_id=catalog_id, delivery=delivery, price__lte=ceiling
        )
        if phase:
            rows = rows.filter(phase=phase)
        return [
            listing_of(row) for row in rows.select_related("bot").order_by("price", "id")[:limit]
        ]

    def cancel(self, *, ref: str) -> bool:
        return bool(
            SandboxPurchase.objects.filter(key=ref, status=SandboxPurchase.Status.ACCEPTED).update(
                status=SandboxPurchase.Status.CANCELED
            )
        )


def listing_snapshot(row: SandboxListing) -> dict[str, Any]:
    return {
        "id": row.id,
        "item_id": row.item_id,
        "game": row.game,
        "market_hash_name": row.market_hash_name,
        "popularity": row.popularity,
        "price": str(row.price),
        "delivery": row.delivery,
        "phase": row.phase,
        "paint_index": row.paint_index,
        "wear": str(row.wear) if row.wear is not None else None,
        "paint_seed": row.paint_seed,
        "stickers": row.stickers,
        "charm": row.charm,
        "prop_id": row.prop_id,
        "preview_token": row.preview_token,
        "bot_id": row.bot_id,
        "amount": row.amount,
    }


def listing_from_snapshot(snapshot: dict[str, Any]) -> SandboxListing:
    fields = dict(snapshot)
    fields["price"] = Decimal(fields["price"])
    fields["wear"] = Decimal(fields["wear"]) if fields["wear"] is not None else None
    return SandboxListing(**fields)


def _purchase_result(purchase: SandboxPurchase) -> PurchaseResult:
    return PurchaseResult(
        ok=True,
        ref=purchase.key,
        price=purchase.price,
        listing=listing_of(listing_from_snapshot(purchase.listing)),
    )
