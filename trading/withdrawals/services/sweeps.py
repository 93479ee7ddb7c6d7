"""Deadline sweeps of withdrawals: purchases whose task was lost, holds that ended. Rows are
moved on with compare-and-set updates under row locks, so a second worker running the same sweep
changes nothing."""

from datetime import datetime, timedelta

from core import clock
from trading.models import Status, Trade, TradeItem
from trading.trades.services import trade_holds_end
from trading.withdrawals.services.lifecycle import withdrawal_items_completed

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
    return trade_holds_end(type=Trade.Type.WITHDRAW, end=_withdrawal_hold_end)


def _withdrawal_hold_end(trade: Trade, items: list[TradeItem], now: datetime) -> int:
    """A withdrawal's items end their holds one by one: those due complete."""
    due = [
        i for i in items if i.status == Status.HOLD and i.hold_end_date and i.hold_end_date <= now
    ]
    if due:
        withdrawal_items_completed(trade=trade, items=items, targets=due, actor="system")
    return len(due)
