"""After approval: order what the withdrawal asked for."""

from trading.models import Trade
from trading.services.quick import quick_fill
from trading.services.withdrawals import withdrawal_purchase


def withdrawal_fulfil(*, trade_id: str) -> None:
    if Trade.objects.filter(pk=trade_id, is_quick=True).exists():
        quick_fill(trade_id=trade_id)
    else:
        withdrawal_purchase(trade_id=trade_id)
