"""The trade state machine shared by withdrawals and deposits: legal item moves, the derived
trade status, the audit trail and one webhook per change, all in the caller's transaction."""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from core import clock
from core.context import context_trade_set
from core.errors import DomainError
from core.feed import feed_publish_on_commit
from core.metrics import TRADE_MOVES, count_on_commit
from merchants.webhooks.outbox import webhook_event_emit
from trading.models import IN_FLIGHT, TERMINAL_PRECEDENCE, Status, Trade, TradeEvent, TradeItem
from trading.trades.shapes import trade_json

WITHDRAW_MOVES: dict[str, frozenset[str]] = {
    Status.INITIATED: frozenset({Status.PENDING, Status.FAILED}),
    Status.PENDING: frozenset({Status.ACTIVE, Status.FAILED, Status.CANCELED}),
    Status.ACTIVE: frozenset({Status.HOLD, Status.DECLINED, Status.CANCELED}),
    Status.HOLD: frozenset({Status.COMPLETED, Status.REVERTED}),
}
DEPOSIT_MOVES: dict[str, frozenset[str]] = {
    Status.INITIATED: frozenset({Status.PENDING, Status.CANCELED, Status.FAILED}),
    Status.PENDING: frozenset({Status.ACTIVE, Status.CANCELED, Status.FAILED}),
    Status.ACTIVE: frozenset({Status.HOLD, Status.DECLINED, Status.CANCELED, Status.FAILED}),
    Status.HOLD: frozenset({Status.COMPLETED, Status.REVERTED}),
}


def items_listed_once_check(item_ids: Iterable[str]) -> None:
    """An item appears once in a trade, its units in its ``amount``: a second entry asks more
    of it than one entry may (18, with ``details.itemId``)."""
    seen: set[str] = set()
    for item_id in item_ids:
        if item_id in seen:
            raise DomainError(
                "EXCEEDS_MAX_AMOUNT",
                f"{item_id} is listed twice: list it once, with its amount.",
                details={"itemId": item_id},
            )
        seen.add(item_id)


def derived_status(items: Iterable[TradeItem]) -> str:
    """The least advanced in-flight status; once all are terminal, the first by precedence."""
    statuses = {item.status for item in items}
    for status in IN_FLIGHT:
        if status in statuses:
            return status
    for status in TERMINAL_PRECEDENCE:
        if status in statuses:
            return status
    return Status.FAILED


def trade_lock(*, trade_id: str) -> tuple[Trade, list[TradeItem]]:
    """The trade and its items, locked (trade row first, then items by position).

    Only these rows, and ``FOR NO KEY UPDATE``: a lock on the merchant row (which the join would
    take) or a key lock would block the deferred foreign-key checks (``FOR KEY SHARE``) of every
    transaction writing rows that point at them, such as a buy or a cashout of this merchant
    committing, while this one waits for that transaction's wallet rows: a deadlock."""
    trade = (
        Trade.objects.select_for_update(of=("self",), no_key=True)
        .select_related("merchant")
        .get(pk=trade_id)
    )
    items = list(
        TradeItem.objects.select_for_update(no_key=True).filter(trade=trade).order_by("position")
    )
    context_trade_set(trade.pk, trade.merchant_id)
    return trade, items


def items_known(trade: Trade, items: list[TradeItem]) -> None:
    """``trade.items.all()`` answers ``items`` (in position order) without a query, as a
    prefetch would: for the response of the request that has just written them."""
    known = TradeItem.objects.filter(trade=trade).order_by("position")
    known._result_cache = items
    known._prefetch_done = True  # type: ignore[attr-defined]
    trade._prefetched_objects_cache = {"items": known}  # type: ignore[attr-defined]


@dataclass
class Move:
    item: TradeItem
    to: str
    fields: dict[str, Any] = field(default_factory=dict)


def can_move(trade: Trade, item: TradeItem, to: str) -> bool:
    moves = WITHDRAW_MOVES if trade.type == Trade.Type.WITHDRAW else DEPOSIT_MOVES
    return to in moves.get(item.status, frozenset())


def trade_apply(
    *,
    trade: Trade,
    items: list[TradeItem],
    moves: list[Move],
    actor: str,
    kind: str,
    trade_fields: dict[str, Any] | None = None,
    changed: list[TradeItem] | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    """Move items (each move must be legal, else 409 INVALID_TRANSITION), store the derived
    status, record the events (``changed`` items were edited in place, without a move) and emit
    one webhook: ``trade.<status>`` when the trade's status
    changed, ``trade.updated`` otherwise. Call with the trade locked, inside a transaction."""
    now = clock.now()
    before = trade.status
    for move in moves:
        if not can_move(trade, move.item, move.to):
            raise DomainError(
                "INVALID_TRANSITION",
                f"Item {move.item.public_id} is {move.item.status}; it cannot become {move.to}.",
            )
        TradeEvent.objects.create(
            trade=trade,
            item=move.item,
            kind=kind,
            from_status=move.item.status,
            to_status=move.to,
            actor=actor,
            detail=detail or {},
            created_at=now,
        )
        move.item.status = move.to
        for name, value in move.fields.items():
            setattr(move.item, name, value)
        move.item.updated_at = now
        move.item.save()
    for item in changed or []:
        TradeEvent.objects.create(
            trade=trade,
            item=item,
            kind=kind,
            from_status=item.status,
            to_status=item.status,
            actor=actor,
            detail=detail or {},
            created_at=now,
        )
        item.updated_at = now
        item.save()
    for name, value in (trade_fields or {}).items():
        setattr(trade, name, value)
    trade.status = derived_status(items)
    trade.updated_at = now
    trade_emit(trade=trade, items=items, before=before)


def trade_emit(
    *, trade: Trade, items: list[TradeItem], before: str | None, is_approval: bool = False
) -> None:
    """Save the trade, then tell the merchant with the next sequence number: its sockets (the
    feed, after commit) and its webhook (the outbox)."""
    context_trade_set(trade.pk, trade.merchant_id)
    sequence = trade.next_sequence
    trade.next_sequence += 1
    trade.save()
    if trade.status != before:
        count_on_commit(TRADE_MOVES, 1, trade.type, trade.status)
    body = trade_json(trade, items)
    feed_publish_on_commit(
        {
            "kind": "merchant",
            "merchantId": str(trade.merchant_id),
            "event": "trade",
            "order": f"trade:{trade.id}",
            "sequence": sequence,
        },
        {"trade": body},
    )
    webhook_event_emit(
        merchant=trade.merchant,
        type=f"trade.{trade.status}" if trade.status != before else "trade.updated",
        subject_type="trade",
        subject_id=str(trade.id),
        sequence=sequence,
        body_key="trade",
        body=body,
        is_approval=is_approval,
    )
