"""Thin Celery tasks: take ids, call a service. Periodic sweeps re-drive what a lost task left."""

from celery import shared_task

from trading.sandbox.autopilot import sandbox_autopilot_step
from trading.services.cancels import (
    withdrawal_auto_cancels_due,
    withdrawal_cancels_complete,
    withdrawal_cancels_pending,
)
from trading.services.fulfilment import withdrawal_fulfil
from trading.services.sweeps import (
    withdrawal_holds_due_complete,
    withdrawal_purchases_due,
)


@shared_task(name="trading.withdrawal_purchase", acks_late=True, time_limit=120)
def purchase_withdrawal(trade_id: str) -> None:
    withdrawal_fulfil(trade_id=trade_id)


def enqueue_purchase(trade_id: str) -> None:
    purchase_withdrawal.delay(trade_id)


@shared_task(name="trading.sweep_purchases", time_limit=120)
def sweep_purchases() -> int:
    due = withdrawal_purchases_due()
    for trade_id in due:
        enqueue_purchase(trade_id)
    return len(due)


@shared_task(name="trading.sweep_holds", time_limit=120)
def sweep_holds() -> int:
    return withdrawal_holds_due_complete()


@shared_task(name="trading.complete_cancels", acks_late=True, time_limit=60)
def complete_cancels(trade_id: str) -> int:
    return withdrawal_cancels_complete(trade_id=trade_id)


def enqueue_cancel_completion(trade_id: str) -> None:
    complete_cancels.delay(trade_id)


@shared_task(name="trading.sweep_cancels", time_limit=120)
def sweep_cancels() -> int:
    requested = withdrawal_auto_cancels_due()
    for trade_id in withdrawal_cancels_pending():
        enqueue_cancel_completion(trade_id)
    return requested


@shared_task(name="trading.sandbox_autopilot", time_limit=60)
def sandbox_autopilot() -> int:
    return sandbox_autopilot_step()
