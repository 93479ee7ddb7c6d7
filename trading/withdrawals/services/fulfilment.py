"""After approval: order what the withdrawal asked for, through the marketplace (a quick
withdrawal's rows are bound to listings first, ``quick.quick_fill``)."""

from contextlib import nullcontext

from django.db import connection, transaction

from core import clock
from core.db import ModelRows
from trading.marketplace import get_marketplace
from trading.models import Status, Trade, TradeItem
from trading.trades.channels import trade_events_publish
from trading.trades.services import Move, trade_apply, trade_lock
from trading.withdrawals.services.handover import bot_delivery_expect
from trading.withdrawals.services.lifecycle import refund_item
from trading.withdrawals.services.quick import quick_fill

# A fulfilment's reads and its record of each purchase, written out by hand
# (``core.db.ModelRows``): the ORM's compiling of them cost more CPU than running them.
_TRADES = ModelRows(Trade, only=["is_quick", "client_trade_url"])
_ITEMS = ModelRows(TradeItem, only=["id", "trade", "listing_id", "sourcing_price", "amount"])
_TRADE_TABLE, _ITEM_TABLE = _TRADES.table("t"), _ITEMS.table("i")
# The trade with its unbought items in one statement (without any, one row whose item columns
# are NULL): its kind decides which fulfilment goes on. Items with a cancel accepted are the
# cancel's to end.
_UNBOUGHT = (
    f"SELECT {_TRADES.columns('t')}, {_ITEMS.columns('i')}"  # noqa: S608
    f" FROM {_TRADE_TABLE} LEFT JOIN {_ITEM_TABLE} ON i.trade_id = t.id"
    " AND i.status = %s AND i.purchase_ref = '' AND i.cancel_requested_at IS NULL"
    " AND i.listing_id <> ''"
    " WHERE t.id = %s ORDER BY i.position"
)
_ORDERED = (
    f"UPDATE {_ITEMS.table()} SET purchase_ref = %s, updated_at = %s"  # noqa: S608
    " WHERE id = %s AND status = %s AND purchase_ref = ''"
)


def withdrawal_fulfil(*, trade_id: str) -> None:
    unbought = _unbought(trade_id)
    if unbought is None:
        return
    is_quick, trade_url, waiting = unbought
    if is_quick:
        quick_fill(trade_id=trade_id)
    else:
        _purchase(trade_id=trade_id, trade_url=trade_url, waiting=waiting)


def withdrawal_purchase(*, trade_id: str) -> None:
    """Order every approved, unbought item from the marketplace. The purchase is keyed by the
    item, so running this twice never buys twice; network calls happen outside transactions."""
    unbought = _unbought(trade_id)
    if unbought is not None:
        _, trade_url, waiting = unbought
        _purchase(trade_id=trade_id, trade_url=trade_url, waiting=waiting)


def _unbought(trade_id: str) -> tuple[bool, str, list[TradeItem]] | None:
    """Whether the trade is a quick one, its trade URL and its approved items that have a
    listing and no purchase yet, in position order (None: no such trade)."""
    with connection.cursor() as cursor:
        cursor.execute(_UNBOUGHT, [Status.PENDING, _TRADES.param("id", trade_id)])
        rows = cursor.fetchall()
    if not rows:
        return None
    trade = _TRADES.build(rows[0][: _TRADES.width])
    item_id = _TRADES.width + _ITEMS.index("id")
    items = [_ITEMS.build(row[_TRADES.width :]) for row in rows if row[item_id] is not None]
    return trade.is_quick, trade.client_trade_url, items


def _purchase(*, trade_id: str, trade_url: str, waiting: list[TradeItem]) -> None:
    market = get_marketplace()
    for item in waiting:
        assert item.sourcing_price is not None
        result = market.purchase(
            listing_id=item.listing_id,
            max_price=item.sourcing_price,
            key=f"ti-{item.pk}",
            amount=item.amount,
            trade_url=trade_url,
        )
        if result.ok:
            # Only the item's row changes: one guarded statement, no lock of the trade. An item
            # that left PENDING meanwhile (cancelled) keeps no ref; its cancel finds the
            # purchase by its key. A bot that hands the item over gets its delivery row with it,
            # in one transaction; without one the statement is atomic alone (a transaction
            # would only add its BEGIN and COMMIT round trips).
            with transaction.atomic() if result.held is not None else nullcontext():
                recorded = _ordered(item=item, ref=result.ref)
                if recorded and result.held is not None and result.listing is not None:
                    bot_delivery_expect(item=item, held=result.held, listing=result.listing)
            continue
        with transaction.atomic():
            trade, items = trade_lock(trade_id=trade_id)
            current = next(i for i in items if i.pk == item.pk)
            if current.status != Status.PENDING or current.purchase_ref:
                continue
            refund_item(trade, current)
            change = trade_apply(
                trade=trade,
                items=items,
                actor="marketplace",
                kind="purchase_failed",
                moves=[Move(current, Status.FAILED, {"error": result.reason})],
                trade_fields={"error": result.reason},
            )
            trade_events_publish(change)


def _ordered(*, item: TradeItem, ref: str) -> bool:
    """Record the item's purchase, if it is still pending without one."""
    with connection.cursor() as cursor:
        cursor.execute(
            _ORDERED,
            [
                _ITEMS.param("purchase_ref", ref),
                _ITEMS.param("updated_at", clock.now()),
                _ITEMS.param("id", item.pk),
                Status.PENDING,
            ],
        )
        recorded: int = cursor.rowcount
    return recorded == 1
