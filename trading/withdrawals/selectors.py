"""What withdrawals hold of the merchants' money, for the wallet's checks."""

from django.db.models import Sum

from core.ports import LockHolding
from trading.models import Status, Trade, TradeItem


def withdrawal_locks() -> LockHolding:
    """What withdrawal items keep locked; ended items must keep nothing."""
    held = (
        TradeItem.objects.filter(trade__type=Trade.Type.WITHDRAW, locked__gt=0)
        .values("trade__merchant_id")
        .annotate(total=Sum("locked"))
    )
    stale = TradeItem.objects.filter(
        trade__type=Trade.Type.WITHDRAW,
        locked__gt=0,
        status__in=[
            Status.COMPLETED,
            Status.FAILED,
            Status.CANCELED,
            Status.DECLINED,
            Status.REVERTED,
        ],
    ).values_list("trade_id", "public_id", "status", "locked")[:100]
    return LockHolding(
        by_merchant={str(row["trade__merchant_id"]): row["total"] for row in held},
        stale=[f"trade {t} item {i} is {s} but holds {amount}" for t, i, s, amount in stale],
    )
