"""Every periodic sweep's query over a table that grows with the business, with the table it
reads and the index it must read it through (tests/perf/test_sweep_plans.py checks the plans,
bench/scale.py times them at millions of rows). Each entry runs the sweep as its beat task
does; tests/perf/plans.py stops it at its first statement on that table."""

from collections.abc import Callable
from dataclasses import dataclass

from core import clock
from merchants.services import idempotent_requests_prune
from merchants.webhooks.delivery import webhook_events_due
from merchants.webhooks.outbox import webhook_events_purge
from trading.deposits.services.sweeps import (
    deposit_holds_due_complete,
    deposit_offers_abandon,
    deposit_offers_due,
    deposit_offers_expire,
)
from trading.services.retention import trade_events_purge
from trading.withdrawals.services.cancels import (
    withdrawal_auto_cancels_due,
    withdrawal_cancels_pending,
)
from trading.withdrawals.services.sweeps import (
    withdrawal_holds_due_complete,
    withdrawal_purchases_due,
)


@dataclass(frozen=True)
class Sweep:
    name: str
    run: Callable[[], object]
    table: str
    index: str


def _now(purge: Callable[..., int]) -> Callable[[], int]:
    """A purge as its beat task runs it: up to the service clock's now."""

    def run() -> int:
        return purge(now=clock.now())

    run.__name__ = purge.__name__
    return run


TRADE, ITEM, OUTBOX = "trading_trade", "trading_tradeitem", "merchants_webhookevent"
SWEEPS = [
    Sweep("outbox due (webhook_events_due)", webhook_events_due, OUTBOX, "webhook_event_due"),
    Sweep("autoCancel due", withdrawal_auto_cancels_due, TRADE, "trade_auto_cancel_live"),
    Sweep("cancels left pending", withdrawal_cancels_pending, ITEM, "trade_item_in_flight"),
    Sweep("purchases lost", withdrawal_purchases_due, ITEM, "trade_item_in_flight"),
    Sweep("withdrawal holds due", withdrawal_holds_due_complete, ITEM, "trade_item_hold_due"),
    Sweep("deposit holds due", deposit_holds_due_complete, ITEM, "trade_item_hold_due"),
    Sweep("deposit offers due", deposit_offers_due, TRADE, "trade_deposit_offer_waiting"),
    Sweep("deposit offers abandoned", deposit_offers_abandon, TRADE, "trade_deposit_offer_waiting"),
    Sweep("deposit offers expired", deposit_offers_expire, TRADE, "trade_offer_expiry_due"),
    Sweep("purge: webhook events", _now(webhook_events_purge), OUTBOX, "webhook_event_ended"),
    Sweep(
        "purge: trade events",
        _now(trade_events_purge),
        "trading_tradeevent",
        "trade_event_purgeable",
    ),
    Sweep(
        "purge: idempotency keys",
        _now(idempotent_requests_prune),
        "merchants_idempotentrequest",
        "idempotent_request_expiry",
    ),
]
