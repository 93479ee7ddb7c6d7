from celery import shared_task

from config.celery import enqueue
from core import clock
from merchants.ratelimits import rate_limit_windows_prune
from merchants.verification.selectors import verification_processes_due
from merchants.verification.services import verification_process_poll
from merchants.webhooks import delivery_scheduler, webhook_event_deliver, webhook_events_due


@shared_task(name="merchants.prune_rate_limit_windows", time_limit=60)
def prune_rate_limit_windows() -> int:
    return rate_limit_windows_prune()


@shared_task(name="webhooks.deliver", acks_late=True, time_limit=60, soft_time_limit=45)
def deliver_webhook(event_id: str) -> None:
    webhook_event_deliver(event_id=event_id)


@shared_task(name="webhooks.sweep", time_limit=60)
def sweep_webhooks() -> int:
    due = webhook_events_due()
    for event_id in due:
        deliver_webhook.delay(event_id)
    return len(due)


def _enqueue_delivery(event_id: str) -> None:
    enqueue(deliver_webhook, event_id)


delivery_scheduler(_enqueue_delivery)


@shared_task(name="merchants.poll_verification", acks_late=True, time_limit=60)
def poll_verification(process_id: str) -> None:
    verification_process_poll(process_id=process_id)


@shared_task(name="merchants.sweep_verifications", time_limit=60)
def sweep_verifications() -> int:
    due = verification_processes_due(now=clock.now())
    for process_id in due:
        poll_verification.delay(str(process_id))
    return len(due)
