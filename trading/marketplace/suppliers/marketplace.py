"""The marketplace of real suppliers (``MARKETPLACE=trading.marketplace.suppliers.marketplace.
SupplierMarketplace``): market reads from the local snapshot of every supplier's listings (one
table, searched like the sandbox's), buys routed to the supplier a listing id names.

A buy is an ``SupplierOrder`` row written (and committed) before the supplier is asked, under
our reference, so an answer lost on the way is reconciled by that reference before the unit is
retried, bought elsewhere or refunded; until then the unit's calls raise
``PurchaseOutcomeUnknownError``. What a buy teaches about the listing (sold, gone, a new price)
changes the snapshot at once and is told to the market (``LISTINGS_CHANGED``)."""

import hashlib
import re
from collections.abc import Callable, Sequence
from datetime import timedelta
from decimal import ROUND_CEILING, Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F

from core import clock
from core.market_version import market_version_bump
from trading.marketplace.base import (
    Delivery,
    HeldItem,
    ItemListingsQuery,
    Listing,
    MarketplaceUnavailableError,
    MarketQuery,
    PriceFloors,
    PurchaseOutcomeUnknownError,
    PurchaseResult,
)
from trading.marketplace.listing_table import ListingTable
from trading.marketplace.suppliers.accounts import supplier_call, supplier_row, supplier_usable
from trading.marketplace.suppliers.base import (
    BuyRequest,
    OrderRef,
    SupplierClient,
    SupplierOutcomeUnknownError,
    SupplierRefusedError,
    SupplierUnavailableError,
    listing_id_parts,
)
from trading.marketplace.suppliers.clients import supplier_clients
from trading.models import SupplierListing, SupplierOrder

CENT = Decimal("0.01")
# A lost answer is asked about after this long (Waxpeer: "one minute after the request").
RECONCILE_AFTER = timedelta(seconds=60)
# The service's own stock: items its bots hold, sold as ``instant`` listings (``stock-<asset
# id>``), bought without asking anyone and handed over by the bot.
STOCK = "stock"
OFFER_REF_SHAPES = {
    STOCK: re.compile(r"^\d{1,30}$"),
    "waxpeer": re.compile(r"^\d{1,30}$"),
    "dmarket": re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"),
}

# What learns that listings appeared, changed or went (the market's feed, filled by the app):
# called as (appeared, repriced, gone) inside the transaction that changed the snapshot.
ListingsChanged = Callable[[Sequence[Listing], Sequence[Listing], Sequence[Listing]], None]
LISTINGS_CHANGED: list[ListingsChanged] = []


def market_price(supplier_price: Decimal) -> Decimal:
    """What a unit costs us in the market's cents: the supplier's exact price rounded up."""
    return supplier_price.quantize(CENT, rounding=ROUND_CEILING)


def supplier_listing_of(row: SupplierListing) -> Listing:
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
    )


LISTINGS = ListingTable(model=SupplierListing, to_listing=supplier_listing_of, name="suppliers")


def listings_changed(
    *,
    appeared: Sequence[Listing] = (),
    repriced: Sequence[Listing] = (),
    gone: Sequence[Listing] = (),
) -> None:
    """Tell the market (in the caller's transaction) and move its version after commit."""
    if not (appeared or repriced or gone):
        return
    for handler in LISTINGS_CHANGED:
        handler(appeared, repriced, gone)
    transaction.on_commit(market_version_bump)


def order_reference(key: str, listing_id: str) -> str:
    """Our reference of one attempt (at most 50 characters, Waxpeer's ``project_id`` limit):
    the unit's key and the listing, so retrying the same attempt names the same purchase."""
    digest = hashlib.sha256(listing_id.encode()).hexdigest()[:12]
    return f"{key[:37]}-{digest}"


