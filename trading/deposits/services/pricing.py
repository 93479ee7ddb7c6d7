"""What a deposit is worth: each item checked against the owner's inventory and the merchant's
current offer, and the credit plan (pre-credit, pending credit, collateral) fixed at creation."""

from decimal import ROUND_FLOOR, Decimal

from core import clock
from core.errors import DomainError
from merchants.models import Client, Merchant
from trading.accounts.selectors.collateral import client_collateral_available
from trading.accounts.selectors.inventory import (
    DepositQuote,
    Refusal,
    deposit_quotes,
    inventory_assets,
)
from trading.deposits.services.guard import assets_busy, deposit_busy_item_ids, items_refused
from trading.deposits.services.order import DepositItem
from trading.models import Trade
from trading.pricing import CENT

# Stacks of the second game go at most one unit per deposit (contract 2.3).
MAX_UNITS_PER_ASSET = 1


def deposit_items_price(
    *, merchant: Merchant, platform_id: str, game: int, items: list[DepositItem]
) -> list[tuple[DepositItem, DepositQuote]]:
    """Each item against the owner's inventory and the merchant's current offer."""
    assets = inventory_assets(merchant=merchant, platform_id=platform_id, game=game)
    quotes = {q.item_id: q for q in deposit_quotes(assets=assets, merchant=merchant, game=game)}
    ids = [item.item_id for item in items]
    missing = [item_id for item_id in ids if item_id not in quotes]
    if missing:
        raise items_refused(
            "ITEMS_UNAVAILABLE", missing, f"Not in the inventory: {', '.join(missing)}."
        )
    busy = deposit_busy_item_ids(
        platform_id=platform_id, held={i: quotes[i].asset.amount for i in ids}
    )
    if busy:
        raise assets_busy(busy)
    refused = [i for i in ids if quotes[i].refusal and quotes[i].refusal != Refusal.OVERSTOCKED]
    if refused:
        raise items_refused("ITEMS_NOT_ACCEPTED", refused, f"Not accepted: {', '.join(refused)}.")
    for item in items:
        asset = quotes[item.item_id].asset
        if item.amount > asset.amount:
            raise DomainError("INSUFFICIENT_ITEM_AMOUNT", f"{item.item_id}: {asset.amount} held.")
        if item.amount > MAX_UNITS_PER_ASSET:
            raise DomainError(
                "EXCEEDS_MAX_AMOUNT", f"{item.item_id}: at most {MAX_UNITS_PER_ASSET} per deposit."
            )
    overstocked = _overstocked(items, quotes)
    if overstocked:
        raise items_refused(
            "ITEM_OVERSTOCKED", overstocked, "The service's stock of these is full."
        )
    for item in items:
        current = quotes[item.item_id].price
        if item.price != current:
            raise DomainError(
                "PRICE_CHANGED",
                f"{item.item_id} is now offered {current}.",
                details={"itemId": item.item_id, "price": current},
            )
    return [(item, quotes[item.item_id]) for item in items]


def _overstocked(items: list[DepositItem], quotes: dict[str, DepositQuote]) -> list[str]:
    """Items whose catalog entry would go over its stock limit with this deposit."""
    wanted: dict[str, int] = {}
    over = []
    for item in items:
        quote = quotes[item.item_id]
        assert quote.item is not None or quote.refusal == Refusal.OVERSTOCKED
        key = quote.item.id if quote.item is not None else item.item_id
        wanted[key] = wanted.get(key, 0) + item.amount
        if quote.refusal == Refusal.OVERSTOCKED or wanted[key] > quote.room:
            over.append(item.item_id)
    return over


def deposit_credit_plan(
    *, merchant: Merchant, source: str, client: Client | None, is_instant: bool, value: Decimal
) -> dict[str, object]:
    """preCredit, pendingCredit and the collateral split, fixed at creation, in cents as they
    are stored (so the created trade reads as it will be read back)."""
    zero = Decimal("0.00")
    none = {"collateral_provider": zero, "collateral_merchant": zero}
    if source == Trade.Source.SELF:
        return {"pre_credit": value, "pending_credit": zero, **none}
    if not is_instant:
        return {"pre_credit": zero, "pending_credit": value, **none}
    available = (
        # The account's age is the platform's, in real time: the sandbox clock never raises
        # what an instant deposit may be backed with.
        client_collateral_available(client=client, merchant=merchant, now=clock.real_now())
        if client is not None
        else zero
    )
    provider = min(value, available).quantize(CENT, rounding=ROUND_FLOOR)
    return {
        "pre_credit": value,
        "pending_credit": zero,
        "collateral_provider": provider,
        "collateral_merchant": value - provider,
    }
