"""Deadline sweeps of deposits: rows whose deadline passed are moved on with compare-and-set
updates under row locks, so a second worker running the same sweep changes nothing."""

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from uuid import UUID

from django.db import transaction
from django.db.models import QuerySet

from core import clock
from trading.deposits.services.outcomes import deposit_completed, deposit_ended
from trading.models import Status, Trade, TradeItem
from trading.trades.services import trade_holds_end, trade_lock

BATCH = 200

# A deposit whose offer the platform could not make (bots offline, platform down) is retried
# after this long, and failed once it has waited the give-up time: the owner's guard slot is freed.
OFFER_RETRY_GRACE = timedelta(seconds=60)
OFFER_GIVE_UP = timedelta(minutes=30)


OFFER_WAITING = (Status.INITIATED, Status.PENDING)


def _deposits_waiting_for_offer() -> QuerySet[Trade]:
    """Deposits whose offer is not sent yet. A deposit's items move together, so the trade's
    status is theirs, and its own small partial index finds them among a million trades."""
    return Trade.objects.filter(type=Trade.Type.DEPOSIT, status__in=OFFER_WAITING).order_by()


def deposit_offers_due() -> list[str]:
    """Deposits whose offer is still not sent a while after their last step: try again."""
    stale = clock.now() - OFFER_RETRY_GRACE
    rows = _deposits_waiting_for_offer().filter(updated_at__lt=stale).values_list("id", flat=True)
    return [str(trade_id) for trade_id in rows[:BATCH]]


def deposit_offers_abandon() -> int:
    """Deposits the platform could not offer within the give-up time fail."""
    cutoff = clock.now() - OFFER_GIVE_UP
    trade_ids = (
        _deposits_waiting_for_offer()
        .filter(created_at__lt=cutoff)
        .values_list("id", flat=True)[:BATCH]
    )
    return _end_each(
        trade_ids,
        lambda trade, item: (
            item.status in (Status.INITIATED, Status.PENDING) and trade.created_at < cutoff
        ),
        to=Status.FAILED,
        kind="offer_abandoned",
        error="SERVICE_UNAVAILABLE",
    )


def deposit_offers_expire() -> int:
    """Sent offers the owner left alone past their expiry are withdrawn: the deposit is
    declined."""
    now = clock.now()
    trade_ids = Trade.objects.filter(offer_expires_at__lte=now).values_list("id", flat=True)[:BATCH]
    return _end_each(
        trade_ids,
        lambda trade, item: (
            item.status == Status.ACTIVE
            and trade.offer_expires_at is not None
            and trade.offer_expires_at <= now
        ),
        to=Status.DECLINED,
        kind="offer_expired",
        error="OFFER_EXPIRED",
    )


def _end_each(
    trade_ids: Iterable[UUID],
    due: Callable[[Trade, TradeItem], bool],
    *,
    to: str,
    kind: str,
    error: str,
) -> int:
    ended = 0
    for trade_id in trade_ids:
        with transaction.atomic():
            trade, items = trade_lock(trade_id=str(trade_id))
            if any(due(trade, item) for item in items):
                deposit_ended(
                    trade=trade, items=items, to=to, actor="system", kind=kind, error=error
                )
                ended += 1
    return ended


def deposit_holds_due_complete() -> int:
    """Deposits whose hold ended: completed, escrow and collateral released."""
    return trade_holds_end(type=Trade.Type.DEPOSIT, end=_deposit_hold_end)


def _deposit_hold_end(trade: Trade, items: list[TradeItem], now: datetime) -> int:
    """A deposit's items move together: the trade completes once its own hold has ended."""
    if trade.status == Status.HOLD and trade.hold_end_date and trade.hold_end_date <= now:
        deposit_completed(trade=trade, items=items, actor="system")
        return 1
    return 0
