"""Cancels of withdrawal items (contract 4.7): accepted by the marketplace now, completed by a
worker moments later (refund and webhook), never inline."""

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import QuerySet

from core import clock
from core.errors import DomainError
from core.handoffs import Handoff, handoff_on_commit
from trading.games import CS_GAME
from trading.marketplace import get_marketplace
from trading.marketplace.base import Marketplace
from trading.models import IN_FLIGHT, TERMINAL_PRECEDENCE, Status, Trade, TradeItem
from trading.trades.selectors import trade_get
from trading.trades.services import trade_lock
from trading.withdrawals.services.lifecycle import withdrawal_items_ended

# The cancels asked for, completed at the supplier or the platform after the commit.
CANCELS_COMPLETE = Handoff("trading.complete_cancels")

MIN_AGE = timedelta(minutes=30)
CANCELLABLE = (Status.PENDING, Status.ACTIVE)


@dataclass(frozen=True)
class CancelRow:
    """An item asked to be cancelled: accepted by the marketplace, or refused for ``reason``."""

    item: TradeItem
    accepted: bool
    reason: str = ""


@dataclass(frozen=True)
class TradeCancel:
    """A whole withdrawal's cancel: the items the marketplace considered, each with its answer."""

    trade: Trade
    rows: list[CancelRow]


def _supported(trade: Trade, item: TradeItem) -> bool:
    """Only first-game items sourced from suppliers have a cancel."""
    return trade.game == CS_GAME and item.delivery == "standard"


def _find(scope: QuerySet[Trade], trade_ref: str, *, self_only: bool) -> Trade:
    trade = trade_get(scope=scope, ref=trade_ref)
    if trade is None:
        raise DomainError("ITEM_NOT_FOUND", "No trade matches.")
    if self_only and trade.source != Trade.Source.SELF:
        raise DomainError("FORBIDDEN")
    if trade.type != Trade.Type.WITHDRAW:
        raise DomainError("TRADE_NOT_CANCELLABLE", "Only withdrawals can be cancelled.")
    return trade


def _finished_check(trade: Trade) -> None:
    """An item of a trade whose every item has ended cannot be cancelled, and the refusal says
    why. (The whole trade's cancel answers an empty result then, as for any trade with nothing
    left in flight: contract 4.7.)"""
    if trade.status in TERMINAL_PRECEDENCE:
        raise DomainError(
            "TRADE_NOT_CANCELLABLE",
            f"The trade is finished ({trade.status}): nothing is left to cancel.",
            details={"status": trade.status},
        )


def _order_ref(market: Marketplace, item: TradeItem) -> str:
    """The item's order at the supplier: the recorded one, or the one a purchase run made under
    the item's key before it died, unrecorded. Empty when nothing was ordered."""
    if item.purchase_ref:
        return item.purchase_ref
    unrecorded = market.purchase_get(key=f"ti-{item.pk}")
    return unrecorded.ref if unrecorded is not None else ""


def _request(trade: Trade, items: list[TradeItem], actor: str, *, min_age: bool) -> list[CancelRow]:
    """Ask the marketplace to cancel each item (under the trade lock); record the accepted."""
    now = clock.now()
    market = get_marketplace()
    rows = []
    for item in items:
        if min_age and now - trade.created_at < MIN_AGE:
            rows.append(CancelRow(item, False, "TRADE_CANCEL_TOO_SOON"))
            continue
        ref = _order_ref(market, item)
        accepted = not ref or market.cancel(ref=ref)
        if accepted:
            item.cancel_requested_at = now
            item.updated_at = now
            item.save(update_fields=["cancel_requested_at", "updated_at"])
        rows.append(CancelRow(item, accepted, "" if accepted else "TRADE_NOT_CANCELLABLE"))
    if any(row.accepted for row in rows):
        handoff_on_commit(CANCELS_COMPLETE, str(trade.id))
    return rows


