"""The sandbox marketplace: listings in the service's own database, searched like the real one."""

import uuid

from django.core.cache import cache
from django.db.models import Case, Count, IntegerField, Min, QuerySet, Value, When

from trading.marketplace.base import (
    ItemListingsQuery,
    Listing,
    MarketQuery,
    MarketSort,
    PriceFloors,
)
from trading.models import CatalogItem, SandboxListing
from trading.platform.base import BotInfo

VERSION_KEY = "sandbox-market-version"

ORDERINGS: dict[MarketSort, tuple[str, ...]] = {
    MarketSort.RELEVANCE: ("-popularity", "price", "id"),
    MarketSort.PRICE_ASC: ("price", "id"),
    MarketSort.PRICE_DESC: ("-price", "-id"),
    MarketSort.NAME_ASC: ("market_hash_name", "price", "id"),
    MarketSort.NAME_DESC: ("-market_hash_name", "price", "id"),
}


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


class SandboxMarketplace:
    def search(self, query: MarketQuery) -> tuple[list[Listing], int]:
        rows = SandboxListing.objects.filter(game=query.game)
        if query.search:
            # The trigram index of the (small) catalog finds the names; listings follow by item.
            matching = CatalogItem.objects.filter(
                game=query.game, market_hash_name__icontains=query.search
            ).values("id")
            rows = rows.filter(item_id__in=matching)
        if query.min_price is not None:
            rows = rows.filter(price__gte=query.min_price)
        if query.max_price is not None:
            rows = rows.filter(price__lte=query.max_price)
        ordered = self._ordered(rows, query)
        page = ordered.select_related("bot")[query.offset : query.offset + query.limit]
        return [_listing(row) for row in page], rows.count()

    @staticmethod
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
