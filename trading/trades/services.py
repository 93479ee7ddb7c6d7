"""The trade state machine shared by withdrawals and deposits: legal item moves, the derived
trade status, the audit trail and one sequence number per change, all in the caller's
transaction. Each change returns its event (``trading.trades.events``); the service that made it
hands it to the channels (``trading.trades.channels``) in the same transaction."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, connection, transaction

from core import clock
from core.context import context_trade_set
from core.db import (
    ModelRows,
    atomic_retried,
    changes_save,
    constraint_violated,
    model_constraint,
    row_lock,
)
from core.errors import DomainError
from merchants.models import Client, Merchant
from trading.models import IN_FLIGHT, TERMINAL_PRECEDENCE, Status, Trade, TradeEvent, TradeItem
from trading.trades.events import TradeChanged, TradeCreated

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


# A merchant's externalId names one trade: the database's refusal of a second one is an answer.
EXTERNAL_ID_TAKEN = model_constraint(Trade, "trade_external_id_per_merchant")


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


def external_id_unused_check(*, merchant: Merchant, external_id: str) -> None:
    """A merchant's externalId names one trade of any kind: a used one is refused before anything
    is fetched (and by the database when the trade is stored, ``trade_store``)."""
    if external_id and Trade.objects.filter(merchant=merchant, external_id=external_id).exists():
        raise DomainError("EXTERNAL_ID_EXISTS")


def trade_total(rows: Iterable[TradeItem]) -> Decimal:
    """What a new trade's rows come to: above zero, else INVALID_AMOUNT."""
    total = sum((row.price * row.amount for row in rows), Decimal("0.00"))
    if total <= 0:
        raise DomainError("INVALID_AMOUNT")
    return total


def trade_draft(
    *,
    merchant: Merchant,
    type: str,
    source: str,
    game: int,
    external_id: str,
    client: Client | None,
    platform_id: str,
    trade_url: str,
    external_client_user_id: str,
    rows: list[TradeItem],
    total: Decimal,
    now: datetime,
    **fields: Any,
) -> Trade:
    """A new trade of ``rows`` with the platform account it trades with, not yet saved; the rows
    numbered and pointing at it. ``fields``: what only this kind of trade sets."""
    trade = Trade(
        merchant=merchant,
        client=client,
        type=type,
        source=source,
        game=game,
        external_id=external_id,
        client_platform_id=platform_id,
        client_trade_url=trade_url,
        external_client_user_id=external_client_user_id,
        total_price=total,
        created_at=now,
        updated_at=now,
        **fields,
    )
    for position, row in enumerate(rows):
        row.trade = trade
        row.position = position
        row.updated_at = now
    return trade


def trade_store(write: Callable[[], Trade]) -> Trade:
    """Run ``write`` (which stores a new trade) in a transaction, again on a conflict; an
    externalId taken meanwhile by a concurrent request answers EXTERNAL_ID_EXISTS."""
    try:
        return atomic_retried(write)
    except IntegrityError as exc:
        if constraint_violated(exc, Trade, EXTERNAL_ID_TAKEN):
            raise DomainError("EXTERNAL_ID_EXISTS") from exc
        raise


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


HOLD_BATCH = 200


def trade_holds_end(*, type: str, end: Callable[[Trade, list[TradeItem], datetime], int]) -> int:
    """The hold sweep of a kind of trade: each trade of ``type`` with an item whose hold has
    ended (a batch at a time) is locked in its own transaction and handed to ``end``, which
    completes what is due at that time and counts it. A second worker running the same sweep
    finds nothing left (the moves re-read under the lock)."""
    now = clock.now()
    trade_ids = (
        TradeItem.objects.filter(status=Status.HOLD, hold_end_date__lte=now, trade__type=type)
        .values_list("trade_id", flat=True)
        .distinct()[:HOLD_BATCH]
    )
    ended = 0
    for trade_id in trade_ids:
        with transaction.atomic():
            trade, items = trade_lock(trade_id=str(trade_id))
            ended += end(trade, items, now)
    return ended


