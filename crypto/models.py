"""Deposit addresses, Solana token accounts, crypto deposits and cashouts.

A deposit or cashout row is the state; ``next_sequence`` numbers its webhooks. Cashouts keep in
``locked`` what they hold of the merchant's locked balance (the wallet invariant counts it).
"""

import uuid
from decimal import Decimal

from django.db import models
from django.db.models import Q

CHAIN_CHOICES = [("ETH", "ETH"), ("BSC", "BSC"), ("SOL", "SOL")]
TOKEN_CHOICES = [("USDT", "USDT"), ("USDC", "USDC")]


class AddressAllocation(models.Model):
    """One per (merchant, end user). Its id is the index in the HD tree, so no two users, of
    any merchant, ever share an address."""

    merchant = models.ForeignKey(
        "merchants.Merchant", on_delete=models.PROTECT, related_name="address_allocations"
    )
    platform_id = models.CharField(max_length=17)
    evm_address = models.CharField(max_length=42, unique=True, null=True, blank=True)
    solana_owner = models.CharField(max_length=44, unique=True, null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "platform_id"], name="address_allocation_per_user"
            )
        ]
        permissions = [("sweep_address", "Can sweep a deposit address to the hot wallet")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.platform_id} @ {self.merchant_id}"


class SolanaTokenAccount(models.Model):
    """A user's associated token account for one token: opened on request, closed once a
    completed deposit emptied it."""

    class Status(models.TextChoices):
        PENDING = "pending"
        ACTIVE = "active"
        CLOSED = "closed"

    allocation = models.ForeignKey(
        AddressAllocation, on_delete=models.PROTECT, related_name="token_accounts"
    )
    token = models.CharField(max_length=8, choices=TOKEN_CHOICES)
    mint = models.CharField(max_length=44)
    address = models.CharField(max_length=44, unique=True)
    status = models.CharField(max_length=8, choices=Status.choices)
    open_requested_at = models.DateTimeField(
        null=True, blank=True, help_text="When the chain took the request to open it."
    )
    close_pending = models.BooleanField(
        default=False, help_text="Closed here; the chain still has to sweep and close it."
    )
    opened_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["allocation", "token"], name="solana_token_account_per_token"
            )
        ]
        indexes = [
            models.Index(
                fields=["status"],
                condition=Q(status="pending") | Q(close_pending=True),
                name="solana_account_work",
            )
        ]

    def __str__(self) -> str:
        return f"{self.token} {self.address} ({self.status})"


class ChainLock(models.Model):
    """One row per chain, locked to serialize service-wide checks (Solana account capacity)."""

    chain = models.CharField(max_length=8, primary_key=True, choices=CHAIN_CHOICES)

    def __str__(self) -> str:
        return self.chain


class MerchantCryptoPolicy(models.Model):
    """Per-merchant review thresholds; empty fields take the service defaults (settings)."""

    merchant = models.OneToOneField(
        "merchants.Merchant",
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="crypto_policy",
    )
    deposit_review_above_cents = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Deposits above this are frozen for staff review."
    )
    withdraw_review_above_cents = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Cashouts above this wait for staff approval."
    )

    class Meta:
        verbose_name = "merchant crypto policy"
        verbose_name_plural = "merchant crypto policies"

    def __str__(self) -> str:
        return f"crypto policy of {self.merchant_id}"


class FlaggedAddress(models.Model):
    """Senders staff flagged: their deposits are frozen for review."""

    address = models.CharField(max_length=100, unique=True)
    reason = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "flagged addresses"

    def __str__(self) -> str:
        return self.address


