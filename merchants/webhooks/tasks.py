"""The outbox's Celery tasks: one delivery per event id, and the sweep that re-drives due
events a lost task left. Imported by ``MerchantsConfig.ready``, which registers the hand-off of
new events to a worker: an event emitted by a delivery task itself (the ``trade.pending`` of an
approved withdrawal) is delivered by that task once its own work is done, without a task of its
own (``handoffs_followed``)."""

from celery import shared_task

from core import clock
from core.handoffs import enqueue, handoff_follow, handoff_register, handoffs_followed
from merchants.webhooks.delivery import webhook_event_deliver, webhook_events_due
from merchants.webhooks.outbox import WEBHOOK_DELIVERY, webhook_events_purge


# The limits hold an attempt (10 s at most, whatever the receiver drips) and the work an
# approval makes due that the task then does itself (a purchase: trading.withdrawal_purchase's
# 120 s; then the event the answer emitted, one more attempt). Past the soft limit what is left
# is the sweeps'.
@shared_task(name="webhooks.deliver", acks_late=True, time_limit=180, soft_time_limit=165)
def deliver_webhook(event_id: str) -> None:
    with handoffs_followed():
        webhook_event_deliver(event_id=event_id)


@shared_task(name="webhooks.sweep", time_limit=60)
def sweep_webhooks() -> int:
    due = webhook_events_due()
    for event_id in due:
        deliver_webhook.delay(event_id)
    return len(due)


# A run purges for RETENTION_RUN_SECONDS at most (core.retention), well within its limits.
@shared_task(name="webhooks.purge_ended", queue="celery", time_limit=120, soft_time_limit=90)
def purge_ended_webhooks() -> int:
    return webhook_events_purge(now=clock.now())


def _enqueue_delivery(event_id: str) -> None:
    if not handoff_follow(lambda: webhook_event_deliver(event_id=event_id), after_the_rest=True):
        enqueue(deliver_webhook, event_id)


handoff_register(WEBHOOK_DELIVERY, _enqueue_delivery)
