"""The verdict sweep and the pruning of the provider's notifications (registered by
``MerchantsConfig.ready``; beat names them ``merchants.*``)."""

from celery import shared_task

from core import clock
from merchants.verification.selectors import verification_processes_due
from merchants.verification.services import (
    verification_notifications_prune,
    verification_process_poll,
)


@shared_task(name="merchants.poll_verification", acks_late=True, time_limit=60)
def poll_verification(process_id: str) -> None:
    verification_process_poll(process_id=process_id)


@shared_task(name="merchants.sweep_verifications", time_limit=60)
def sweep_verifications() -> int:
    due = verification_processes_due(now=clock.now())
    for process_id in due:
        poll_verification.delay(str(process_id))
    return len(due)


@shared_task(name="merchants.prune_identity_notifications", time_limit=60)
def prune_identity_notifications() -> int:
    return verification_notifications_prune(now=clock.real_now())
