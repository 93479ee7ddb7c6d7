"""After approval: order what the withdrawal asked for, through the marketplace (a quick
withdrawal's rows are bound to listings first, ``quick.quick_fill``)."""

from django.db import transaction

from core import clock
from trading.marketplace import get_marketplace
from trading.models import Status, Trade, TradeItem
from trading.trades.services import Move, trade_apply, trade_lock
from trading.withdrawals.services.handover import bot_delivery_expect
from trading.withdrawals.services.lifecycle import refund_item
from trading.withdrawals.services.quick import quick_fill


def withdrawal_fulfil(*, trade_id: str) -> None:
    if Trade.objects.filter(pk=trade_id, is_quick=True).exists():
        quick_fill(trade_id=trade_id)
    else:
        withdrawal_purchase(trade_id=trade_id)


def withdrawal_purchase(*, trade_id: str) -> None:
    """Order every approved, unbought item from the marketplace. The purchase is keyed by the
    item, so running this twice never buys twice; network calls happen outside transactions."""
    market = get_marketplace()
    waiting = (
        TradeItem.objects.filter(
            trade_id=trade_id,
            status=Status.PENDING,
            purchase_ref="",
            cancel_requested_at__isnull=True,
        )
        .exclude(listing_id="")
        .select_related("trade")
    )
    for item in waiting:
        assert item.sourcing_price is not None
        result = market.purchase(
            listing_id=item.listing_id,
            max_price=item.sourcing_price,
            key=f"ti-{item.pk}",
            amount=item.amount,
            trade_url=item.trade.client_trade_url,
        )
        if result.ok:
            # Only the item's row changes: one guarded statement, no lock of the trade. An item
            # that left PENDING meanwhile (cancelled) keeps no ref; its cancel finds the
            # purchase by its key. A bot that hands the item over gets its delivery row with it.
            with transaction.atomic():
                recorded = TradeItem.objects.filter(
                    pk=item.pk, status=Status.PENDING, purchase_ref=""
                ).update(purchase_ref=result.ref, updated_at=clock.now())
                if recorded and result.held is not None and result.listing is not None:
                    bot_delivery_expect(item=item, held=result.held, listing=result.listing)
            continue
        with transaction.atomic():
            trade, items = trade_lock(trade_id=trade_id)
            current = next(i for i in items if i.pk == item.pk)
            if current.status != Status.PENDING or current.purchase_ref:
                continue
            refund_item(trade, current)
            trade_apply(
                trade=trade,
                items=items,
                actor="marketplace",
                kind="purchase_failed",
                moves=[Move(current, Status.FAILED, {"error": result.reason})],
                trade_fields={"error": result.reason},
            )
