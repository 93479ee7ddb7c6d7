"""The sandbox marketplace: listings in the service's own database, searched like the real one.

A search first finds the matching catalog items (trigram index). Few matches: each item's
cheapest listings come from its own index and are merged (a LATERAL top-N per item). Many
matches: the global sort index is walked and filtered by item. Counts are cached briefly.
"""

import hashlib
import re
import uuid
from decimal import Decimal
from typing import Any

from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import Case, Count, IntegerField, Min, QuerySet, Value, When

from config import clock
from trading.marketplace.base import (
    ItemListingsQuery,
    Listing,
    MarketQuery,
    MarketSort,
    PriceFloors,
    PurchaseResult,
)
from trading.models import CatalogItem, SandboxListing, SandboxPurchase
from trading.platform.base import BotInfo
from trading.sandbox.names import CS_GAME

VERSION_KEY = "sandbox-market-version"
# First-game listings are UUIDs; second-game ones are compound: <catalog id>-<sequence>.
RUST_LISTING_ID = re.compile(r"^\d+-\d{6}-\d{8}$")
COUNT_TTL_SECONDS = 10
# Above this many matching items, walking the global sort index beats merging per-item lists.
LATERAL_MAX_ITEMS = 500

ORDERINGS: dict[MarketSort, tuple[str, ...]] = {
    MarketSort.RELEVANCE: ("-popularity", "price", "id"),
    MarketSort.PRICE_ASC: ("price", "id"),
    MarketSort.PRICE_DESC: ("-price", "-id"),
    MarketSort.NAME_ASC: ("market_hash_name", "price", "id"),
    MarketSort.NAME_DESC: ("-market_hash_name", "-price", "-id"),
}
# (order of each item's own listings, order of the merged page) for the LATERAL plan.
LATERAL_ORDERS: dict[MarketSort, tuple[str, str]] = {
    MarketSort.RELEVANCE: ("s.price, s.id", "c.popularity DESC, l.price, l.id"),
    MarketSort.PRICE_ASC: ("s.price, s.id", "l.price, l.id"),
    MarketSort.PRICE_DESC: ("s.price DESC, s.id DESC", "l.price DESC, l.id DESC"),
    MarketSort.NAME_ASC: ("s.price, s.id", "c.market_hash_name, l.price, l.id"),
    MarketSort.NAME_DESC: (
        "s.price DESC, s.id DESC",
        "c.market_hash_name DESC, l.price DESC, l.id DESC",
    ),
}
# Relevance with a search: exact names first, then names starting with it, then the rest.
LATERAL_RELEVANCE_RANK = (
    "CASE WHEN UPPER(c.market_hash_name) = UPPER(%(search)s) THEN 0"
    " WHEN STARTS_WITH(UPPER(c.market_hash_name), UPPER(%(search)s)) THEN 1 ELSE 2 END"
)


def _listing(row: SandboxListing) -> Listing:
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


def market_version_bump() -> None:
    cache.set(VERSION_KEY, uuid.uuid4().hex, timeout=None)


def _price_bounds(rows: QuerySet[SandboxListing], query: MarketQuery) -> QuerySet[SandboxListing]:
    if query.min_price is not None:
        rows = rows.filter(price__gte=query.min_price)
    if query.max_price is not None:
        rows = rows.filter(price__lte=query.max_price)
    return rows


