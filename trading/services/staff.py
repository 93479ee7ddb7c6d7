"""Staff's actions on a trade from the console, each through the flow's own services and each
recorded with who asked and why (``core.services.staff_action_record``) in the transaction of
its effect: the trade's page shows them in its timeline."""

from django.db import transaction

from core.errors import DomainError
from core.handoffs import handoff_on_commit
from core.services import staff_action_record
from core.staff import Staff
from trading.deposits.services.outcomes import deposit_cancel_by_staff
from trading.models import Status, Trade, TradeItem
from trading.services.suppliers import supplier_switch
from trading.trades.services import trade_lock
from trading.withdrawals.services.lifecycle import PURCHASE, trade_force_cancel


def purchase_waiting(item: TradeItem) -> bool:
    """Approved and not ordered yet (nor being cancelled): what a purchase run buys."""
    return (
        item.status == Status.PENDING and not item.purchase_ref and item.cancel_requested_at is None
    )


def trade_purchase_retry(*, trade_id: str, staff: Staff) -> int:
    """Run a withdrawal's purchase again now, for the items it has not bought (the purchase
    sweep would, two minutes after their last move; staff need not wait, after a supplier's
    outage for one). The purchase is keyed per item, so nothing is bought twice. Returns how
    many items it will try to buy."""
    with transaction.atomic():
        trade, items = trade_lock(trade_id=trade_id)
        if trade.type != Trade.Type.WITHDRAW:
            raise DomainError("INVALID_TRANSITION", "Only a withdrawal buys anything.")
        waiting = [item for item in items if purchase_waiting(item)]
        if not waiting:
            raise DomainError(
                "INVALID_TRANSITION",
                f"Nothing of this trade waits for its purchase (it is {trade.status}).",
                details={"status": trade.status},
            )
        staff_action_record(
            staff=staff,
            action="retry_purchase",
            subject_type="trade",
            subject_id=str(trade.pk),
            items=[item.public_id for item in waiting],
        )
        handoff_on_commit(PURCHASE, str(trade.pk))
    return len(waiting)


def trade_cancel(*, trade_id: str, staff: Staff) -> int:
    """End a trade now: a withdrawal's undelivered items with their refund, a deposit whose
    offer is not out yet. Returns how many items ended."""
    kind = Trade.objects.filter(pk=trade_id).values_list("type", flat=True).first()
    if kind is None:
        raise DomainError("TRADE_NOT_FOUND")
    if kind == Trade.Type.WITHDRAW:
        return trade_force_cancel(trade_id=trade_id, staff=staff)
    return deposit_cancel_by_staff(trade_id=trade_id, staff=staff)


def supplier_switch_by_staff(*, name: str, enabled: bool, staff: Staff) -> int:
    """Staff switch a supplier off (no new buys, its listings leave the market) or on
    (``supplier_switch``, in batches), then record it. Returns how many listings left."""
    removed = supplier_switch(name=name, enabled=enabled)
    staff_action_record(
        staff=staff,
        action="switch_on" if enabled else "switch_off",
        subject_type="supplier",
        subject_id=name,
        listings_removed=removed,
    )
    return removed
