import uuid
from datetime import datetime
from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q


class Merchant(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        DISABLED = "disabled"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    is_verified = models.BooleanField(
        default=False, help_text="Verified merchants get the higher rate-limit tier."
    )
    withdraw_fee_rate = models.DecimalField(
        max_digits=5,
        decimal_places=4,
        default=Decimal("0.0500"),
        validators=[MinValueValidator(Decimal(0)), MaxValueValidator(Decimal("0.9999"))],
        help_text="Added to sourcing prices: withdraw price = listing x (1 + fee).",
    )
    deposit_margin_rate = models.DecimalField(
        max_digits=5,
        decimal_places=4,
        default=Decimal("0.1000"),
        validators=[MinValueValidator(Decimal(0)), MaxValueValidator(Decimal("0.9999"))],
        help_text="Kept on deposits: deposit price = reference x (1 - margin).",
    )
    instant_deposits_enabled = models.BooleanField(default=False)
    risk_policy = models.JSONField(
        default=dict,
        blank=True,
        help_text='Overrides of the client collateral model, e.g. {"cap_kyc3": 8000}.',
    )
    callback_url = models.URLField(max_length=500, blank=True)
    callback_disabled_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Set when the URL answered 410 Gone; saving a URL clears it.",
    )
    # whsec_ and 24 to 64 bytes in base64 (Standard Webhooks' sizes): up to 94 characters.
    webhook_secret = models.CharField(max_length=100, help_text="whsec_..., signs webhooks.")
    # A rotation's old secret, signing beside the new one until it expires.
    previous_webhook_secret = models.CharField(max_length=100, blank=True)
    previous_webhook_secret_expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(withdraw_fee_rate__gte=0, withdraw_fee_rate__lt=1),
                name="merchant_fee_rate_range",
            ),
            models.CheckConstraint(
                condition=Q(deposit_margin_rate__gte=0, deposit_margin_rate__lt=1),
                name="merchant_margin_rate_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"

    @property
    def is_active(self) -> bool:
        return self.status == self.Status.ACTIVE

    @property
    def has_active_callback(self) -> bool:
        return bool(self.callback_url) and self.callback_disabled_at is None


class Scope(models.TextChoices):
    CORE_ACCESS = "CORE_ACCESS"
    LEDGER_READ = "LEDGER_READ"


class ApiKey(models.Model):
    """Only a SHA-256 of the key is stored; the visible prefix finds the row."""

    MERCHANT_PREFIX = "tsk_"
    ADMIN_PREFIX = "tsa_"
    PREFIX_LENGTH = 16

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, blank=True)
    is_admin = models.BooleanField(
        default=False, help_text="Staff key acting for the merchant; refused on the ledger."
    )
    prefix = models.CharField(max_length=PREFIX_LENGTH, unique=True, editable=False)
    key_hash = models.CharField(max_length=64, editable=False)
    scopes = models.JSONField(default=list)
    ip_whitelist = models.JSONField(
        default=list, blank=True, help_text="CIDRs allowed to use the key; empty allows any."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when the key is rotated: refused from then on."
    )
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.prefix}... ({self.merchant.name})"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    def has_expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now


class ApiSecret(models.Model):
    """Signs client tokens. Rotation keeps the old secret valid for a grace period."""

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="api_secrets")
    secret = models.CharField(max_length=128, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text="Empty: signs new tokens. Set: verifies until then."
    )

    class Meta:
        verbose_name = "API secret"
        indexes = [models.Index(fields=["merchant", "-created_at"])]

    def __str__(self) -> str:
        return f"secret {self.pk} of {self.merchant_id}"


class Client(models.Model):
    """A merchant's end user, with the risk data of its latest authentication."""

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="clients")
    platform_id = models.CharField(max_length=17)
    trade_url = models.CharField(max_length=200)
    client_id = models.CharField(max_length=128, blank=True)
    total_wager = models.DecimalField(max_digits=16, decimal_places=2, default=Decimal(0))
    kyc_level = models.PositiveSmallIntegerField(default=0)
    fiat_deposits = models.BooleanField(default=False)
    crypto_deposits = models.BooleanField(default=False)
    registration_date = models.DateTimeField(null=True, blank=True)
    kyc_hash = models.CharField(max_length=256, blank=True)
    identity = models.ForeignKey(
        "VerifiedIdentity",  # merchants/verification/models.py
        on_delete=models.RESTRICT,
        null=True,
        blank=True,
        related_name="clients",
        help_text="The verified person this platform account belongs to.",
    )
    identity_linked_at = models.DateTimeField(null=True, blank=True)
    verification_level = models.PositiveSmallIntegerField(
        default=0,
        help_text="Granted by identity verification; authentication never lowers it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["merchant", "platform_id"], name="client_unique"),
        ]
        indexes = [
            models.Index(
                fields=["merchant", "kyc_hash"], name="client_kyc_hash", condition=~Q(kyc_hash="")
            )
        ]

    def __str__(self) -> str:
        return f"{self.platform_id} @ {self.merchant_id}"

    @property
    def effective_kyc_level(self) -> int:
        """The KYC level risk decisions use: the merchant's ``kycLevel``, raised to the level
        the service's own identity verification granted."""
        return max(self.kyc_level, self.verification_level)


class RateLimitWindow(models.Model):
    """Fixed-window request counters, used only when no Redis is configured."""

    key = models.CharField(max_length=200)
    slot = models.BigIntegerField()
    hits = models.PositiveIntegerField(default=0)
    expires_at = models.BigIntegerField(help_text="Unix time the window ends.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["key", "slot"], name="ratelimit_window")]
        indexes = [models.Index(fields=["expires_at"])]

    def __str__(self) -> str:
        return f"{self.key}@{self.slot}: {self.hits}"


class IdempotentRequest(models.Model):
    """A POST sent with an ``Idempotency-Key``: claimed while it runs (``lease_until``), then
    the answer it got, replayed to every retry with the same key and body until ``expires_at``
    (docs/decisions.md, "Idempotency-Key"). One row per merchant, caller and key: the merchant
    itself (``caller`` empty) and each client token's account (its platform id) have keys of
    their own."""

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="+")
    caller = models.CharField(max_length=32, blank=True)
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of method, path and body.")
    claim = models.UUIDField(help_text="The running request that holds the key.")
    lease_until = models.DateTimeField(
        null=True, blank=True, help_text="While running: another request may take it after this."
    )
    request_id = models.CharField(max_length=128, help_text="The requestId of the first answer.")
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    body = models.BinaryField(null=True, blank=True)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["merchant", "caller", "key"], name="idempotent_request_key"
            )
        ]
        indexes = [models.Index(fields=["expires_at"], name="idempotent_request_expiry")]

    def __str__(self) -> str:
        return f"{self.key} ({self.status_code or 'running'})"
