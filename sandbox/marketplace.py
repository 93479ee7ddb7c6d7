"""The sandbox marketplace: listings in the service's own database, searched like the real one
(``trading.marketplace.listing_table``)."""

import re
import uuid
from decimal import Decimal
from typing import Any

from django.db import connection, transaction

from core import clock
from core.db import ModelRows, row_lock
from core.market_version import market_version_bump
from sandbox.models import SandboxBot, SandboxListing, SandboxPurchase
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
            row = _listing_locked(listing_id)
            if row is None or row.amount < amount or row.price > max_price:
                # A twin request with the same key may have bought it while we waited for the
                # lock, or bought before: then the listing's state is no answer, the twin's is.
                earlier = SandboxPurchase.objects.filter(key=key).first()
                if earlier is not None:
                    return _purchase_result(earlier)
                if row is None or row.amount < amount:
                    return PurchaseResult(ok=False, reason="LISTING_UNAVAILABLE")
                return PurchaseResult(ok=False, reason="PRICE_CHANGED", price=row.price)
            listing = listing_of(row)
            was_floor = _purchase_insert(row=row, key=key, amount=amount)
            if was_floor is None:
                # The twin bought (this listing or another) under our key first: that is our
                # purchase, and this listing stays as it is.
                return _purchase_result(SandboxPurchase.objects.get(key=key))
            with connection.cursor() as cursor:
                if row.amount > amount:
                    row.amount -= amount
                    cursor.execute(
                        _LISTING_AMOUNT,
                        [_LISTINGS.param("amount", row.amount), _LISTINGS.param("id", row.id)],
                    )
                    market_listings_changed(repriced=[listing_of(row)])
                else:
                    market_listings_changed(gone=[listing])
                    cursor.execute(_LISTING_DELETE, [_LISTINGS.param("id", row.id)])
            if was_floor or row.delivery == "instant":
                transaction.on_commit(market_version_bump)
        return PurchaseResult(ok=True, ref=key, price=row.price, listing=listing)

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


# The purchase's statements, run once a bought item, written out by hand (``core.db.ModelRows``):
# compiling them through the ORM cost more CPU than running them. Built from model metadata
# only; every value goes as a parameter.
_LISTINGS = ModelRows(SandboxListing)
_BOTS = ModelRows(SandboxBot)
_BOUGHT_FIELDS = [
    "key",
    "listing_id",
    "item_id",
    "amount",
    "listing",
    "price",
    "status",
    "created_at",
]
_PURCHASES = ModelRows(SandboxPurchase, only=_BOUGHT_FIELDS)
_LISTING_TABLE = _LISTINGS.table()
_LISTING_ID, _LISTING_BOT, _LISTING_AMOUNT_COLUMN = _LISTINGS.quoted(["id", "bot", "amount"])
_LISTING_LOCKED = (
    f"SELECT {_LISTINGS.columns(_LISTING_TABLE)}, {_BOTS.columns('b')}"  # noqa: S608
    f" FROM {_LISTING_TABLE} LEFT JOIN {_BOTS.table('b')}"
    f" ON b.id = {_LISTING_TABLE}.{_LISTING_BOT}"
    f" WHERE {_LISTING_TABLE}.{_LISTING_ID} = %s"
)
_ITEM, _DELIVERY, _PRICE = _LISTINGS.quoted(["item", "delivery", "price"])
# ON CONFLICT instead of a savepoint around the insert for a twin's key (two round trips). The
# floor is asked in the same statement, as a separate one would have: after the listing's lock.
_CHEAPER = (
    f"SELECT 1 FROM {_LISTINGS.table('f')}"  # noqa: S608
    f" WHERE f.{_ITEM} = %s AND f.{_DELIVERY} = %s AND f.{_PRICE} < %s"
)
_PURCHASE_INSERT = _PURCHASES.insert(_BOUGHT_FIELDS) + (
    f" ON CONFLICT ({_PURCHASES.quoted(['key'])[0]}) DO NOTHING RETURNING NOT EXISTS ({_CHEAPER})"
)
_LISTING_AMOUNT = (
    f"UPDATE {_LISTING_TABLE} SET {_LISTING_AMOUNT_COLUMN} = %s WHERE {_LISTING_ID} = %s"  # noqa: S608
)
_LISTING_DELETE = f"DELETE FROM {_LISTING_TABLE} WHERE {_LISTING_ID} = %s"  # noqa: S608


def _listing_locked(listing_id: str) -> SandboxListing | None:
    """The listing with its bot, locked (the listing's row only)."""
    with connection.cursor() as cursor:
        cursor.execute(
            _LISTING_LOCKED + row_lock(of=_LISTING_TABLE), [_LISTINGS.param("id", listing_id)]
        )
        found = cursor.fetchone()
    if found is None:
        return None
    row: SandboxListing = _LISTINGS.build(found[: _LISTINGS.width])
    # Without a bot, listing_of finds ``row.bot`` None without a query (the key is null).
    if row.bot_id is not None:
        row.bot = _BOTS.build(found[_LISTINGS.width :])
    return row


def _purchase_insert(*, row: SandboxListing, key: str, amount: int) -> bool | None:
    """Record the purchase of ``amount`` units of the locked listing ``row`` under ``key``:
    whether the listing was its item's cheapest of its delivery (the market version then
    changes), or None when a purchase under ``key`` exists already (nothing recorded)."""
    bought = [
        key,
        row.id,
        row.item_id,
        amount,
        listing_snapshot(row),
        row.price,
        SandboxPurchase.Status.ACCEPTED,
        clock.now(),
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            _PURCHASE_INSERT,
            [
                *_PURCHASES.params(_BOUGHT_FIELDS, bought),
                _LISTINGS.param("item", row.item_id),
                _LISTINGS.param("delivery", row.delivery),
                _LISTINGS.param("price", row.price),
            ],
        )
        inserted = cursor.fetchone()
    return None if inserted is None else bool(inserted[0])


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