def _lateral_page(item_ids: list[str], query: MarketQuery) -> list[str]:
    inner, outer = LATERAL_ORDERS[query.sort]
    bounds = ""
    params: dict[str, Any] = {
        "ids": item_ids,
        "window": query.offset + query.limit,
        "limit": query.limit,
        "offset": query.offset,
    }
    if query.sort is MarketSort.RELEVANCE:
        outer = f"{LATERAL_RELEVANCE_RANK}, {outer}"
        params["search"] = query.search
    if query.min_price is not None:
        bounds += " AND s.price >= %(min)s"
        params["min"] = query.min_price
    if query.max_price is not None:
        bounds += " AND s.price <= %(max)s"
        params["max"] = query.max_price
    # Only the fixed fragments of LATERAL_ORDERS and the bounds above are spliced in; every
    # value is a parameter.
    sql = (
        "SELECT l.id FROM trading_catalogitem c CROSS JOIN LATERAL ("  # noqa: S608
        f" SELECT s.id, s.price FROM trading_sandboxlisting s WHERE s.item_id = c.id{bounds}"
        f" ORDER BY {inner} LIMIT %(window)s) l"
        f" WHERE c.id = ANY(%(ids)s) ORDER BY {outer} LIMIT %(limit)s OFFSET %(offset)s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def _ordered(rows: QuerySet[SandboxListing], query: MarketQuery) -> QuerySet[SandboxListing]:
    ordering = ORDERINGS[query.sort]
    if query.sort is MarketSort.RELEVANCE and query.search:
        # Exact names first, then names starting with the search, then the rest.
        rank = Case(
            When(market_hash_name__iexact=query.search, then=Value(0)),
            When(market_hash_name__istartswith=query.search, then=Value(1)),
            default=Value(2),
            output_field=IntegerField(),
        )
        return rows.annotate(rank=rank).order_by("rank", *ordering)
    return rows.order_by(*ordering)


class SandboxMarketplace:
    def search(self, query: MarketQuery) -> tuple[list[Listing], int]:
        rows = _price_bounds(SandboxListing.objects.filter(game=query.game), query)
        page_ids: list[str] | None = None
        if query.search:
            item_ids = list(
                CatalogItem.objects.filter(
                    game=query.game, market_hash_name__icontains=query.search
                ).values_list("id", flat=True)[: LATERAL_MAX_ITEMS + 1]
            )
            if len(item_ids) <= LATERAL_MAX_ITEMS and connection.vendor == "postgresql":
                page_ids = _lateral_page(item_ids, query)
                rows = _price_bounds(SandboxListing.objects.filter(item_id__in=item_ids), query)
            else:
                matching = CatalogItem.objects.filter(
                    game=query.game, market_hash_name__icontains=query.search
                ).values("id")
                rows = rows.filter(item_id__in=matching)
        if page_ids is None:
            ordered = _ordered(rows, query)
            page_ids = list(
                ordered.values_list("id", flat=True)[query.offset : query.offset + query.limit]
            )
        found = SandboxListing.objects.select_related("bot").in_bulk(page_ids)
        return [_listing(found[i]) for i in page_ids if i in found], self._count(rows, query)

    def _count(self, rows: QuerySet[SandboxListing], query: MarketQuery) -> int:
        """Cached for a few seconds: counting a million rows on every page turn is not worth it."""
        shape = f"{query.game}|{query.search.upper()}|{query.min_price}|{query.max_price}"
        key = (
            f"sandbox-market-count:{self.price_version()}:"
            + hashlib.sha256(shape.encode()).hexdigest()
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
        return [_listing(row) for row in page]

    def price_floors(self, game: int) -> PriceFloors:
        rows = (
            SandboxListing.objects.filter(game=game)
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

    def price_version(self) -> str:
        return str(cache.get_or_set(VERSION_KEY, lambda: uuid.uuid4().hex, timeout=None))

    def listing_id_valid(self, *, game: int, listing_id: str) -> bool:
        if game == CS_GAME:
            try:
                return str(uuid.UUID(listing_id)) == listing_id.lower()
            except ValueError:
                return False
        return bool(RUST_LISTING_ID.match(listing_id)) and listing_id.startswith(f"{game}-")

    def listings_lookup(self, listing_ids: list[str]) -> dict[str, Listing | None]:
        found: dict[str, Listing | None] = {
            row.id: _listing(row)
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
                SandboxListing.objects.select_for_update(of=("self",))
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
                        listing=_listing_snapshot(row),
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
            else:
                row.delete()
            if was_floor or row.delivery == "instant":
                transaction.on_commit(market_version_bump)
        return _purchase_result(purchase)

    def cheapest(
        self, *, catalog_id: str, phase: str, delivery: str, ceiling: Decimal, limit: int
    ) -> list[Listing]:
        rows = SandboxListing.objects.filter(
            item_id=catalog_id, delivery=delivery, price__lte=ceiling
        )
        if phase:
            rows = rows.filter(phase=phase)
        return [_listing(row) for row in rows.select_related("bot").order_by("price", "id")[:limit]]

    def cancel(self, *, ref: str) -> bool:
        return bool(
            SandboxPurchase.objects.filter(key=ref, status=SandboxPurchase.Status.ACCEPTED).update(
                status=SandboxPurchase.Status.CANCELED
            )
        )


def _listing_snapshot(row: SandboxListing) -> dict[str, Any]:
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


def _from_snapshot(snapshot: dict[str, Any]) -> SandboxListing:
    fields = dict(snapshot)
    fields["price"] = Decimal(fields["price"])
    fields["wear"] = Decimal(fields["wear"]) if fields["wear"] is not None else None
    return SandboxListing(**fields)


def _purchase_result(purchase: SandboxPurchase) -> PurchaseResult:
    return PurchaseResult(
        ok=True,
        ref=purchase.key,
        price=purchase.price,
        listing=_listing(_from_snapshot(purchase.listing)),
    )
