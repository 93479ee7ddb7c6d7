"""The tables of the outbox (app label ``merchants``, registered by
``MerchantsConfig.import_models``): one row per event and one per delivery attempt."""

import uuid

from django.db import models
from django.db.models import Q

from merchants.models import Merchant


class WebhookEvent(models.Model):
    """The outbox: one row per event, written in the transaction of the change it reports.
    ``next_attempt_at`` is the deadline the delivery sweep moves on; ``lease_until`` keeps two
    workers from delivering one event at the same time."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="webhook_events")
    type = models.CharField(max_length=64)
    subject_type = models.CharField(max_length=32)
    subject_id = models.CharField(max_length=64)
    sequence = models.PositiveIntegerField()
    payload = models.JSONField()
    is_approval = models.BooleanField(
        default=False, help_text="The merchant's answer decides the withdrawal."
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    delivered_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    request_id = models.CharField(
        max_length=128,
        blank=True,
        default="",
        help_text="The request (or task) whose change this event reports: its deliveries log "
        "under that requestId (docs/ops/logs.md).",
    )

    class Meta:
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                condition=Q(status="pending"),
                name="webhook_event_due",
            ),
            models.Index(fields=["merchant", "status", "-created_at"]),
            models.Index(fields=["subject_type", "subject_id", "sequence"]),
            # A merchant's deliveries in flight (its share is counted at each claim) and its
            # due events (handed on when one of them ends).
            models.Index(
                fields=["merchant", "lease_until"],
                condition=Q(lease_until__isnull=False),
                name="webhook_event_in_flight",
            ),
            models.Index(
                fields=["merchant", "next_attempt_at"],
                condition=Q(status="pending"),
                name="webhook_event_merchant_due",
            ),
            # Events given up on, newest first: the console's home names their merchants.
            models.Index(
                fields=["created_at", "merchant"],
                condition=Q(status="failed"),
                name="webhook_event_failed",
            ),
            # What the retention purge walks: only events whose delivery has ended.
            models.Index(
                fields=["created_at"],
                condition=Q(status__in=["delivered", "failed"]),
                name="webhook_event_ended",
            ),
        ]
        permissions = [("resend_webhook", "Can re-send a webhook event")]

    def __str__(self) -> str:
        return f"{self.type} {self.id} ({self.status})"


class WebhookDelivery(models.Model):
    """One attempt to deliver an event: what was sent where and what came back."""

    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    attempt = models.PositiveSmallIntegerField()
    url = models.URLField(max_length=500)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True)
    response_excerpt = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "webhook deliveries"
        ordering = ["event", "attempt"]

    def __str__(self) -> str:
        return f"{self.event_id} #{self.attempt}: {self.status_code or self.error}"