# Every move of a trade starts with these two reads (twice a buy), written out by hand as the
# per-request reads are (``core.db.ModelRows``): compiling them through the ORM cost more CPU
# than running them. Built from model metadata only; every value goes as a parameter.
_TRADES = ModelRows(Trade)
_MERCHANTS = ModelRows(Merchant)
_ITEMS = ModelRows(TradeItem)
# Each table under its own name, as the ORM writes it (what a look at pg_stat_activity finds).
_TRADE_TABLE, _MERCHANT_TABLE, _ITEM_TABLE = _TRADES.table(), _MERCHANTS.table(), _ITEMS.table()
_TRADE_WITH_MERCHANT = (
    f"SELECT {_TRADES.columns(_TRADE_TABLE)}, {_MERCHANTS.columns(_MERCHANT_TABLE)}"  # noqa: S608
    f" FROM {_TRADE_TABLE} JOIN {_MERCHANT_TABLE}"
    f" ON {_MERCHANT_TABLE}.id = {_TRADE_TABLE}.merchant_id"
    f" WHERE {_TRADE_TABLE}.id = %s"
)
_ITEMS_IN_ORDER = (
    f"SELECT {_ITEMS.columns(_ITEM_TABLE)} FROM {_ITEM_TABLE}"  # noqa: S608
    f" WHERE {_ITEM_TABLE}.trade_id = %s ORDER BY {_ITEM_TABLE}.position"
)


def trade_lock(*, trade_id: str) -> tuple[Trade, list[TradeItem]]:
    """The trade and its items, locked (trade row first, then items by position).

    Only these rows, and ``FOR NO KEY UPDATE``: a lock on the merchant row (which the join would
    take) or a key lock would block the deferred foreign-key checks (``FOR KEY SHARE``) of every
    transaction writing rows that point at them, such as a buy or a cashout of this merchant
    committing, while this one waits for that transaction's wallet rows: a deadlock."""
    with connection.cursor() as cursor:
        cursor.execute(
            _TRADE_WITH_MERCHANT + row_lock(of=_TRADE_TABLE), [_TRADES.param("id", trade_id)]
        )
        row = cursor.fetchone()
        if row is None:
            raise Trade.DoesNotExist(f"no trade {trade_id}")
        trade: Trade = _TRADES.build(row[: _TRADES.width])
        trade.merchant = _MERCHANTS.build(row[_TRADES.width :])
        cursor.execute(
            _ITEMS_IN_ORDER + row_lock(),
            [_ITEMS.param("trade", trade.pk)],
        )
        items: list[TradeItem] = [_ITEMS.build(item) for item in cursor.fetchall()]
    for item in items:
        item.trade = trade
    context_trade_set(trade.pk, trade.merchant_id)
    return trade, items


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
) -> TradeChanged:
    """Move items (each move must be legal, else 409 INVALID_TRANSITION), store the derived
    status and record the audit trail (``changed`` items were edited in place, without a move);
    returns the change, numbered, for the channels. Call with the trade locked, inside a
    transaction."""
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
        changes_save(move.item)
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
        changes_save(item)
    for name, value in (trade_fields or {}).items():
        setattr(trade, name, value)
    trade.status = derived_status(items)
    trade.updated_at = now
    return TradeChanged(
        trade=trade,
        items=items,
        sequence=_numbered_save(trade),
        before=before,
        kind=kind,
        actor=actor,
        detail=detail or {},
    )


def trade_insert(
    *,
    trade: Trade,
    items: list[TradeItem],
    asks_approval: bool = False,
    items_known: bool = False,
) -> TradeCreated:
    """Store a drafted trade (``trade_draft``) and its items; returns its creation, numbered,
    for the channels. The trade is inserted with its first sequence number: one INSERT, not an
    INSERT and then a full-row UPDATE. ``items_known``: ``trade.items.all()`` then answers
    ``items`` (in position order) without a query, as a prefetch would, for the response of the
    request that wrote them (a withdrawal's; a deposit's response reads them back, its items'
    details in the order the database keeps them)."""
    sequence = _numbered_save(trade)
    TradeItem.objects.bulk_create(items)
    if items_known:
        known = trade.items.order_by("position")
        known._result_cache = items
        known._prefetch_done = True  # type: ignore[attr-defined]
        trade._prefetched_objects_cache = {"items": known}  # type: ignore[attr-defined]
    return TradeCreated(trade=trade, items=items, sequence=sequence, asks_approval=asks_approval)


def _numbered_save(trade: Trade) -> int:
    """Save the trade with the next of its sequence numbers taken; returns that number."""
    context_trade_set(trade.pk, trade.merchant_id)
    sequence = trade.next_sequence
    trade.next_sequence += 1
    changes_save(trade)
    return sequence
