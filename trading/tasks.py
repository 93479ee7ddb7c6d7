"""Thin Celery tasks: take ids, call a service. Periodic sweeps re-drive what a lost task left.
``TradingConfig.ready`` binds the ``enqueue_*`` functions to the hand-offs they serve."""

from celery import shared_task

from core import clock
from core.handoffs import enqueue
from trading.deposits.services.offers import deposit_offer_send
from trading.deposits.services.sweeps import (
    deposit_holds_due_complete,
    deposit_offers_abandon,
    deposit_offers_due,
    deposit_offers_expire,
)
from trading.marketplace.suppliers.clients import supplier_names
from trading.services.offers import offer_pollers, offers_poll
from trading.services.retention import trade_events_purge
from trading.services.suppliers import (
    supplier_balances_check,
    supplier_listings_poll,
    supplier_orders_follow,
)
from trading.withdrawals.services.cancels import (
    withdrawal_auto_cancels_due,
    withdrawal_cancels_complete,
    withdrawal_cancels_pending,
)
from trading.withdrawals.services.deliveries import (
    withdrawal_deliveries_due,
    withdrawal_deliveries_send,
)
from trading.withdrawals.services.fulfilment import withdrawal_fulfil
from trading.withdrawals.services.sweeps import (
    withdrawal_holds_due_complete,
    withdrawal_purchases_due,
)


# What an approval made due: the marketplace's purchase of each approved item (a quick
# withdrawal's fill). Past the limit what is left is the purchase sweep's.
@shared_task(name="trading.withdrawal_purchase", acks_late=True, time_limit=120)
def purchase_withdrawal(trade_id: str) -> None:
    withdrawal_fulfil(trade_id=trade_id)


def enqueue_purchase(trade_id: str) -> None:
    """A task of its own, with its own limit, even after the approval's delivery task: followed
    there (``handoffs_followed``) it would run under that task's limit."""
    enqueue(purchase_withdrawal, trade_id)


@shared_task(name="trading.sweep_purchases", time_limit=120)
def sweep_purchases() -> int:
    due = withdrawal_purchases_due()
    for trade_id in due:
        enqueue_purchase(trade_id)
    return len(due)


@shared_task(name="trading.sweep_holds", time_limit=120)
def sweep_holds() -> int:
    return withdrawal_holds_due_complete() + deposit_holds_due_complete()


@shared_task(name="trading.deposit_offer", acks_late=True, time_limit=120)
def send_deposit_offer(trade_id: str) -> None:
    deposit_offer_send(trade_id=trade_id)


def enqueue_deposit_offer(trade_id: str) -> None:
    enqueue(send_deposit_offer, trade_id)


@shared_task(name="trading.sweep_deposit_offers", time_limit=120)
def sweep_deposit_offers() -> int:
    """Retry offers the platform could not make, give up on old ones, expire ignored ones."""
    ended = deposit_offers_abandon() + deposit_offers_expire()
    due = deposit_offers_due()
    for trade_id in due:
        enqueue_deposit_offer(trade_id)
    return ended + len(due)


@shared_task(name="trading.complete_cancels", acks_late=True, time_limit=60)
def complete_cancels(trade_id: str) -> int:
    return withdrawal_cancels_complete(trade_id=trade_id)


def enqueue_cancel_completion(trade_id: str) -> None:
    enqueue(complete_cancels, trade_id)


@shared_task(name="trading.sweep_cancels", time_limit=120)
def sweep_cancels() -> int:
    requested = withdrawal_auto_cancels_due()
    for trade_id in withdrawal_cancels_pending():
        enqueue_cancel_completion(trade_id)
    return requested


@shared_task(name="trading.suppliers_poll", time_limit=120)
def poll_suppliers() -> int:
    """The next slice of every supplier's listings into the market."""
    return sum(supplier_listings_poll(name=name) for name in supplier_names())


@shared_task(name="trading.suppliers_follow", time_limit=120)
def follow_supplier_orders() -> int:
    return supplier_orders_follow()


@shared_task(name="trading.suppliers_balances", time_limit=60)
def check_supplier_balances() -> int:
    return supplier_balances_check()


@shared_task(name="trading.deliver_withdrawal", acks_late=True, time_limit=120)
def deliver_withdrawal(trade_id: str) -> int:
    """The bots offer the trade's items they hold to the recipient."""
    return withdrawal_deliveries_send(trade_id=trade_id)


def enqueue_delivery(trade_id: str) -> None:
    enqueue(deliver_withdrawal, trade_id)


@shared_task(name="trading.sweep_deliveries", time_limit=120)
def sweep_deliveries() -> int:
    """Deliveries due: items arrived or held, retries after a transient failure, and rows a
    dead worker's claim left."""
    due = withdrawal_deliveries_due()
    for trade_id in due:
        enqueue_delivery(trade_id)
    return len(due)


@shared_task(name="trading.poll_offers", time_limit=60)
def poll_offers() -> int:
    """Beat: one polling task per bot (none in the sandbox)."""
    pollers = offer_pollers()
    for poller in pollers:
        enqueue(poll_bot_offers, poller)
    return len(pollers)


@shared_task(name="trading.poll_bot_offers", acks_late=True, time_limit=120)
def poll_bot_offers(poller: str) -> int:
    return offers_poll(poller=poller)


# A run purges for RETENTION_RUN_SECONDS at most (core.retention), well within its limits.
@shared_task(name="trading.purge_trade_events", queue="celery", time_limit=120, soft_time_limit=90)
def purge_trade_events() -> int:
    return trade_events_purge(now=clock.now())
