"""Quick withdrawals: the cheapest listings of an item at or below a per-unit ceiling."""

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, Decimal

from django.db import transaction

from core.errors import DomainError
from merchants.models import Merchant
from trading.games import CS_GAME
from trading.market.selectors.listings import catalog_item_resolve
from trading.marketplace import get_marketplace
from trading.marketplace.base import (
    Listing,
    MarketplaceUnavailableError,
    PurchaseOutcomeUnknownError,
    PurchaseResult,
)
from trading.models import CatalogItem, Status, Trade, TradeItem
from trading.pricing import CENT, fee_inclusive, sourcing_ceiling
from trading.trades.channels import trade_events_publish
from trading.trades.services import Move, external_id_unused_check, trade_apply, trade_lock
from trading.trades.shapes import catalog_details
from trading.withdrawals.services.create import (
    Recipient,
    recipient_check,
    withdrawal_store,
)
from trading.withdrawals.services.handover import bot_delivery_expect
from trading.withdrawals.services.lifecycle import refund_item
from wallet.services import wallet_release


@dataclass(frozen=True)
class QuickOrder:
    """What a quick withdrawal buys: ``amount`` units of one catalog item (``item_id``, or
    without one its exact ``market_hash_name``) at ``max_price`` a unit at most, fee-inclusive.
    ``external_ids`` name the units in order (units past its end have none); ``trade_url``: the
    recipient's, when the order names one (a self buy)."""

    item_id: str | None
    market_hash_name: str | None
    max_price: Decimal
    amount: int
    delivery: str
    phase: str
    game: int
    external_id: str = ""
    external_ids: list[str] = field(default_factory=list)
    trade_url: str = ""


def quick_withdrawal_create(
    *, merchant: Merchant, source: str, recipient: Recipient, order: QuickOrder
) -> Trade:
    """One placeholder row per unit at the ceiling; the worst case is locked. More externalIds
    than units is 8."""
    amount, delivery, phase, game = order.amount, order.delivery, order.phase, order.game
    external_id, max_price = order.external_id, order.max_price
    unit_ids = list(order.external_ids)
    if len(unit_ids) > amount:
        raise DomainError(
            "TOO_MANY_ITEMS", f"{len(unit_ids)} externalIds for {amount} units: one per unit."
        )
    item = catalog_item_resolve(item_id=order.item_id, market_hash_name=order.market_hash_name)
    if item is None:
        raise DomainError("LISTING_NOT_FOUND", "No catalog item by that id or name.")
    if game != CS_GAME or item.game != CS_GAME:
        raise DomainError("QUICK_BUY_UNSUPPORTED_GAME")
    if not merchant.has_active_callback:
        raise DomainError("MERCHANT_NO_CALLBACK_URL")
    ceiling = sourcing_ceiling(max_price, merchant.withdraw_fee_rate)
    if ceiling <= 0:
        raise DomainError("INVALID_AMOUNT", "maxPrice leaves nothing once the fee is backed out.")
    external_id_unused_check(merchant=merchant, external_id=external_id)
    platform_id = recipient_check(merchant=merchant, trade_url=recipient.trade_url)
    # Fee-inclusive prices are whole cents, so no unit can cost more than maxPrice rounded down
    # to the cent: that is each row's worst-case lock (a fraction of a cent cannot be locked).
    unit_ceiling = max_price.quantize(CENT, rounding=ROUND_FLOOR)
    if not get_marketplace().cheapest(
        catalog_id=item.id, phase=phase, delivery=delivery, ceiling=ceiling, limit=1
    ):
        raise DomainError("INSUFFICIENT_ITEM_AMOUNT", "No listing at or below maxPrice now.")
    unit_ids += [""] * (amount - len(unit_ids))
    rows = [
        TradeItem(
            public_id=item.id,
            catalog_id=item.id,
            external_id=unit_id,
            appid=game,
            price=unit_ceiling,
            delivery=delivery,
            phase=phase,
            details=catalog_details(item),
        )
        for unit_id in unit_ids
    ]
    return withdrawal_store(
        merchant=merchant,
        source=source,
        recipient=recipient,
        platform_id=platform_id,
        game=game,
        external_id=external_id,
        rows=rows,
        quick={
            "is_quick": True,
            "quick_catalog_id": item.id,
            "quick_phase": phase,
            "quick_delivery": delivery,
            "quick_gross_ceiling": unit_ceiling,
            "quick_sourcing_ceiling": ceiling,
        },
    )


# Times a fill asks the marketplace again for the cheapest listings once every candidate it
# had was sold to someone else meanwhile (other fills running at once on other worker threads or
# machines read the same cheapest listings).
CANDIDATE_REREADS = 3


