"""The sandbox marketplace: listings in the service's own database, searched like the real one
(``trading.marketplace.listing_table``)."""

import re
import uuid
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction

from core import clock
from core.market_version import market_version_bump
from sandbox.models import SandboxListing, SandboxPurchase
from trading.games import CS_GAME
from trading.market.services import market_listings_changed
from trading.marketplace.base import (
    ItemListingsQuery,
    Listing,
    MarketQuery,
    PriceFloors,
    PurchaseResult,
)
from trading.marketplace.listing_table import ListingTable
from trading.platform.base import BotInfo

# First-game listings are UUIDs; second-game ones are compound: <catalog id>-<sequence>.
RUST_LISTING_ID = re.compile(r"^\d+-\d{6}-\d{8}$")


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


LISTINGS = ListingTable(
    model=SandboxListing, to_listing=listing_of, name="sandbox", related=("bot",)
)


class SandboxMarketplace:
    def search(self, query: MarketQuery) -> tuple[list[Listing], int]:
        return LISTINGS.search(query)

    def item_listings(self, query: ItemListingsQuery) -> list[Listing]:
        return LISTINGS.item_listings(query)

    def price_floors(self, catalog_ids: list[str]) -> PriceFloors:
        return LISTINGS.price_floors(catalog_ids)

    def own_stock(self, catalog_ids: list[str]) -> dict[str, int]:
        return LISTINGS.own_stock(catalog_ids)

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
        self,
        *,
        listing_id: str,
        max_price: Decimal,
        key: str,
        amount: int = 1,
        trade_url: str = "",
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
        return LISTINGS.cheapest(
            catalog_id=catalog_id, phase=phase, delivery=delivery, ceiling=ceiling, limit=limit
        )

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
