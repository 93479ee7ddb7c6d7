"""Double entry: every movement is one transfer whose postings sum to zero.

Each account's ``balance`` is the running sum of its postings, updated in the same transaction as
the postings (conditionally, where a balance must not go below zero). On PostgreSQL a deferred
constraint trigger refuses to commit a transfer whose postings do not sum to zero.
"""

import uuid
from decimal import Decimal

from django.db import models
from django.db.models import Q


class Account(models.Model):
    class Kind(models.TextChoices):
        # Per merchant.
        AVAILABLE = "available", "available (spendable)"
        LOCKED = "locked", "locked (withdrawals and cashouts in flight)"
        ESCROW = "escrow", "escrow (deposit value in its hold)"
        COLLATERAL = "collateral", "collateral (merchant part of instant deposits)"
        # The service's own.
        SUPPLIER = "supplier", "supplier payables"
        DEPOSIT_ITEMS = "deposit_items", "items bought from depositors"
        REVENUE = "revenue", "service revenue"
        PROVIDER_COLLATERAL = "provider_collateral", "provider collateral"
        PROVIDER_LOSSES = "provider_losses", "provider losses"
        WORLD = "world", "outside world (crypto, staff credits and debits)"

    MERCHANT_KINDS = (Kind.AVAILABLE, Kind.LOCKED, Kind.ESCROW, Kind.COLLATERAL)

    merchant = models.ForeignKey(
        "merchants.Merchant",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="accounts",
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    currency = models.CharField(max_length=3, default="USD")
    balance = models.DecimalField(max_digits=18, decimal_places=2, default=Decimal("0.00"))
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "kind"],
                name="account_per_merchant_kind",
                condition=Q(merchant__isnull=False),
            ),
            models.UniqueConstraint(
                fields=["kind"], name="account_per_service_kind", condition=Q(merchant__isnull=True)
            ),
            # Only spendable money may go negative (a clawback that cannot be refused).
            models.CheckConstraint(
                condition=Q(kind="available") | Q(merchant__isnull=True) | Q(balance__gte=0),
                name="account_held_balance_not_negative",
            ),
        ]

    def __str__(self) -> str:
        owner = self.merchant_id or "service"
        return f"{owner}:{self.kind}"


class Transfer(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=40)
    cause_type = models.CharField(
        max_length=40, help_text="trade_item, funding, crypto_deposit, crypto_withdrawal, admin"
    )
    cause_id = models.CharField(max_length=64)
    memo = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["cause_type", "cause_id"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"


class Posting(models.Model):
    transfer = models.ForeignKey(Transfer, on_delete=models.PROTECT, related_name="postings")
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="postings")
    amount = models.DecimalField(max_digits=18, decimal_places=2)

    class Meta:
        constraints = [models.CheckConstraint(condition=~Q(amount=0), name="posting_not_zero")]
        indexes = [models.Index(fields=["account", "transfer"])]

    def __str__(self) -> str:
        return f"{self.account} {self.amount}"


class WalletCheck(models.Model):
    """One run of the wallet's invariant check (``check_wallet``, and beat's
    ``wallet.check_invariants``): when, how long it took, and what it found broken, by invariant.
    The console's home shows the newest and its age."""

    ran_at = models.DateTimeField()
    seconds = models.FloatField(help_text="how long the check took")
    is_clean = models.BooleanField("clean", help_text="every invariant held")
    problems = models.JSONField(default=dict, blank=True, help_text="{invariant: [problem, ...]}")

    class Meta:
        indexes = [models.Index(fields=["-ran_at"], name="wallet_check_newest")]

    def __str__(self) -> str:
        return f"{'clean' if self.is_clean else 'BROKEN'} at {self.ran_at:%Y-%m-%d %H:%M:%S}"
