"""Reads of the outbox: a merchant's events, one event, how its webhooks are doing (the staff
console) and what waits for delivery (the metrics)."""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Min, Q

from merchants.models import Merchant
from merchants.webhooks.models import WebhookDelivery, WebhookEvent


def webhook_events_list(
    *, merchant: Merchant, status: str | None, limit: int
) -> list[WebhookEvent]:
    rows = WebhookEvent.objects.filter(merchant=merchant)
    if status:
        rows = rows.filter(status=status)
    return list(rows.order_by("-created_at")[:limit])


def webhook_event_get(*, merchant: Merchant, event_id: str) -> WebhookEvent | None:
    try:
        return WebhookEvent.objects.filter(merchant=merchant, pk=uuid.UUID(event_id)).first()
    except ValueError:
        return None


@dataclass(frozen=True)
class WebhookHealth:
    """How a merchant's webhooks are doing, for staff: what waits, what was given up, the newest
    delivered event and the newest attempt that did not get a 2xx answer."""

    pending: int
    failed: int
    oldest_pending_at: datetime | None
    last_delivered_at: datetime | None
    last_failure: WebhookDelivery | None


def webhook_health_get(*, merchant: Merchant) -> WebhookHealth:
    events = WebhookEvent.objects.filter(merchant=merchant)
    counts = dict(
        events.filter(status__in=[WebhookEvent.Status.PENDING, WebhookEvent.Status.FAILED])
        .values_list("status")
        .annotate(rows=Count("id"))
        .order_by()
    )
    pending = events.filter(status=WebhookEvent.Status.PENDING).order_by("created_at")
    # The newest delivered event (the (merchant, status, created) index finds it at once).
    delivered = events.filter(status=WebhookEvent.Status.DELIVERED).order_by("-created_at")
    answered = Q(status_code__gte=200, status_code__lt=300)
    failures = WebhookDelivery.objects.filter(event__merchant=merchant).exclude(answered)
    return WebhookHealth(
        pending=counts.get(WebhookEvent.Status.PENDING, 0),
        failed=counts.get(WebhookEvent.Status.FAILED, 0),
        oldest_pending_at=pending.values_list("created_at", flat=True).first(),
        last_delivered_at=delivered.values_list("delivered_at", flat=True).first(),
        last_failure=failures.select_related("event").order_by("-created_at", "-id").first(),
    )


@dataclass(frozen=True)
class OutboxBacklog:
    is_approval: bool
    pending: int
    oldest_created_at: datetime | None


def webhook_outbox_backlog() -> list[OutboxBacklog]:
    """Undelivered events, approvals apart from the rest: how many, and since when the oldest
    waits. Reads only pending rows (the partial index ``webhook_event_due`` holds them)."""
    rows = (
        WebhookEvent.objects.filter(status=WebhookEvent.Status.PENDING)
        .values("is_approval")
        .annotate(pending=Count("id"), oldest=Min("created_at"))
        .order_by()
    )
    found = {row["is_approval"]: row for row in rows}
    return [
        OutboxBacklog(
            is_approval=kind,
            pending=found[kind]["pending"] if kind in found else 0,
            oldest_created_at=found[kind]["oldest"] if kind in found else None,
        )
        for kind in (True, False)
    ]