def listing_snapshot(row: SupplierListing, *, delivers_to: str = "") -> dict[str, Any]:
    """The listing as bought, and the bot that hands it over (its own stock's, or the one a
    supplier delivers to; "" when the supplier trades straight to the recipient)."""
    return {
        "id": row.id,
        "item_id": row.item_id,
        "game": row.game,
        "supplier_ref": row.supplier_ref,
        "asset_ref": row.asset_ref,
        "market_hash_name": row.market_hash_name,
        "price": str(row.price),
        "supplier_price": str(row.supplier_price),
        "phase": row.phase,
        "paint_index": row.paint_index,
        "wear": str(row.wear) if row.wear is not None else None,
        "paint_seed": row.paint_seed,
        "delivery": row.delivery,
        "bot_platform_id": row.bot_platform_id or delivers_to,
        "offer_type": row.offer_type,
    }


def listing_from_snapshot(snapshot: dict[str, Any]) -> Listing:
    return Listing(
        id=snapshot["id"],
        catalog_id=snapshot["item_id"],
        game=snapshot["game"],
        price=Decimal(snapshot["price"]),
        delivery=snapshot.get("delivery", Delivery.STANDARD),
        phase=snapshot["phase"],
        paint_index=snapshot["paint_index"],
        wear=Decimal(snapshot["wear"]) if snapshot["wear"] is not None else None,
        paint_seed=snapshot["paint_seed"],
    )


def order_result(order: SupplierOrder) -> PurchaseResult:
    bot = order.listing.get("bot_platform_id", "")
    held = None
    if bot:
        own = order.supplier_id == STOCK
        held = HeldItem(bot_platform_id=bot, asset_id=order.listing["asset_ref"] if own else "")
    return PurchaseResult(
        ok=True,
        ref=order.reference,
        price=order.price,
        listing=listing_from_snapshot(order.listing),
        held=held,
    )


def order_reconcile(order: SupplierOrder, client: SupplierClient) -> SupplierOrder:
    """Settle an order whose answer was lost, by asking the supplier for our reference once
    ``RECONCILE_AFTER`` has passed: bought (its delivery is then followed) or not bought.
    Until then, or while the supplier cannot answer, the outcome stays unknown."""
    if order.state not in (SupplierOrder.State.SENDING, SupplierOrder.State.UNKNOWN):
        return order
    # The supplier's minute, by its clock: real time. Asked sooner (another merchant's advance of
    # the sandbox clock), a purchase still under way would be taken for not bought and refunded.
    asked_at = clock.clock_shifts().real(order.updated_at)
    if clock.real_now() - asked_at < RECONCILE_AFTER:
        raise PurchaseOutcomeUnknownError
    ref = OrderRef(
        reference=order.reference,
        asset_ref=order.listing.get("asset_ref", ""),
        supplier_order_id=order.supplier_order_id,
    )
    try:
        found = supplier_call(
            client.name,
            "reconcile",
            lambda: client.trades([ref], game=order.listing["game"]).get(order.reference),
        )
    except (SupplierUnavailableError, SupplierOutcomeUnknownError) as exc:
        raise PurchaseOutcomeUnknownError from exc
    now = clock.now()
    if found is None:
        fields: dict[str, Any] = {
            "state": SupplierOrder.State.REFUSED,
            "reason": "not bought (reconciled by reference)",
            "next_check_at": None,
        }
    else:
        # Bought: the status sweep follows the trade from here (and refunds a cancel).
        fields = {
            "state": SupplierOrder.State.BOUGHT,
            "supplier_order_id": found.supplier_order_id or order.supplier_order_id,
            "next_check_at": now,
        }
    SupplierOrder.objects.filter(pk=order.pk, state=order.state).update(updated_at=now, **fields)
    order.refresh_from_db()
    return order