def _buy_one(
    row: TradeItem, trade: Trade, candidates: list[Listing], reread: Callable[[], list[Listing]]
) -> PurchaseResult | None:
    """The purchase an earlier, interrupted run made for the row (asked first: a retry must
    neither fail a unit it bought nor spend a candidate another unit needs), else the cheapest
    candidate that can still be bought, under the row's key; when all were sold meanwhile, the
    cheapest listings as they are now. A supplier that cannot take the order now is passed over
    for the next candidate; one that may have taken it (its answer was lost) stops the fill until
    it is reconciled."""
    market = get_marketplace()
    earlier = market.purchase_get(key=f"ti-{row.pk}")
    if earlier is not None:
        return earlier
    assert trade.quick_sourcing_ceiling is not None
    tried: set[str] = set()
    for _ in range(CANDIDATE_REREADS + 1):
        while candidates:
            listing = candidates.pop(0)
            tried.add(listing.id)
            try:
                result = market.purchase(
                    listing_id=listing.id,
                    max_price=trade.quick_sourcing_ceiling,
                    key=f"ti-{row.pk}",
                    trade_url=trade.client_trade_url,
                )
            except PurchaseOutcomeUnknownError:
                raise
            except MarketplaceUnavailableError:
                continue
            if result.ok:
                return result
        try:
            fresh = reread()
        except MarketplaceUnavailableError:
            return None
        candidates.extend(listing for listing in fresh if listing.id not in tried)
        if not candidates:
            return None
    return None


def quick_fill(*, trade_id: str) -> None:
    """Buy a listing for every unbound row; unfilled rows fail, savings go back to the wallet."""
    trade = Trade.objects.get(pk=trade_id)
    # Units whose cancel was accepted are the cancel's to end: buying them would only leave a
    # purchase nobody takes.
    rows = list(
        TradeItem.objects.filter(
            trade=trade, status=Status.PENDING, listing_id="", cancel_requested_at__isnull=True
        ).order_by("position")
    )
    if not rows:
        return
    ceiling = trade.quick_sourcing_ceiling
    assert ceiling is not None

    def cheapest() -> list[Listing]:
        return get_marketplace().cheapest(
            catalog_id=trade.quick_catalog_id,
            phase=trade.quick_phase,
            delivery=trade.quick_delivery,
            ceiling=ceiling,
            limit=2 * len(rows) + 5,
        )

    candidates = cheapest()
    catalog = CatalogItem.objects.filter(pk=trade.quick_catalog_id).first()
    for row in rows:
        result = _buy_one(row, trade, candidates, cheapest)
        with transaction.atomic():
            trade, items = trade_lock(trade_id=trade_id)
            current = next(i for i in items if i.pk == row.pk)
            if current.status != Status.PENDING or current.listing_id:
                continue
            if result is None or result.listing is None:
                refund_item(trade, current)
                change = trade_apply(
                    trade=trade,
                    items=items,
                    actor="marketplace",
                    kind="quick_unfilled",
                    moves=[Move(current, Status.FAILED, {"error": "NO_LISTING_AT_PRICE"})],
                    trade_fields={
                        "total_price": _spend(items, current),
                        "error": "NO_LISTING_AT_PRICE",
                    },
                )
                trade_events_publish(change)
                continue
            _bind(trade, items, current, result, catalog)


def _spend(items: list[TradeItem], leaving: TradeItem | None = None) -> Decimal:
    """What the trade costs now: bound rows at their price, unbound at the ceiling."""
    return sum(
        (i.price for i in items if i is not leaving and i.status != Status.FAILED),
        Decimal("0.00"),
    )


def _bind(
    trade: Trade,
    items: list[TradeItem],
    row: TradeItem,
    result: PurchaseResult,
    catalog: CatalogItem | None,
) -> None:
    assert result.listing is not None
    assert result.price is not None
    gross = fee_inclusive(result.price, trade.merchant.withdraw_fee_rate)
    savings = row.locked - gross
    if savings > 0:
        wallet_release(
            merchant=trade.merchant,
            amount=savings,
            cause_type="trade_item",
            cause_id=str(row.pk),
            kind="QUICK_SAVINGS",
        )
    listing = result.listing
    row.public_id = listing.id
    row.listing_id = listing.id
    row.price = gross
    row.locked = gross
    row.sourcing_price = result.price
    row.purchase_ref = result.ref
    row.details = catalog_details(catalog)
    change = trade_apply(
        trade=trade,
        items=items,
        actor="marketplace",
        kind="quick_filled",
        moves=[],
        trade_fields={"total_price": _spend(items)},
        changed=[row],
    )
    trade_events_publish(change)
    if result.held is not None:
        bot_delivery_expect(item=row, held=result.held, listing=listing)