def withdrawal_cancel(
    *, scope: QuerySet[Trade], trade_ref: str, self_only: bool, actor: str
) -> TradeCancel:
    """Every still-cancellable item of a withdrawal; a partial result is still a result."""
    found = _find(scope, trade_ref, self_only=self_only)
    with transaction.atomic():
        trade, items = trade_lock(trade_id=str(found.id))
        supported = [i for i in items if _supported(trade, i)]
        if not supported:
            raise DomainError("TRADE_CANCEL_UNSUPPORTED")
        considered = [
            i for i in supported if i.status in CANCELLABLE and i.cancel_requested_at is None
        ]
        rows = _request(trade, considered, actor, min_age=True)
    return TradeCancel(trade=trade, rows=rows)


def withdrawal_item_cancel(
    *, scope: QuerySet[Trade], trade_ref: str, item_ref: str, self_only: bool, actor: str
) -> tuple[Trade, TradeItem]:
    """One item, by its id or externalId; every refusal is an error. Returns the trade and the
    item whose cancel was accepted."""
    found = _find(scope, trade_ref, self_only=self_only)
    with transaction.atomic():
        trade, items = trade_lock(trade_id=str(found.id))
        _finished_check(trade)
        item = next(
            (i for i in items if item_ref in (i.public_id, i.external_id) and item_ref), None
        )
        if item is None:
            raise DomainError("ITEM_NOT_FOUND", f"No item {item_ref} in this trade.")
        if not _supported(trade, item):
            raise DomainError("TRADE_CANCEL_UNSUPPORTED")
        if item.status not in IN_FLIGHT:
            raise DomainError(
                "TRADE_NOT_CANCELLABLE",
                f"The item is finished ({item.status}).",
                details={"status": item.status},
            )
        if item.status not in CANCELLABLE or item.cancel_requested_at is not None:
            raise DomainError("TRADE_NOT_CANCELLABLE", f"The item is {item.status}.")
        (row,) = _request(trade, [item], actor, min_age=True)
    if not row.accepted:
        raise DomainError(row.reason)
    return trade, item


def withdrawal_cancels_complete(*, trade_id: str) -> int:
    """Accepted cancels become ``canceled``, refunded, with their webhook. Idempotent."""
    with transaction.atomic():
        trade, items = trade_lock(trade_id=trade_id)
        due = [i for i in items if i.cancel_requested_at is not None and i.status in CANCELLABLE]
        if due:
            withdrawal_items_ended(
                trade=trade,
                items=items,
                targets=due,
                to=Status.CANCELED,
                actor="marketplace",
                kind="canceled",
            )
    return len(due)


def withdrawal_auto_cancels_due() -> int:
    """``autoCancel``: pending supplier items of trades past their deadline (never active ones)."""
    now = clock.now()
    trade_ids = list(
        Trade.objects.filter(
            auto_cancel_at__lte=now,
            status__in=IN_FLIGHT,  # the deadline index holds trades in flight only
            game=CS_GAME,
            items__status=Status.PENDING,
            items__cancel_requested_at__isnull=True,
            items__delivery="standard",
        )
        .order_by()
        .values_list("id", flat=True)
        .distinct()[:200]
    )
    requested = 0
    for trade_id in trade_ids:
        with transaction.atomic():
            trade, items = trade_lock(trade_id=str(trade_id))
            due = [
                i
                for i in items
                if i.status == Status.PENDING
                and i.cancel_requested_at is None
                and _supported(trade, i)
            ]
            requested += sum(r.accepted for r in _request(trade, due, "auto_cancel", min_age=False))
    return requested


def withdrawal_cancels_pending() -> list[str]:
    """Trades with accepted cancels a lost task never completed."""
    stale = clock.now() - timedelta(seconds=30)
    rows = (
        TradeItem.objects.filter(cancel_requested_at__lt=stale, status__in=CANCELLABLE)
        .order_by()
        .values_list("trade_id", flat=True)
        .distinct()[:200]
    )
    return [str(trade_id) for trade_id in rows]
