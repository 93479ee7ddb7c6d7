"""The channels that tell of a trade's changes, subscribed in one place: ``trade_events_publish``
hands each event the trade core returned to the handlers of its kind, in the transaction of the
change (a small message bus, as in Cosmic Python's). Each change is counted (after commit),
rendered once and told the merchant with its sequence number: its sockets (the feed, after
commit) and its webhook (the outbox, written in the change's transaction)."""

from collections.abc import Callable

from core.feed import feed_publish_on_commit
from core.metrics import TRADE_MOVES, count_on_commit
from merchants.webhooks.outbox import webhook_event_emit
from trading.trades.events import TradeChanged, TradeCreated, TradeFact
from trading.trades.shapes import trade_json


def _status_changed(event: TradeFact) -> bool:
    return isinstance(event, TradeCreated) or event.trade.status != event.before


def trade_move_count(event: TradeFact) -> None:
    """A trade that reached a status counts once its transaction commits."""
    if _status_changed(event):
        trade = event.trade
        count_on_commit(TRADE_MOVES, 1, trade.type, trade.status)


def trade_announce(event: TradeFact) -> None:
    """The trade as the API shows it, to the merchant's sockets and its webhook: ``trade.<status>``
    when its status changed, ``trade.updated`` otherwise."""
    trade = event.trade
    body = trade_json(trade, event.items)
    feed_publish_on_commit(
        {
            "kind": "merchant",
            "merchantId": str(trade.merchant_id),
            "event": "trade",
            "order": f"trade:{trade.id}",
            "sequence": event.sequence,
        },
        {"trade": body},
    )
    webhook_event_emit(
        merchant=trade.merchant,
        type=f"trade.{trade.status}" if _status_changed(event) else "trade.updated",
        subject_type="trade",
        subject_id=str(trade.id),
        sequence=event.sequence,
        body_key="trade",
        body=body,
        is_approval=isinstance(event, TradeCreated) and event.asks_approval,
    )


# Each kind of event -> its handlers, in the order they run.
HANDLERS: dict[type[TradeFact], tuple[Callable[[TradeFact], None], ...]] = {
    TradeCreated: (trade_move_count, trade_announce),
    TradeChanged: (trade_move_count, trade_announce),
}


def trade_events_publish(*events: TradeFact) -> None:
    """Tell of ``events``, in order. Call in the transaction that stored them, before the trade
    changes again (the body is rendered from the trade as it is now)."""
    for event in events:
        for handler in HANDLERS[type(event)]:
            handler(event)
