"""The outbox's Celery tasks: one delivery per event id, and the sweep that re-drives due
events a lost task left. ``MerchantsConfig.ready`` binds the hand-off of new events to a worker
(``enqueue_delivery``): an event emitted by a delivery task itself (the ``trade.pending`` of an
approved withdrawal) is delivered by that task once its own delivery is done, without a task of
its own (``handoffs_followed``). Other work the answer made due goes to tasks of its own."""

from celery import shared_task

from core import clock
from core.handoffs import enqueue, handoff_follow, handoffs_followed
from merchants.webhooks.delivery import webhook_event_deliver, webhook_events_due
from merchants.webhooks.outbox import webhook_events_purge


# The limits hold an attempt (10 s at most, whatever the receiver drips) and the deliveries the
# task then does itself (the event an approval's answer emitted, a waiting event of the same
# merchant: one attempt each). Past the soft limit what is left is the sweep's.
@shared_task(name="webhooks.deliver", acks_late=True, time_limit=60, soft_time_limit=45)
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


def enqueue_delivery(event_id: str) -> None:
    if not handoff_follow(lambda: webhook_event_deliver(event_id=event_id)):
        enqueue(deliver_webhook, event_id)
