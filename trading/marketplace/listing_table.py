"""Market reads over a table of listings (the sandbox's, the suppliers' snapshot), searched the
same way whichever table holds them.

A search splits the matching catalog items (trigram index) into segments that sort apart: for
``relevance`` the exact name, then names starting with the search, then the rest; for the other
sorts one segment. Each segment is read the cheapest way: few items, each item's own sorted
listings merged (a LATERAL top-N per item); many items, the global sort index walked and
filtered by item. Segment sizes (for paging and ``count``) are cached for a few seconds.

The table needs the columns and indexes the sandbox's listing has: ``item`` (catalog id),
``game``, ``market_hash_name`` and ``popularity`` copied from the catalog, ``price``,
``delivery``, ``phase``, ``wear``, and indexes on (game, price, id), (game, -popularity, item,
price, id), (game, market_hash_name, price, id) and (item, price, id).
"""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.core.cache import cache
from django.db import connection, connections
from django.db.models import Count, Min, Model, Q, QuerySet

from core.db import read_alias
from core.market_version import market_version
from trading.marketplace.base import (
    ItemListingsQuery,
    Listing,
    MarketQuery,
    MarketSort,
    PriceFloors,
)
from trading.models import CatalogItem

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


def _segments(query: MarketQuery) -> list[tuple[str, Q]]:
    """(name, catalog filter) of each part of the match set, in the order they sort."""
    contains = Q(game=query.game, market_hash_name__icontains=query.search)
    if query.sort is not MarketSort.RELEVANCE:
        return [("all", contains)]
    exact = Q(game=query.game, market_hash_name__iexact=query.search)
    prefix = Q(game=query.game, market_hash_name__istartswith=query.search) & ~exact
    return [("exact", exact), ("prefix", prefix), ("rest", contains & ~Q(prefix | exact))]


