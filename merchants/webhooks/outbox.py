"""The outbox the domain writes to: an event stored in the transaction of the change it reports,
handed to a worker after commit. An approval's answer reaches the app that asked through the port
``core.ports.APPROVAL_SUBJECTS``, bound in that app's ``AppConfig.ready``."""

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson
from django.conf import settings

from core import clock
from core.context import current_request_id
from core.errors import DomainError
from core.handoffs import Handoff, handoff_on_commit
from core.json import dumps, iso_ms
from core.retention import Retention, retention_cutoff, rows_purge
from merchants.models import Merchant
from merchants.webhooks.models import WebhookDelivery, WebhookEvent
from merchants.webhooks.selectors import webhook_event_get

# An event written to the outbox, delivered after the commit that wrote it.
WEBHOOK_DELIVERY = Handoff("webhooks.deliver")


class Approval:
    APPROVED = "approved"
    REJECTED = "rejected"
    TIMED_OUT = "timed_out"


def webhook_payload(
    *,
    event_id: uuid.UUID,
    type: str,
    created_at: datetime,
    sequence: int,
    body_key: str,
    body: Mapping[str, Any],
) -> dict[str, Any]:
    """An event's body as it is posted: its id, type, time and sequence, and its subject under
    ``body_key`` as the API shows it. The outbox stores it; the sandbox's test events send it."""
    return {
        "id": str(event_id),
        "type": type,
        "createdAt": iso_ms(created_at),
        "sequence": sequence,
        body_key: orjson.loads(dumps(body)),
    }


def webhook_event_emit(
    *,
    merchant: Merchant,
    type: str,
    subject_type: str,
    subject_id: str,
    sequence: int,
    body_key: str,
    body: Mapping[str, Any],
    is_approval: bool = False,
) -> WebhookEvent:
    """Store an event in the caller's transaction; it is delivered after commit, its attempts
    logged under the id of the request (or task) that emitted it."""
    now = clock.now()
    event_id = uuid.uuid4()
    payload = webhook_payload(
        event_id=event_id,
        type=type,
        created_at=now,
        sequence=sequence,
        body_key=body_key,
        body=body,
    )
    event = WebhookEvent.objects.create(
        id=event_id,
        merchant=merchant,
        type=type,
        subject_type=subject_type,
        subject_id=subject_id,
        sequence=sequence,
        payload=payload,
        is_approval=is_approval,
        created_at=now,
        next_attempt_at=now,
        request_id=_causing_request(),
    )
    handoff_on_commit(WEBHOOK_DELIVERY, str(event_id))
    return event


def _causing_request() -> str:
    request_id = current_request_id()
    return "" if request_id == "-" else request_id


def merchant_webhook_event_resend(*, merchant: Merchant, event_id: str) -> WebhookEvent:
    """One of the merchant's own events goes out again (``webhook_event_resend``)."""
    event = webhook_event_get(merchant=merchant, event_id=event_id)
    if event is None:
        raise DomainError("WEBHOOK_EVENT_NOT_FOUND")
    return webhook_event_resend(event=event)


def webhook_event_resend(*, event: WebhookEvent) -> WebhookEvent:
    """A failed or delivered event goes out again, same id and body, with a fresh retry budget
    (``attempts`` counts this round; delivery rows keep numbering on)."""
    if event.is_approval:
        raise DomainError("INVALID_TRANSITION", "Approval callbacks cannot be re-sent.")
    now = clock.now()
    reopened = (
        WebhookEvent.objects.filter(pk=event.pk)
        .exclude(status=WebhookEvent.Status.PENDING)
        .update(
            status=WebhookEvent.Status.PENDING,
            attempts=0,
            next_attempt_at=now,
            lease_until=None,
            delivered_at=None,
            last_error="",
        )
    )
    if not reopened:
        raise DomainError("INVALID_TRANSITION", "The event is still being delivered.")
    handoff_on_commit(WEBHOOK_DELIVERY, str(event.pk))
    event.refresh_from_db()
    return event


# Events whose delivery has ended (the partial index ``webhook_event_ended``), with their
# attempts. A pending event is never purged, however old: it is still owed to the merchant.
ENDED_EVENTS = Retention(
    model=WebhookEvent,
    column="created_at",
    condition="t.status IN ('delivered', 'failed')",
    children=[(WebhookDelivery, "event")],
)


def webhook_events_purge(*, now: datetime) -> int:
    """Delivered and given-up events older than ``RETENTION_WEBHOOK_EVENTS_DAYS``, and their
    attempts: they can no longer be listed or re-sent."""
    cutoff = retention_cutoff(now=now, days=settings.RETENTION_WEBHOOK_EVENTS_DAYS)
    return 0 if cutoff is None else rows_purge(ENDED_EVENTS, before=cutoff)