class SupplierMarketplace:
    def search(self, query: MarketQuery) -> tuple[list[Listing], int]:
        return LISTINGS.search(query)

    def item_listings(self, query: ItemListingsQuery) -> list[Listing]:
        return LISTINGS.item_listings(query)

    def price_floors(self, catalog_ids: list[str]) -> PriceFloors:
        return LISTINGS.price_floors(catalog_ids)

    def own_stock(self, catalog_ids: list[str]) -> dict[str, int]:
        """The bots' items listed for sale (``stock`` listings, all ``instant``)."""
        return LISTINGS.own_stock(catalog_ids)

    def cheapest(
        self, *, catalog_id: str, phase: str, delivery: str, ceiling: Decimal, limit: int
    ) -> list[Listing]:
        return LISTINGS.cheapest(
            catalog_id=catalog_id, phase=phase, delivery=delivery, ceiling=ceiling, limit=limit
        )

    def listing_id_valid(self, *, game: int, listing_id: str) -> bool:
        supplier, offer_ref = listing_id_parts(listing_id)
        shape = OFFER_REF_SHAPES.get(supplier)
        return shape is not None and bool(shape.match(offer_ref)) and len(listing_id) <= 80

    def listings_lookup(self, listing_ids: list[str]) -> dict[str, Listing | None]:
        found: dict[str, Listing | None] = {
            row.id: supplier_listing_of(row)
            for row in SupplierListing.objects.filter(id__in=listing_ids)
        }
        sold = SupplierOrder.objects.filter(
            listing_id__in=[i for i in listing_ids if i not in found],
            state__in=SupplierOrder.LIVE,
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
        earlier = self.purchase_get(key=key)
        if earlier is not None:
            return earlier
        supplier, _ = listing_id_parts(listing_id)
        if supplier == STOCK:
            return self._stock_purchase(listing_id=listing_id, max_price=max_price, key=key)
        client = supplier_clients().get(supplier)
        row = SupplierListing.objects.filter(pk=listing_id).first()
        if client is None or row is None or amount != 1:
            return PurchaseResult(ok=False, reason="LISTING_UNAVAILABLE")
        account = supplier_row(supplier)
        if not supplier_usable(account):
            raise MarketplaceUnavailableError
        if row.price > max_price:
            return PurchaseResult(ok=False, reason="PRICE_CHANGED", price=row.price)
        if account.balance is not None and account.balance < row.supplier_price:
            # Known short: not worth a refused call. The balance check refreshes it.
            raise MarketplaceUnavailableError
        order = self._order_start(row, key=key, trade_url=trade_url, delivers_to=client.delivers_to)
        if order is None:  # a twin run under the same key started first
            return self.purchase_get(key=key) or PurchaseResult(
                ok=False, reason="LISTING_UNAVAILABLE"
            )
        request = BuyRequest(
            reference=order.reference,
            offer_ref=row.supplier_ref,
            asset_ref=row.asset_ref,
            market_hash_name=row.market_hash_name,
            price=row.supplier_price,
            game=row.game,
            trade_url=trade_url,
            offer_type=row.offer_type,
        )
        try:
            supplier_order_id = supplier_call(supplier, "buy", lambda: client.buy(request))
        except SupplierOutcomeUnknownError as exc:
            self._order_end(order, SupplierOrder.State.UNKNOWN, str(exc))
            raise PurchaseOutcomeUnknownError from exc
        except SupplierUnavailableError as exc:
            self._order_end(order, SupplierOrder.State.REFUSED, f"not sent: {exc}")
            raise MarketplaceUnavailableError from exc
        except SupplierRefusedError as exc:
            self._order_end(order, SupplierOrder.State.REFUSED, f"{exc.reason}: {exc}")
            return self._refused(row, exc)
        with transaction.atomic():
            self._order_end(
                order, SupplierOrder.State.BOUGHT, "", supplier_order_id=supplier_order_id
            )
            order.refresh_from_db()
            if account.balance is not None:
                type(account).objects.filter(pk=supplier).update(
                    balance=F("balance") - row.supplier_price
                )
            if SupplierListing.objects.filter(pk=row.pk).delete()[0]:
                listings_changed(gone=[supplier_listing_of(row)])
        return order_result(order)

    def _stock_purchase(self, *, listing_id: str, max_price: Decimal, key: str) -> PurchaseResult:
        """One of our bots' items: taken off the market and ordered in one transaction under
        the listing's row lock (two buyers of one item: the second finds it gone). The bot hands
        it over (``held``); nobody else is asked."""
        if not supplier_usable(supplier_row(STOCK)):
            raise MarketplaceUnavailableError
        now = clock.now()
        try:
            with transaction.atomic():
                row = SupplierListing.objects.select_for_update().filter(pk=listing_id).first()
                if row is None:
                    return PurchaseResult(ok=False, reason="LISTING_UNAVAILABLE")
                if row.price > max_price:
                    return PurchaseResult(ok=False, reason="PRICE_CHANGED", price=row.price)
                order = SupplierOrder.objects.create(
                    supplier_id=STOCK,
                    key=key,
                    reference=order_reference(key, row.id),
                    listing_id=row.id,
                    listing=listing_snapshot(row),
                    price=row.price,
                    state=SupplierOrder.State.AT_BOT,
                    created_at=now,
                    updated_at=now,
                )
                row.delete()
                listings_changed(gone=[supplier_listing_of(row)])
        except IntegrityError:
            # A twin run under the same key ordered first: that order is this key's.
            return self.purchase_get(key=key) or PurchaseResult(
                ok=False, reason="LISTING_UNAVAILABLE"
            )
        return order_result(order)

    def _order_start(
        self, row: SupplierListing, *, key: str, trade_url: str, delivers_to: str
    ) -> SupplierOrder | None:
        """The attempt's row, committed before the supplier hears of it."""
        now = clock.now()
        try:
            with transaction.atomic():
                return SupplierOrder.objects.create(
                    supplier_id=row.supplier_id,
                    key=key,
                    reference=order_reference(key, row.id),
                    listing_id=row.id,
                    listing=listing_snapshot(row, delivers_to=delivers_to),
                    price=row.price,
                    trade_url=trade_url,
                    state=SupplierOrder.State.SENDING,
                    created_at=now,
                    updated_at=now,
                    next_check_at=now + RECONCILE_AFTER,
                )
        except IntegrityError:
            return None

    def _order_end(
        self, order: SupplierOrder, state: str, reason: str, *, supplier_order_id: str = ""
    ) -> None:
        now = clock.now()
        SupplierOrder.objects.filter(pk=order.pk, state=SupplierOrder.State.SENDING).update(
            state=state,
            reason=reason[:200],
            supplier_order_id=supplier_order_id,
            updated_at=now,
            next_check_at=(
                now
                if state == SupplierOrder.State.BOUGHT
                else now + RECONCILE_AFTER
                if state == SupplierOrder.State.UNKNOWN
                else None
            ),
        )

    def _refused(self, row: SupplierListing, exc: SupplierRefusedError) -> PurchaseResult:
        """What the refusal taught the snapshot: the listing is gone, or has a new price. A
        refusal about us (our balance), not the listing, is the supplier being unavailable."""
        if exc.reason == "SUPPLIER_REFUSED":
            raise MarketplaceUnavailableError from exc
        with transaction.atomic():
            if exc.reason == "PRICE_CHANGED" and exc.price is not None:
                row.supplier_price = exc.price
                row.price = market_price(exc.price)
                row.save(update_fields=["supplier_price", "price"])
                listings_changed(repriced=[supplier_listing_of(row)])
                return PurchaseResult(ok=False, reason="PRICE_CHANGED", price=row.price)
            if SupplierListing.objects.filter(pk=row.pk).delete()[0]:
                listings_changed(gone=[supplier_listing_of(row)])
        return PurchaseResult(ok=False, reason=exc.reason)

    def purchase_get(self, *, key: str) -> PurchaseResult | None:
        order = (
            SupplierOrder.objects.filter(key=key).exclude(state=SupplierOrder.State.REFUSED).first()
        )
        if order is None:
            return None
        client = supplier_clients().get(order.supplier_id)
        if order.state in (SupplierOrder.State.SENDING, SupplierOrder.State.UNKNOWN):
            if client is None:
                raise PurchaseOutcomeUnknownError
            order = order_reconcile(order, client)
        if order.state == SupplierOrder.State.REFUSED:
            return None
        return order_result(order)

    def cancel(self, *, ref: str) -> bool:
        """Neither supplier lets a buyer cancel a purchase: Waxpeer cancels an unsent trade by
        itself within minutes (the status sweep then refunds), DMarket's is done at once."""
        return False
