from celery import shared_task

from core import clock
from merchants.ratelimits import rate_limit_windows_prune
from merchants.services import idempotent_requests_prune
from merchants.verification.selectors import verification_processes_due
from merchants.verification.services import (
    verification_notifications_prune,
    verification_process_poll,
)


@shared_task(name="merchants.prune_rate_limit_windows", time_limit=60)
def prune_rate_limit_windows() -> int:
    return rate_limit_windows_prune()


@shared_task(name="merchants.prune_idempotent_requests", time_limit=60)
def prune_idempotent_requests() -> int:
    """Idempotency keys older than 24 hours (their answers are no longer replayed)."""
    return idempotent_requests_prune(now=clock.now())


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
    return verification_notifications_prune(now=clock.now())