class CryptoDeposit(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        COMPLETED = "completed"
        BELOW_MINIMUM = "below_minimum"
        FROZEN = "frozen"
        REFUNDED = "refunded"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    merchant = models.ForeignKey(
        "merchants.Merchant", on_delete=models.PROTECT, related_name="crypto_deposits"
    )
    allocation = models.ForeignKey(
        AddressAllocation, on_delete=models.PROTECT, related_name="deposits"
    )
    platform_id = models.CharField(max_length=17)
    chain = models.CharField(max_length=8, choices=CHAIN_CHOICES)
    token = models.CharField(max_length=8, choices=TOKEN_CHOICES)
    address = models.CharField(max_length=44, help_text="The deposit address shown to the user.")
    token_account = models.CharField(max_length=44, blank=True)
    tx_hash = models.CharField(max_length=100)
    event_index = models.PositiveIntegerField(
        default=0,
        help_text="The transfer's place in its transaction (EVM: the log index); one "
        "transaction can pay several addresses.",
    )
    from_address = models.CharField(max_length=100, blank=True)
    amount_crypto = models.DecimalField(max_digits=40, decimal_places=18)
    amount_usd = models.DecimalField(max_digits=14, decimal_places=2)
    confirmations = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices)
    review_reason = models.CharField(max_length=200, blank=True)
    next_sequence = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["chain", "tx_hash", "event_index"], name="crypto_deposit_per_transfer"
            ),
            models.CheckConstraint(
                condition=Q(amount_usd__gte=0), name="crypto_deposit_amount_not_negative"
            ),
        ]
        indexes = [
            models.Index(fields=["merchant", "platform_id", "-created_at"]),
            models.Index(fields=["status"], condition=Q(status="pending"), name="deposit_pending"),
        ]

    def __str__(self) -> str:
        return f"deposit {self.id} ({self.status})"

    @property
    def amount_cents(self) -> int:
        return int(self.amount_usd * 100)


# Cashouts waiting for the merchant's approval, staff's review or their broadcast.
CASHOUT_WAITING = ("awaiting_approval", "in_review", "approved")


class CryptoWithdrawal(models.Model):
    class Status(models.TextChoices):
        AWAITING_APPROVAL = "awaiting_approval"
        IN_REVIEW = "in_review"
        APPROVED = "approved"
        SENT = "sent"
        COMPLETED = "completed"
        FAILED = "failed"
        REJECTED = "rejected"
        CANCELLED = "cancelled"

    class Source(models.TextChoices):
        CLIENT = "client"
        SELF = "self"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    merchant = models.ForeignKey(
        "merchants.Merchant", on_delete=models.PROTECT, related_name="crypto_withdrawals"
    )
    platform_id = models.CharField(max_length=17)
    source = models.CharField(max_length=8, choices=Source.choices)
    request_id = models.CharField(max_length=64)
    chain = models.CharField(max_length=8, choices=CHAIN_CHOICES)
    token = models.CharField(max_length=8, choices=TOKEN_CHOICES)
    address = models.CharField(max_length=44)
    amount_cents = models.PositiveBigIntegerField()
    fee_cents = models.PositiveIntegerField()
    receive_cents = models.PositiveBigIntegerField()
    locked = models.DecimalField(
        max_digits=14, decimal_places=2, help_text="What it holds of the locked balance now."
    )
    status = models.CharField(max_length=20, choices=Status.choices)
    reason = models.CharField(max_length=40, blank=True)
    reason_detail = models.CharField(max_length=200, blank=True)
    tx_hash = models.CharField(max_length=100, blank=True)
    confirmations = models.PositiveIntegerField(default=0)
    broadcast_attempts = models.PositiveSmallIntegerField(default=0)
    next_broadcast_at = models.DateTimeField(
        null=True, blank=True, help_text="Deadline of the broadcast sweep (approved only)."
    )
    next_sequence = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "platform_id", "request_id"],
                name="crypto_withdrawal_request_per_user",
            ),
            models.CheckConstraint(
                condition=Q(amount_cents__gt=0, receive_cents__gt=0, locked__gte=0),
                name="crypto_withdrawal_amounts",
            ),
        ]
        indexes = [
            models.Index(fields=["merchant", "platform_id", "-created_at"]),
            models.Index(
                fields=["next_broadcast_at"],
                condition=Q(status="approved"),
                name="withdrawal_broadcast_due",
            ),
            models.Index(fields=["status"], condition=Q(status="sent"), name="withdrawal_sent"),
            # Cashouts waiting for a decision or their broadcast, oldest first (the console's
            # home counts them by state).
            models.Index(
                fields=["status", "created_at"],
                condition=Q(status__in=CASHOUT_WAITING),
                name="withdrawal_waiting",
            ),
        ]

    def __str__(self) -> str:
        return f"cashout {self.id} ({self.status})"

    @property
    def amount(self) -> Decimal:
        return Decimal(self.amount_cents) / 100
