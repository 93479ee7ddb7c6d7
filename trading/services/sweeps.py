"""Deadline sweeps: rows whose deadline passed are moved on with compare-and-set updates under
row locks, so a second worker running the same sweep changes nothing."""

from datetime import timedelta

from django.db import transaction

from config import clock
from trading.models import Status, Trade, TradeItem
from trading.services.trades import trade_lock
from trading.services.withdrawals import withdrawal_items_completed

# Long enough that a busy worker is not raced by its own re-queued task.
PURCHASE_GRACE = timedelta(seconds=120)
BATCH = 200


def withdrawal_purchases_due() -> list[str]:
    """Approved withdrawals whose purchase task has not recorded an order after a grace period
    (the task was lost with its worker)."""
    stale = clock.now() - PURCHASE_GRACE
    rows = (
        TradeItem.objects.filter(
            status=Status.PENDING,
            purchase_ref="",
            trade__type=Trade.Type.WITHDRAW,
            updated_at__lt=stale,
        )
        .values_list("trade_id", flat=True)
        .distinct()[:BATCH]
    )
    return [str(trade_id) for trade_id in rows]


def withdrawal_holds_due_complete() -> int:
    """Withdrawal items whose protection window ended: completed and settled."""
    now = clock.now()
    trade_ids = (
        TradeItem.objects.filter(
            status=Status.HOLD, hold_end_date__lte=now, trade__type=Trade.Type.WITHDRAW
        )
        .values_list("trade_id", flat=True)
        .distinct()[:BATCH]
    )
    completed = 0
    for trade_id in trade_ids:
        with transaction.atomic():
            trade, items = trade_lock(trade_id=str(trade_id))
            due = [
                i
                for i in items
                if i.status == Status.HOLD and i.hold_end_date and i.hold_end_date <= now
            ]
            if due:
                withdrawal_items_completed(trade=trade, items=items, targets=due, actor="system")
                completed += len(due)
    return completed
