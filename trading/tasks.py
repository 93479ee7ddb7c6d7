"""Thin Celery tasks: take ids, call a service. Periodic sweeps re-drive what a lost task left."""

from celery import shared_task

from trading.services.sweeps import (
    withdrawal_holds_due_complete,
    withdrawal_purchases_due,
)
from trading.services.withdrawals import withdrawal_purchase


@shared_task(name="trading.withdrawal_purchase", acks_late=True, time_limit=120)
def purchase_withdrawal(trade_id: str) -> None:
    withdrawal_purchase(trade_id=trade_id)


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
