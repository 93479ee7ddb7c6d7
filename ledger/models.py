"""Fundings: money entering or leaving a merchant's wallet other than by trades (contract 2.9).
A funding row mirrors its source (a crypto deposit, a crypto withdrawal or its refund, a staff
transfer between merchants) and follows its status; the wallet transfer it causes names it."""

import uuid
from datetime import timedelta
from decimal import Decimal

from django.db import models

# An INITIATED funding older than this has dropped out of the ledger.
INITIATED_VISIBLE_FOR = timedelta(hours=24)
# Staff credits and debits (wallet transfers naming the merchant) are ledger rows too, of these
# types and always of this status.
ADMIN_KINDS = ("ADMIN_CREDIT", "ADMIN_DEBIT")
ADMIN_STATUS = "POSTED"
# The tokens the service takes and pays (USDT, USDC) are USD stablecoins, credited and debited
# 1:1: the exchange rate of every funding in a token (crypto deposits, cashouts, their refunds).
USD_PER_TOKEN = Decimal("1.00")


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
    # Indexed by the ledger's (merchant, created, id) index below.
    merchant = models.ForeignKey(
        "merchants.Merchant", on_delete=models.PROTECT, related_name="fundings", db_index=False
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
            # A staff transfer between merchants is one source with a row on each side.
            models.UniqueConstraint(
                fields=["source_type", "source_id", "type", "merchant"],
                name="funding_per_source_type_and_merchant",
            ),
            # Amounts are sizes; only an internal transfer is signed (negative on the sending
            # side), as its type alone does not say which way the money went.
            models.CheckConstraint(
                condition=models.Q(amount_usd__gte=0) | models.Q(type="INTERNAL_TRANSFER"),
                name="funding_amount_not_negative",
            ),
        ]
        indexes = [
            # The ledger's newest-first page; status and type ride along so the count of a
            # merchant's rows is an index-only scan.
            models.Index(
                fields=["merchant", "-created_at", "-id"],
                include=["status", "type"],
                name="funding_merchant_newest",
            )
        ]
        permissions = [("move_money", "Can credit, debit and transfer merchant wallets")]

    def __str__(self) -> str:
        return f"{self.type} {self.id} ({self.status})"
