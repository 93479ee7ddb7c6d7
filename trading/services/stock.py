"""The service's own stock: items its bots hold, put on sale by staff as ``instant`` listings
of the supplier marketplace (``stock-<asset id>``). A buy takes the listing off the market and
the bot holding the item offers it to the recipient (``services.deliveries``)."""

from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction

from core import clock
from core.errors import DomainError
from trading.marketplace.base import Delivery
from trading.marketplace.suppliers.accounts import supplier_row
from trading.marketplace.suppliers.base import listing_id_of
from trading.marketplace.suppliers.clients import SUPPLIER_MARKETPLACE
from trading.marketplace.suppliers.marketplace import STOCK, listings_changed, supplier_listing_of
from trading.models import CatalogItem, SupplierListing
from trading.platform import get_platform
from trading.platform.base import PlatformError
from trading.pricing import CENT


def stock_listing_add(
    *, bot_platform_id: str, game: int, asset_id: str, price: Decimal
) -> SupplierListing:
    """List an item the bot holds at ``price`` (what it is sourced at: the merchant's fee is
    added on top, as for a supplier's listing). The bot's inventory is read first (no
    transaction open): the item must be there, tradable, and in the catalog."""
    if settings.MARKETPLACE != SUPPLIER_MARKETPLACE:
        raise DomainError("SERVICE_UNAVAILABLE", "Own stock is sold by the supplier marketplace.")
    if price <= 0 or price != price.quantize(CENT):
        raise DomainError("VALIDATION_FAILED", "The price is whole cents above 0.")
    try:
        held = get_platform().inventory(bot_platform_id, game, tenant="")
    except PlatformError as exc:
        raise DomainError("PLATFORM_UNAVAILABLE", str(exc)) from exc
    asset = next((a for a in held if a.asset_id == asset_id), None)
    if asset is None or not asset.tradable:
        raise DomainError("ITEMS_UNAVAILABLE", f"{asset_id} is not a tradable item of the bot.")
    item = CatalogItem.objects.filter(game=game, market_hash_name=asset.market_hash_name).first()
    if item is None:
        raise DomainError("LISTING_NOT_FOUND", f"{asset.market_hash_name} is not in the catalog.")
    row = SupplierListing(
        id=listing_id_of(STOCK, asset_id),
        supplier=supplier_row(STOCK),
        supplier_ref=asset_id,
        asset_ref=asset_id,
        item=item,
        game=game,
        market_hash_name=item.market_hash_name,
        popularity=item.popularity,
        price=price,
        supplier_price=price,
        delivery=Delivery.INSTANT,
        phase=asset.phase,
        paint_index=asset.paint_index,
        wear=asset.wear,
        paint_seed=asset.paint_seed,
        bot_platform_id=bot_platform_id,
        seen_at=clock.now(),
    )
    try:
        with transaction.atomic():
            row.save(force_insert=True)
            listings_changed(appeared=[supplier_listing_of(row)])
    except IntegrityError as exc:
        raise DomainError("VALIDATION_FAILED", f"{asset_id} is listed already.") from exc
    return row
