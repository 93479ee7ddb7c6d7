"""Fundings: money entering or leaving a merchant's wallet other than by trades (contract 2.9).
A funding row mirrors its source (a crypto deposit, a crypto withdrawal or its refund, a staff
transfer between merchants) and follows its status; the wallet transfer it causes names it."""

import uuid
from decimal import Decimal

from django.db import models


class Funding(models.Model):
    class Type(models.TextChoices):
        DEPOSIT = "DEPOSIT"
        WITHDRAWAL = "WITHDRAWAL"
        REFUND = "REFUND"
        INTERNAL_TRANSFER = "INTERNAL_TRANSFER"

    class Status(models.TextChoices):
        INITIATED = "INITIATED"
        PENDING = "PENDING"
        PENDING_ADMIN = "PENDING_ADMIN"
        APPROVED = "APPROVED"
        REJECTED = "REJECTED"
        COMPLETED = "COMPLETED"
        FAILED = "FAILED"
        CANCELLED = "CANCELLED"
        REFUNDED = "REFUNDED"
        EXPIRED = "EXPIRED"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    merchant = models.ForeignKey(
        "merchants.Merchant", on_delete=models.PROTECT, related_name="fundings"
    )
    type = models.CharField(max_length=20, choices=Type.choices)
    status = models.CharField(max_length=16, choices=Status.choices)
    amount_usd = models.DecimalField(max_digits=14, decimal_places=2)
    amount_crypto = models.DecimalField(max_digits=30, decimal_places=6, default=Decimal(0))
    token = models.CharField(max_length=8, blank=True)
    chain = models.CharField(max_length=8, blank=True)
    fee = models.DecimalField(max_digits=14, decimal_places=2, default=Decimal(0))
    address = models.CharField(max_length=100, blank=True)
    txn_hash = models.CharField(max_length=100, blank=True)
    # What the funding mirrors: ("crypto_deposit", id), ("crypto_withdrawal", id), ...
    source_type = models.CharField(max_length=40)
    source_id = models.CharField(max_length=64)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["source_type", "source_id", "type"], name="funding_per_source_and_type"
            ),
            models.CheckConstraint(
                condition=models.Q(amount_usd__gte=0), name="funding_amount_not_negative"
            ),
        ]
        indexes = [models.Index(fields=["merchant", "-created_at", "-id"])]

    def __str__(self) -> str:
        return f"{self.type} {self.id} ({self.status})"