@dataclass(frozen=True)
class ListingTable:
    """The market reads of one listings table. ``to_listing`` turns a row (with ``related``
    loaded) into the domain's listing; ``name`` keeps its cached counts apart."""

    model: type[Model]
    to_listing: Callable[[Any], Listing]
    name: str
    related: tuple[str, ...] = ()

    @property
    def table(self) -> str:
        return str(self.model._meta.db_table)

    def rows(self) -> QuerySet[Any]:
        return self.model._default_manager.all()

    def _loaded(self, rows: QuerySet[Any]) -> QuerySet[Any]:
        return rows.select_related(*self.related) if self.related else rows

    def _price_bounds(self, rows: QuerySet[Any], query: MarketQuery) -> QuerySet[Any]:
        if query.min_price is not None:
            rows = rows.filter(price__gte=query.min_price)
        if query.max_price is not None:
            rows = rows.filter(price__lte=query.max_price)
        return rows

    def search(self, query: MarketQuery) -> tuple[list[Listing], int]:
        if not query.search:
            rows = self._price_bounds(self.rows().filter(game=query.game), query)
            page_ids = list(
                rows.order_by(*ORDERINGS[query.sort]).values_list("id", flat=True)[
                    query.offset : query.offset + query.limit
                ]
            )
            total = self._count(rows, query, "all")
        else:
            page_ids, total = self._search_segments(query)
        found = self._loaded(self.rows()).in_bulk(page_ids)
        return [self.to_listing(found[i]) for i in page_ids if i in found], total

    def _search_segments(self, query: MarketQuery) -> tuple[list[str], int]:
        skip, want, total = query.offset, query.limit, 0
        page: list[str] = []
        for name, matching in _segments(query):
            catalog = CatalogItem.objects.filter(matching)
            item_ids = list(catalog.values_list("id", flat=True)[: LATERAL_MAX_ITEMS + 1])
            few = len(item_ids) <= LATERAL_MAX_ITEMS and connection.vendor == "postgresql"
            rows = self._price_bounds(
                self.rows().filter(item_id__in=item_ids if few else catalog.values("id")),
                query,
            )
            size = self._count(rows, query, name) if item_ids else 0
            total += size
            if want == 0 or skip >= size:
                skip -= min(skip, size)
                continue
            if query.sort in ITEM_ORDERS and connection.vendor == "postgresql":
                ids = self._item_ordered_page(catalog, query, skip, want)
            elif few:
                ids = self._lateral_page(item_ids, query, skip, want)
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

    def _lateral_page(
        self, item_ids: list[str], query: MarketQuery, offset: int, limit: int
    ) -> list[str]:
        """Price order over few items: each item's cheapest (dearest) listings, merged."""
        inner, outer = LATERAL_ORDERS[query.sort]
        params: dict[str, Any] = {
            "ids": item_ids,
            "window": offset + limit,
            "limit": limit,
            "offset": offset,
        }
        bounds = _bounds(query, params)
        # Only fixed fragments (the table, the orders above, the bounds) are spliced in; values
        # are parameters.
        return _page_ids(
            "SELECT l.id FROM trading_catalogitem c CROSS JOIN LATERAL ("  # noqa: S608
            f" SELECT s.id, s.price FROM {self.table} s WHERE s.item_id = c.id{bounds}"
            f" ORDER BY {inner} LIMIT %(window)s) l"
            f" WHERE c.id = ANY(%(ids)s) ORDER BY {outer} LIMIT %(limit)s OFFSET %(offset)s",
            params,
        )

    def _item_ordered_page(
        self, catalog: QuerySet[CatalogItem], query: MarketQuery, offset: int, limit: int
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
            f" SELECT s.id, s.price FROM {self.table} s WHERE s.item_id = c.id{bounds}"
            f" ORDER BY {order}) l ORDER BY {items}, {listing_order}"
            " LIMIT %(limit)s OFFSET %(offset)s",
            params,
        )

    def _count(self, rows: QuerySet[Any], query: MarketQuery, segment: str) -> int:
        """Cached for a few seconds: counting a million rows on every page turn is not worth it."""
        shape = f"{query.game}|{query.search.upper()}|{query.min_price}|{query.max_price}|{segment}"
        key = (
            f"{self.name}-market-count:{market_version()}:"
            + hashlib.sha256(shape.encode()).hexdigest()
        )
        return int(cache.get_or_set(key, rows.count, timeout=COUNT_TTL_SECONDS) or 0)

    def item_listings(self, query: ItemListingsQuery) -> list[Listing]:
        rows = self.rows().filter(item_id=query.catalog_id)
        if query.phase:
            rows = rows.filter(phase=query.phase)
        if query.float_min is not None:
            rows = rows.filter(wear__gte=query.float_min)
        if query.float_max is not None:
            rows = rows.filter(wear__lte=query.float_max)
        page = self._loaded(rows).order_by("price", "id")[query.offset : query.offset + query.limit]
        return [self.to_listing(row) for row in page]

    def price_floors(self, catalog_ids: list[str]) -> PriceFloors:
        rows = (
            self.rows()
            .filter(item_id__in=catalog_ids)
            .values_list("item_id", "phase", "delivery")
            .annotate(floor=Min("price"))
        )
        return {(item_id, phase, delivery): floor for item_id, phase, delivery, floor in rows}

    def own_stock(self, catalog_ids: list[str]) -> dict[str, int]:
        rows = (
            self.rows()
            .filter(item_id__in=catalog_ids, delivery="instant")
            .values_list("item_id")
            .annotate(n=Count("id"))
        )
        return dict(rows)

    def cheapest(
        self,
        *,
        catalog_id: str,
        phase: str,
        delivery: str,
        ceiling: Decimal,
        limit: int,
    ) -> list[Listing]:
        rows = self.rows().filter(item_id=catalog_id, delivery=delivery, price__lte=ceiling)
        if phase:
            rows = rows.filter(phase=phase)
        return [self.to_listing(row) for row in self._loaded(rows).order_by("price", "id")[:limit]]
